/**
 * The policy floor: the floor (floor.ts) plus the least a policy proxy must
 * decide for the bench's call, done as cheaply as Node allows. The bearer
 * key is looked up in a Map, the message must be a JSON-RPC request with a
 * method, a tools/call must name a granted tool, and its arguments must
 * satisfy the tool's inputSchema (ajv, native RegExp, first error only);
 * refusals are JSON-RPC errors. Nothing else: no duplicate-name, rounded
 * integer or case-variant checks, no strict UTF-8, no deadline, breaker or
 * retries, no metrics. It says how far toolgate's policy path is from the
 * decision itself (`policy_floor_cpu_ratio`); it is not a proxy to run. Its
 * body reading and forwarding repeat the floor's line for line, so that the
 * two differ only in the decision: the floor stays one self-contained file,
 * type-stripped alone by lib/build.ts, and shares nothing.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Pool } from 'undici';
import { BENCH_KEY } from './lib/policy.ts';
import { TOOLS } from './lib/request.ts';

const { values } = parseArgs({ options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' } } });
const pool = new Pool(values.upstream ?? 'http://127.0.0.1:3000', { connections: 256 });
const MAX_BODY = 4 * 1024 * 1024;
// The credential goes no further than the proxy, as toolgate strips it.
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'authorization',
]);
const PRINCIPALS = new Map([[BENCH_KEY, 'bench-agent']]);
const [search] = TOOLS;
if (search === undefined) throw new Error('the bench has no tools');
const GRANTED = new Set([search.name]);
const validArguments = new Ajv2020({ strict: false }).compile(search.inputSchema);

interface Message {
  readonly jsonrpc?: unknown;
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: { readonly name?: unknown; readonly arguments?: unknown };
}

function endToEnd(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const k in h) if (!NOT_FORWARDED.has(k)) out[k] = h[k];
  return out;
}

function refuse(res: ServerResponse, status: number, id: unknown, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code, message } }));
}

/** Why the message may not pass, or undefined when it may. */
function refusal(msg: Message): [status: number, code: number, message: string] | undefined {
  if (typeof msg !== 'object' || msg === null || msg.jsonrpc !== '2.0' || typeof msg.method !== 'string')
    return [400, -32600, 'invalid request'];
  if (msg.method !== 'tools/call') return undefined;
  const name = msg.params?.name;
  if (typeof name !== 'string' || !GRANTED.has(name)) return [403, -32001, 'tool not granted'];
  return validArguments(msg.params?.arguments ?? {}) ? undefined : [400, -32602, 'invalid arguments'];
}

createServer((req, res) => {
  const auth = req.headers.authorization;
  const principal = typeof auth === 'string' && auth.startsWith('Bearer ') ? PRINCIPALS.get(auth.slice(7)) : undefined;
  if (principal === undefined) return void res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if ((size += chunk.length) <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return void res.writeHead(413, { connection: 'close' }).end();
    const body = Buffer.concat(chunks, size);
    let msg: Message;
    try {
      msg = JSON.parse(body.toString('utf8')) as Message;
    } catch {
      refuse(res, 400, null, -32700, 'parse error');
      return;
    }
    const refused = refusal(msg);
    if (refused !== undefined) {
      refuse(res, refused[0], msg.id, refused[1], refused[2]);
      return;
    }
    pool.stream(
      { method: 'POST', path: req.url ?? '/', headers: endToEnd(req.headers), body },
      ({ statusCode, headers }) => res.writeHead(statusCode, endToEnd(headers)),
      (err) => {
        if (err === null) return;
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      },
    );
  });
}).listen(Number(values.port), '127.0.0.1');
