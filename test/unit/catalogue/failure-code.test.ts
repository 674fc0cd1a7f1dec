import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { failureCode } from '../../../src/catalogue/upstream.ts';

describe('failureCode', () => {
  it('names HTTP statuses, socket errors, SDK and JSON-RPC codes without message text', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1 secret'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    const cases: [unknown, string][] = [
      [new SdkHttpError(SdkErrorCode.SendFailed, 'upstream said secret', { status: 503 }), 'http_503'],
      [new SdkError(SdkErrorCode.EraNegotiationFailed, 'probe failed: secret', { cause: fetchFailed }), 'net_econnrefused'],
      [new SdkError(SdkErrorCode.SendFailed, 'x', undefined, { cause: Object.assign(new Error('y'), { code: 'UND_ERR_SOCKET' }) }), 'net_und_err_socket'],
      [new SdkError(SdkErrorCode.EraNegotiationFailed, 'secret'), 'sdk_era_negotiation_failed'],
      [new SdkError(SdkErrorCode.RequestTimeout, 'secret'), 'sdk_request_timeout'],
      [new ProtocolError(-32601, 'secret'), 'jsonrpc_-32601'],
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
