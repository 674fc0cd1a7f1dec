/**
 * A local OTLP/HTTP receiver for the tracing case: accepts every export
 * (traces, or anything else) with 200 and discards it, so the bench measures
 * what tracing costs toolgate, not a collector.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' } } });
createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
}).listen(Number(values.port), '127.0.0.1');
