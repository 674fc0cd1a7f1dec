/**
 * `npm run bench:tracing`: what tracing adds to one request's CPU, in
 * process, without the sockets and HTTP parsing that make the proxy bench's
 * figures swing. Each sample is a fresh process that replays the request
 * path's telemetry for a forwarded `tools/call` (the channel messages in the
 * order the handler, `read-message` and the forwarder publish them, the
 * `_meta` splice of a real body, the upstream headers) with the real OTel SDK
 * and subscriber, and reports CPU µs per request. Modes run interleaved,
 * round after round; each figure is the median over rounds of (mode − off):
 *   tracing_unsampled_us         no recording span (parentbased_traceidratio, ratio 0): trace-context propagation only
 *   tracing_unsampled_parent_us  the same with a caller's unsampled traceparent to honour
 *   tracing_sampled_us           parentbased_traceidratio 0.1, export included
 *   tracing_always_us            always_on, export included
 * Exported spans go over OTLP/HTTP to `otlp-stub.ts` (another process, not
 * counted); the queue is raised so no span is dropped and every export is
 * paid for. Knobs: BENCH_ROUNDS (7), BENCH_REQUESTS per sample (20000).
 */
import { spawn } from 'node:child_process';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/ports.ts';
import { accepts, spawnNode, waitReady } from './lib/children.ts';
import { spreadOf } from './lib/stats.ts';

const MODES = {
  off: {},
  unsampled: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  unsampled_parent: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' },
  sampled: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' },
  always: { OTEL_TRACES_SAMPLER: 'always_on' },
} as const;
type Mode = keyof typeof MODES;

const child = process.argv[2] === '--child' ? (process.argv[3] as Mode) : undefined;
if (child !== undefined) await sample(child);
else await main();

async function sample(mode: Mode): Promise<void> {
  const requests = Number(process.env.BENCH_REQUESTS ?? 20_000);
  const [channels, { announceUpstream, withMetaFields }, { classify }] = await Promise.all([
    import('../src/telemetry/channels.ts'),
    import('../src/upstream/observe.ts'),
    import('../src/mcp/classify.ts'),
  ]);
  let shutdown = async () => {};
  if (mode !== 'off') {
    const [{ startOtelSdk }, { subscribeTracing }] = await Promise.all([
      import('../src/telemetry/otel-sdk.ts'),
      import('../src/telemetry/tracing.ts'),
    ]);
    const sdk = await startOtelSdk(process.env, 'bench');
    subscribeTracing({ tracer: sdk.tracer, upstream: new URL('http://127.0.0.1:8080'), mcpPath: '/mcp' });
    shutdown = () => sdk.shutdown();
  }
  const body = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: 'quarterly revenue by region', limit: 10 } },
    }),
  );
  const classified = classify({ protocolVersion: '2025-11-25' }, body);
  if (!classified.ok) throw new Error('the bench body does not classify');
  const headers: Record<string, string> = {
    host: '127.0.0.1',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
  };
  if (mode === 'unsampled_parent') headers.traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00';
  let sent = 0;
  const one = () => {
    const request = new IncomingMessage(new Socket());
    request.method = 'POST';
    request.url = '/mcp';
    request.headers = headers;
    if (channels.requestStart.hasSubscribers) channels.requestStart.publish({ request });
    if (channels.requestClassified.hasSubscribers) channels.requestClassified.publish({ request, message: classified });
    const upstreamHeaders = ['content-type', 'application/json', 'mcp-protocol-version', '2025-11-25'];
    const timing = announceUpstream(request, upstreamHeaders);
    sent += withMetaFields(body, timing).length + upstreamHeaders.length;
    timing?.answered(200);
    timing?.ended();
    if (channels.requestEnd.hasSubscribers)
      channels.requestEnd.publish({
        request,
        method: 'tools/call',
        outcome: 'forwarded',
        status: 200,
        durationSeconds: 0.001,
      });
  };
  // Batches with a turn of the event loop between them, as requests arrive: the span processor's timers and exports run.
  const run = async (n: number) => {
    for (let i = 0; i < n; i += 100) {
      for (let j = 0; j < 100; j++) one();
      await yieldLoop();
    }
  };
  await run(5_000);
  const before = process.cpuUsage();
  await run(requests);
  await shutdown();
  const used = process.cpuUsage(before);
  if (sent === 0) throw new Error('nothing was sent');
  process.stdout.write(`${((used.user + used.system) / requests).toFixed(3)}\n`);
}

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
  const port = await freePort();
  const receiver = spawnNode('tracing-otlp', fileURLToPath(new URL('otlp-stub.ts', import.meta.url)), [
    '--port',
    String(port),
  ]);
  await waitReady(receiver, () => accepts(port));
  const endpoint = `http://127.0.0.1:${port}`;
  const self = fileURLToPath(import.meta.url);
  const runSample = (mode: Mode) =>
    new Promise<number>((resolve, reject) => {
      const tracing =
        mode === 'off'
          ? { OTEL_SDK_DISABLED: 'true' }
          : {
              OTEL_TRACES_EXPORTER: 'otlp',
              OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
              OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
              OTEL_BSP_MAX_QUEUE_SIZE: '100000',
            };
      const p = spawn(process.execPath, [self, '--child', mode], {
        env: { ...process.env, ...tracing, ...MODES[mode] },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      p.stdout.on('data', (d: Buffer) => (out += d.toString()));
      p.on('exit', (code) =>
        code === 0 ? resolve(Number(out.trim())) : reject(new Error(`${mode} sample exited ${code}`)),
      );
    });
  const modes = Object.keys(MODES) as Mode[];
  const added = new Map<Mode, number[]>(modes.map((m) => [m, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      const figures = new Map<Mode, number>();
      for (const mode of modes) figures.set(mode, await runSample(mode));
      const off = figures.get('off') as number;
      for (const mode of modes) added.get(mode)?.push((figures.get(mode) as number) - off);
      process.stderr.write(
        `bench:tracing round ${round + 1}/${rounds} ${JSON.stringify(Object.fromEntries(figures))}\n`,
      );
    }
  } finally {
    await receiver.stop();
  }
  const out: Record<string, number | null> = {};
  for (const mode of modes.filter((m) => m !== 'off')) {
    const s = spreadOf(added.get(mode) ?? []);
    out[`tracing_${mode}_us`] = s === undefined ? null : Number(s.median.toFixed(2));
    out[`tracing_${mode}_us_spread`] = s === undefined ? null : Number(s.spread.toFixed(2));
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
