/**
 * What is not configured is not loaded: a transparent or plain policy
 * sidecar must not pay (in start-up time or resident memory) for the
 * OpenTelemetry SDK, gRPC, Redis, the discovery engine, the JWT library
 * (jose) or CEL. Each case starts toolgate in a child process that records
 * every module it loads (test/helpers/loaded-modules.ts); the control cases
 * configure each feature and prove the probe sees it load.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import { startV1Server, type V1Server } from '../helpers/mcp-v1-server.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const OPTIONAL = {
  otelSdk: '/node_modules/@opentelemetry/sdk-node/',
  grpc: '/node_modules/@grpc/grpc-js/',
  protoLoader: '/node_modules/@grpc/proto-loader/',
  ioredis: '/node_modules/ioredis/',
  discoveryEngine: '/src/discovery/engine/engine.ts',
  jose: '/node_modules/jose/',
  cel: '/node_modules/@bufbuild/cel/',
} as const;
type Feature = keyof typeof OPTIONAL;

const POLICY = 'version: 1\ngrants:\n  - { principal: "*", tool: echo, scopes: [], effect: allow }\n';
/** A grant condition and a JWT issuer: what CEL and jose are loaded for. */
const WITH_CONDITION_AND_JWT =
  'version: 1\ngrants:\n  - { principal: "*", tool: echo, scopes: [], effect: allow, when: "size(args) >= 0" }\n' +
  'authentication:\n  jwt: { issuer: "https://issuer.test", audience: toolgate, jwksFile: jwks.json }\n';
const JWKS = JSON.stringify({
  keys: [
    {
      ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
      kid: 'k1',
      alg: 'ES256',
    },
  ],
});
const WITH_VALIDATOR = `${POLICY}validators:\n  - { name: v, target: "127.0.0.1:1", hooks: [{ event: tools/call, phase: request }], timeoutMs: 500 }\n`;

/** A policy file, with `beside` written next to it (name → content). */
function policyFile(text: string, beside: Readonly<Record<string, string>> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-lazy-'));
  for (const [name, content] of Object.entries(beside)) writeFileSync(join(dir, name), content);
  const file = join(dir, 'policy.yaml');
  writeFileSync(file, text);
  return file;
}

async function loadedModules(
  upstream: string,
  flags: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<string[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      join(import.meta.dirname, '..', 'helpers', 'loaded-modules.ts'),
      '--upstream',
      upstream,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--admin-port',
      '0',
      '--log-level',
      'error',
      ...flags,
    ],
    { encoding: 'utf8', timeout: 180_000, env: { PATH: process.env.PATH ?? '', ...env } },
  );
  const urls = JSON.parse(stdout.trim().split('\n').at(-1) as string) as string[];
  assert.ok(
    urls.some((u) => u.endsWith('/src/main.ts')),
    "the probe records toolgate's own modules",
  );
  return urls;
}

async function loadedFeatures(
  upstream: string,
  flags: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<Set<Feature>> {
  const urls = await loadedModules(upstream, flags, env);
  return new Set((Object.keys(OPTIONAL) as Feature[]).filter((f) => urls.some((u) => u.includes(OPTIONAL[f]))));
}

describe('optional modules load only when configured', () => {
  let upstream: V1Server;
  let redis: RedisServer;
  before(async () => {
    upstream = await startV1Server();
    redis = await startRedis();
  });
  after(async () => {
    await upstream.close();
    await redis.close();
  });

  it('transparent mode loads none of them', async () => {
    assert.deepEqual([...(await loadedFeatures(upstream.origin, []))], []);
  });

  // The undici index and Node's bundled undici each cost tens of milliseconds of start-up:
  // pool.ts loads only undici's Pool, and node:http is never imported as an ES module (http/node-http.ts).
  it("transparent mode loads neither the undici index nor Node's bundled undici", async () => {
    const urls = await loadedModules(upstream.origin, []);
    assert.ok(
      urls.some((u) => u.includes('/node_modules/undici/lib/dispatcher/pool.js')),
      "the probe sees undici's Pool load",
    );
    assert.ok(urls.includes('node:internal/http2/core'), "the probe sees Node's internal modules");
    assert.deepEqual(
      urls.filter((u) => u.endsWith('/node_modules/undici/index.js') || u === 'node:internal/deps/undici/undici'),
      [],
    );
  });

  it('a policy without validators, Redis or deferred tools loads none of them', async () => {
    assert.deepEqual([...(await loadedFeatures(upstream.origin, ['--policy-file', policyFile(POLICY)]))], []);
  });

  // The catalogue link speaks to the upstream over toolgate's own pool, without the MCP SDK client.
  it('a policy loads neither an MCP SDK nor the undici index for its catalogue link', async () => {
    const urls = await loadedModules(upstream.origin, ['--policy-file', policyFile(POLICY)]);
    assert.ok(
      urls.some((u) => u.endsWith('/src/catalogue/upstream.ts')),
      'the probe sees the catalogue link load',
    );
    assert.deepEqual(
      urls.filter(
        (u) =>
          u.includes('/node_modules/@modelcontextprotocol/') ||
          u.includes('/node_modules/zod/') ||
          u.endsWith('/node_modules/undici/index.js') ||
          u === 'node:internal/deps/undici/undici',
      ),
      [],
    );
  });

  it('each configured feature loads what it needs (the probe can see them)', async () => {
    const got = await loadedFeatures(
      upstream.origin,
      [
        '--policy-file',
        policyFile(WITH_CONDITION_AND_JWT, { 'jwks.json': JWKS }),
        '--grpc',
        'true',
        '--grpc-port',
        '0',
        '--redis-url',
        redis.url,
        '--deferred-tools',
        'true',
      ],
      { OTEL_TRACES_EXPORTER: 'console', OTEL_TRACES_SAMPLER: 'always_off' },
    );
    assert.deepEqual([...got].sort(), ['cel', 'discoveryEngine', 'grpc', 'ioredis', 'jose', 'otelSdk', 'protoLoader']);
  });

  it('an external validator in the policy loads gRPC without the gRPC API', async () => {
    const got = await loadedFeatures(upstream.origin, ['--policy-file', policyFile(WITH_VALIDATOR)]);
    assert.deepEqual([...got].sort(), ['grpc', 'protoLoader']);
  });
});
