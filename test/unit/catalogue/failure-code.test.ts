import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureCode, LinkError } from '../../../src/catalogue/link-error.ts';

describe('failureCode', () => {
  it('names link errors, socket errors, timeouts and aborts without message text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1 secret'), { code: 'ECONNREFUSED' });
    const cases: [unknown, string][] = [
      [new LinkError('http_503'), 'http_503'],
      [new LinkError('jsonrpc_-32601'), 'jsonrpc_-32601'],
      [refused, 'net_econnrefused'],
      [new TypeError('fetch failed secret', { cause: refused }), 'net_econnrefused'],
      [Object.assign(new Error('other side closed secret'), { code: 'UND_ERR_SOCKET' }), 'net_und_err_socket'],
      [new DOMException('The operation was aborted due to timeout secret', 'TimeoutError'), 'request_timeout'],
      [Object.assign(new Error('secret'), { name: 'AbortError' }), 'aborted'],
      [new Error('secret'), 'connect_failed'],
      ['secret', 'connect_failed'],
      [Object.assign(new Error('x'), { code: 'not an errno secret' }), 'connect_failed'],
    ];
    for (const [e, code] of cases) assert.equal(failureCode(e), code);
  });

  it('gives up on cause chains that never end', () => {
    const a: { cause?: unknown } = {};
    a.cause = a;
    assert.equal(failureCode(a), 'connect_failed');
  });
});
