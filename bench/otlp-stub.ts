/**
 * A local OTLP/HTTP receiver for the tracing case: accepts every export
 * (traces, or anything else) with 200 and discards it, so the bench measures
 * what tracing costs toolgate, not a collector. The reply is an empty export
 * response in the request's encoding (zero bytes of protobuf, or `{}`), so
 * the exporter reads a success, not an undecodable body.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
createServer((req, res) => {
  const json = req.headers['content-type']?.startsWith('application/json') === true;
  req.resume();
  req.on('end', () => {
    if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    else res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': '0' }).end();
  });
}).listen(Number(values.port), '127.0.0.1');
