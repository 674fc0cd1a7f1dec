/**
 * The peer: the generic reverse proxy a user might deploy instead of
 * toolgate, `http-proxy` with a keep-alive agent, configured as its README
 * suggests. It streams bodies without parsing them, so it does less per
 * request than any policy proxy can; toolgate should still not be slower.
 */
import { Agent, createServer } from 'node:http';
import { parseArgs } from 'node:util';
import httpProxy from 'http-proxy';

const { values } = parseArgs({ options: { upstream: { type: 'string' }, port: { type: 'string', default: '0' } } });
// Without an agent http-proxy sends `Connection: close` and reconnects per request.
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const proxy = httpProxy.createProxyServer({ target: values.upstream ?? 'http://127.0.0.1:3000', agent });
proxy.on('error', (_err, _req, res) => {
  if (!('writeHead' in res) || res.headersSent) res.destroy();
  else res.writeHead(502).end();
});

createServer((req, res) => proxy.web(req, res)).listen(Number(values.port), '127.0.0.1');
