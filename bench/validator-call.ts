/**
 * `npm run bench:validator`: the CPU one external validator call costs the
 * proxy, client side, in one process: toolgate's `ValidatorClients` against
 * grpc-js (the client it used before, with the channel options it had) and
 * against the least a unary gRPC call over HTTP/2 must do (one `node:http2`
 * stream: the 5-byte frame, the same protobuf encoding, status from the
 * trailers, no deadline, no checks), all calling the same validator process
 * (`test/helpers/validator-server.ts`) with BENCH_CONCURRENCY calls in
 * flight; and against an HTTP/2 PING on the same session, the round trip
 * without a stream. Beside CPU it reports the main thread's garbage
 * collection time per 1,000 calls: Node 24's http2 client keeps every
 * stream's objects alive past the young-generation collections, and that
 * shows there and nowhere else. The order rotates per round; each figure is
 * the median over rounds.
 * Knobs: BENCH_ROUNDS (5), BENCH_REQUESTS per round (10000), BENCH_CONCURRENCY (32).
 * Prints one line per round to stderr, then one JSON line.
 */
import { connect } from 'node:http2';
import { PerformanceObserver } from 'node:perf_hooks';
import { credentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { serviceClient, serviceDefinition } from '../src/grpc/definitions.ts';
import type { ValidateRequest } from '../src/grpc/generated/toolgate/v1/ValidateRequest.ts';
import { ValidatorClients } from '../src/grpc/validator-client.ts';
import { startValidator } from '../test/helpers/validator-process.ts';
import { pin } from './lib/cpus.ts';
import { spreadOf } from './lib/stats.ts';

const ROUNDS = positive('BENCH_ROUNDS', 5);
const REQUESTS = positive('BENCH_REQUESTS', 10_000);
const CONCURRENCY = positive('BENCH_CONCURRENCY', 32);
const WARMUP = 2000;

const REQUEST: ValidateRequest = {
  event: 'tools/call',
  phase: 'request',
  payloadJson: JSON.stringify({
    name: 'search_issues',
    arguments: { repository: 'acme/checkout-service', query: 'checkout fails on retry', limit: 20 },
  }),
  principal: { id: 'bench-agent', scopes: ['issues.read'] },
  validator: 'bench',
};

// The caller runs on the proxies' CPU, the validator on the helpers', as in `npm run bench`.
const validator = await startValidator({ quiet: true });
pin(validator.pid, 'helpers');
pin(process.pid, 'proxies');
const clients = new ValidatorClients();
const method = serviceDefinition('toolgate.v1.Validator').Validate;
if (method === undefined) throw new Error('no Validate method in proto/');
// As many PINGs may be outstanding as calls are in flight (Node cancels those beyond the limit).
const session = connect(`http://${validator.target}`, { maxOutstandingPings: CONCURRENCY });

const Validator = serviceClient('toolgate.v1.Validator');
const grpcClient: Client = new Validator(validator.target, credentials.createInsecure(), {
  'grpc.max_receive_message_length': 64 * 1024,
  'grpc.enable_retries': 0,
  'grpc.enable_channelz': 0,
});
type ValidateFn = (
  r: ValidateRequest,
  o: { deadline: Date },
  cb: (err: ServiceError | null, value?: { valid?: boolean }) => void,
) => unknown;
const grpcValidate = (grpcClient as unknown as { Validate: ValidateFn }).Validate.bind(grpcClient);

const toolgate = async (): Promise<void> => {
  const outcome = await clients.validate(validator.target, REQUEST, 2000);
  if (outcome.kind !== 'valid') throw new Error(`toolgate call: ${outcome.kind}`);
};

const grpcJs = (): Promise<void> =>
  new Promise((resolve, reject) => {
    grpcValidate(REQUEST, { deadline: new Date(Date.now() + 2000) }, (err, value) =>
      err === null && value?.valid === true ? resolve() : reject(new Error('grpc-js call failed')),
    );
  });

const wire = (): Promise<void> =>
  new Promise((resolve, reject) => {
    const message = method.requestSerialize(REQUEST);
    const frame = Buffer.allocUnsafe(5 + message.length);
    frame[0] = 0;
    frame.writeUInt32BE(message.length, 1);
    message.copy(frame, 5);
    const stream = session.request({
      ':method': 'POST',
      ':path': method.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      'grpc-timeout': '2000m',
    });
    const chunks: Buffer[] = [];
    let status: unknown;
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('trailers', (t) => {
      status = t['grpc-status'];
    });
    stream.on('error', reject);
    stream.on('end', () => {
      if (status !== '0') return reject(new Error(`http2 call: grpc-status ${String(status)}`));
      const answer = method.responseDeserialize(Buffer.concat(chunks).subarray(5)) as { valid?: boolean };
      if (answer.valid !== true) return reject(new Error('http2 call: not valid'));
      resolve();
    });
    stream.end(frame);
  });

const ping = (): Promise<void> =>
  new Promise((resolve, reject) => {
    session.ping((err) => (err === null ? resolve() : reject(err)));
  });

interface Round {
  readonly cpuUs: number;
  readonly from: number;
  readonly to: number;
}

/** CPU µs per call over one round, and the round's window for the GC entries that fall in it. */
async function measure(call: () => Promise<void>, n: number): Promise<Round> {
  const from = performance.now();
  const cpuUs = await cpuPerCall(call, n);
  return { cpuUs, from, to: performance.now() };
}

async function cpuPerCall(call: () => Promise<void>, n: number): Promise<number> {
  const before = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < n) await call();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / n;
}

const CALLS = { toolgate, grpcJs, wire, ping } as const;
type Contender = keyof typeof CALLS;
const CONTENDERS = Object.keys(CALLS) as Contender[];
const rounds: Record<Contender, Round[]> = { toolgate: [], grpcJs: [], wire: [], ping: [] };
const gcPauses: Array<{ readonly at: number; readonly ms: number }> = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ at: e.startTime, ms: e.duration });
});
gcObserver.observe({ entryTypes: ['gc'] });
try {
  for (const which of CONTENDERS) await cpuPerCall(CALLS[which], WARMUP);
  for (let round = 0; round < ROUNDS; round++) {
    const order = CONTENDERS.map((_, i) => CONTENDERS[(i + round) % CONTENDERS.length] as Contender);
    for (const which of order) rounds[which].push(await measure(CALLS[which], REQUESTS));
    console.error(
      `round ${round + 1}/${ROUNDS}: ${CONTENDERS.map((c) => `${c} ${rounds[c].at(-1)?.cpuUs.toFixed(1)}`).join(', ')} µs/call`,
    );
  }
  // GC entries are delivered after the fact; let the last round's arrive.
  await new Promise((resolve) => setTimeout(resolve, 100));
} finally {
  gcObserver.disconnect();
  clients.close();
  grpcClient.close();
  session.close();
  await validator.close();
}
const round1 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 10) / 10);
const ratio = (top: number[], bottom: number[]) => {
  const r = spreadOf(top.map((x, i) => x / (bottom[i] as number)));
  return r === undefined ? null : Math.round(r.median * 1000) / 1000;
};
const cpu = (c: Contender) => rounds[c].map((r) => r.cpuUs);
/** Main-thread GC pause per 1,000 calls, median over rounds. */
const gcPer1k = (c: Contender) =>
  round1(
    spreadOf(
      rounds[c].map(
        (r) =>
          (gcPauses.filter((g) => g.at >= r.from && g.at < r.to).reduce((sum, g) => sum + g.ms, 0) * 1000) / REQUESTS,
      ),
    )?.median,
  );
const t = spreadOf(cpu('toolgate'));
const g = spreadOf(cpu('grpcJs'));
const w = spreadOf(cpu('wire'));
const p = spreadOf(cpu('ping'));
console.log(
  JSON.stringify({
    validator_client_cpu_us_per_call: round1(t?.median),
    validator_client_cpu_us_per_call_spread: round1(t?.spread),
    grpc_js_cpu_us_per_call: round1(g?.median),
    grpc_js_cpu_us_per_call_spread: round1(g?.spread),
    http2_cpu_us_per_call: round1(w?.median),
    http2_cpu_us_per_call_spread: round1(w?.spread),
    http2_ping_cpu_us_per_call: round1(p?.median),
    http2_ping_cpu_us_per_call_spread: round1(p?.spread),
    validator_client_over_http2: ratio(cpu('toolgate'), cpu('wire')),
    grpc_js_over_validator_client: ratio(cpu('grpcJs'), cpu('toolgate')),
    validator_client_gc_ms_per_1k_calls: gcPer1k('toolgate'),
    grpc_js_gc_ms_per_1k_calls: gcPer1k('grpcJs'),
    http2_gc_ms_per_1k_calls: gcPer1k('wire'),
    http2_ping_gc_ms_per_1k_calls: gcPer1k('ping'),
  }),
);

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`invalid ${name}: expected a whole number above 0`);
    process.exit(2);
  }
  return n;
}
