/**
 * A real external validator (toolgate.v1.Validator) as its own process, for
 * tests and the benchmark. It listens on a free loopback port, prints
 * `{"port":N}` as its first stdout line, then one JSON line per request it
 * received. What it answers depends on a marker in the payload:
 * BLOCK → invalid/error, WARN → invalid/warning, SLOW → answers after 2 s,
 * MALFORMED → invalid without a severity, CRASH → the process exits;
 * anything else → valid. Its messages carry the payload on purpose, so tests
 * can prove toolgate never passes them on.
 */
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { serviceDefinition } from '../../src/grpc/definitions.ts';
import type { ValidateRequest__Output } from '../../src/grpc/generated/toolgate/v1/ValidateRequest.ts';
import type { ValidateResponse } from '../../src/grpc/generated/toolgate/v1/ValidateResponse.ts';

const quiet = process.argv.includes('--quiet');

function answer(payload: string): ValidateResponse | 'slow' | 'crash' {
  if (payload.includes('CRASH')) return 'crash';
  if (payload.includes('SLOW')) return 'slow';
  if (payload.includes('BLOCK'))
    return { valid: false, severity: 'SEVERITY_ERROR', message: `blocked: ${payload}`, code: 'secret_found' };
  if (payload.includes('WARN'))
    return { valid: false, severity: 'SEVERITY_WARNING', message: `warning: ${payload}`, code: 'looks_odd' };
  if (payload.includes('MALFORMED')) return { valid: false, message: `no severity: ${payload}` };
  return { valid: true };
}

const server = new Server();
server.addService(serviceDefinition('toolgate.v1.Validator'), {
  Validate(
    call: ServerUnaryCall<ValidateRequest__Output, ValidateResponse>,
    callback: sendUnaryData<ValidateResponse>,
  ) {
    if (!quiet) process.stdout.write(`${JSON.stringify(call.request)}\n`);
    const a = answer(call.request.payloadJson);
    if (a === 'crash') process.exit(3);
    if (a === 'slow') setTimeout(() => callback(null, { valid: true }), 2000).unref();
    else callback(null, a);
  },
});
server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
  if (err !== null) {
    process.stderr.write('validator: cannot listen\n');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
