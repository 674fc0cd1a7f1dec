/**
 * A step of the image build (Dockerfile), not of the sidecar: fills Node's
 * compile cache (the directory NODE_COMPILE_CACHE names) with V8 code for
 * every module toolgate can load, so that a sidecar started with the same
 * NODE_COMPILE_CACHE reads its modules' code instead of compiling them.
 * Start-up is mostly compiling: docs/benchmarks.md has what this saves.
 *
 * Importing almost does it: no module runs anything when imported except
 * the entry point, which is run with --version instead. What a module loads
 * only when used is loaded by using it: undici loads its HTTP parser with a
 * pool's first connection, CEL with the first grant condition, and the
 * OpenTelemetry SDK when tracing is on.
 * test/e2e/build.test.ts starts a sidecar on the cache this leaves and checks
 * that it compiled nothing more.
 *
 * Node keeps one cache per user ID: this must run as the user the sidecar
 * runs as.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cel } from './config/policy/cel.ts';
import { startOtelSdk } from './telemetry/otel-sdk.ts';
import { UpstreamPool } from './upstream/pool.ts';

const ENTRY = 'cli.js';
const NOT_IMPORTED = new Set([ENTRY, 'warm-compile-cache.js']);

if (getCompileCacheDir() === undefined) {
  process.stderr.write('warm-compile-cache: NODE_COMPILE_CACHE must name a directory Node can write\n');
  process.exit(2);
}
const modules = readdirSync(import.meta.dirname, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.js') && !NOT_IMPORTED.has(file))
  .sort();
if (modules.length === 0) {
  process.stderr.write('warm-compile-cache: no compiled modules beside it; run the one in dist/\n');
  process.exit(2);
}
for (const file of modules) await import(pathToFileURL(join(import.meta.dirname, file)).href);
await firstConnection();
cel();
await firstSpan();
flushCompileCache();
// A child of its own, with this environment and so this cache: imported here, it would start a sidecar.
const entry = spawnSync(process.execPath, [join(import.meta.dirname, ENTRY), '--version'], { stdio: 'ignore' });
if (entry.status !== 0) {
  process.stderr.write(`warm-compile-cache: ${ENTRY} --version exited ${entry.status}\n`);
  process.exit(1);
}
process.stdout.write(`warm-compile-cache: ${modules.length} modules and their dependencies\n`);

/** One request over the upstream pool to a loopback server that answers 204. */
async function firstConnection(): Promise<void> {
  const server = await onLoopback((_req, res) => res.writeHead(204).end());
  const pool = new UpstreamPool(new URL(server.origin), {}, 0);
  try {
    const res = await pool.request({ path: '/', method: 'GET' });
    await res.body.dump();
  } finally {
    await pool.close();
    server.close();
  }
}

/** The SDK as tracing starts it, one span exported over OTLP to a loopback receiver that accepts it. */
async function firstSpan(): Promise<void> {
  const receiver = await onLoopback((req, res) => req.resume().on('end', () => res.writeHead(200).end()));
  process.env.OTEL_TRACES_EXPORTER = 'otlp';
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.origin;
  try {
    const sdk = await startOtelSdk(process.env, 'warm-compile-cache');
    sdk.tracer.startSpan('warm-compile-cache').end();
    await sdk.shutdown();
  } finally {
    receiver.close();
  }
}

async function onLoopback(handler: RequestListener): Promise<{ origin: string; close(): void }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}
