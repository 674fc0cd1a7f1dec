/**
 * The floor: the least work any policy proxy must do per request, done as
 * cheaply as Node allows. Read the whole body (with a size limit), parse it as
 * JSON (policy needs the message), forward it over a keep-alive undici Pool,
 * stream the response back as it arrives (SSE included; a client disconnect
 * aborts the upstream request), and map failures to a status. No policy, no
 * logging, no metrics. toolgate's throughput is judged against this.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({ options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' } } });
const pool = new Pool(values.upstream ?? 'http://127.0.0.1:3000', { connections: 256 });
const MAX_BODY = 4 * 1024 * 1024;
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
]);

function endToEnd(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const k in h) if (!HOP_BY_HOP.has(k)) out[k] = h[k];
  return out;
}

createServer((req, res) => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    if ((size += chunk.length) <= MAX_BODY) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > MAX_BODY) return void res.writeHead(413, { connection: 'close' }).end();
    const body = Buffer.concat(chunks, size);
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      return void res.writeHead(400).end();
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
