import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeHeaderValue, encodeHeaderValue } from '../../../src/mcp/header-value.ts';
import { isIdentityHeaderName, repeatsMcpField } from '../../../src/mcp/headers.ts';

describe('encodeHeaderValue', () => {
  it('keeps visible ASCII as it is, and encodes everything else so decodeHeaderValue reads it back', () => {
    assert.equal(encodeHeaderValue('agent-a'), 'agent-a');
    assert.equal(encodeHeaderValue('spiffe://prod/ns/app sa'), 'spiffe://prod/ns/app sa');
    const values = ['ßob', ' padded', 'trailing ', 'tab\there', '=?base64?YQ==?=', '東京', 'a\u2028b', 'x'.repeat(256)];
    for (const v of values) {
      const encoded = encodeHeaderValue(v);
      assert.match(encoded, /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, `${JSON.stringify(v)} is a valid field value`);
      assert.equal(decodeHeaderValue(encoded), v, JSON.stringify(v));
    }
    assert.notEqual(
      encodeHeaderValue('=?base64?YQ==?='),
      '=?base64?YQ==?=',
      'a value shaped like the sentinel is encoded, never read as one',
    );
  });
});

describe('isIdentityHeaderName', () => {
  it('admits a plain field name and refuses fields toolgate, HTTP or MCP already give a meaning', () => {
    for (const ok of ['X-Toolgate-Principal', 'x-auth-request-user', 'X-Remote-User'])
      assert.equal(isIdentityHeaderName(ok), true, ok);
    for (const bad of [
      'Authorization',
      'x-api-key',
      'Host',
      'Connection',
      'Transfer-Encoding',
      'Content-Length',
      'Content-Type',
      'Cookie',
      'X-Forwarded-For',
      'Forwarded',
      'traceparent',
      'Mcp-Session-Id',
      'mcp-name',
      'Last-Event-ID',
      'x user',
      'x:y',
      '',
    ]) {
      assert.equal(isIdentityHeaderName(bad), false, bad);
    }
  });
});

describe('repeatsMcpField', () => {
  it('finds an MCP field given twice, in any letter case, and nothing else', () => {
    assert.equal(repeatsMcpField(['Mcp-Method', 'ping', 'mcp-method', 'ping']), true);
    assert.equal(repeatsMcpField(['MCP-Protocol-Version', 'a', 'x', 'y', 'mcp-protocol-version', 'a']), true);
    assert.equal(repeatsMcpField(['Mcp-Session-Id', 'a', 'MCP-SESSION-ID', 'b']), true);
    assert.equal(repeatsMcpField(['Mcp-Param-Region', 'a', 'mcp-param-region', 'b']), true);
    assert.equal(repeatsMcpField(['Mcp-Name', 'a', 'MCP-NAME', 'b']), true, 'the shortest MCP field');
    assert.equal(repeatsMcpField(['Mcp-Param-Region', 'a', 'Mcp-Param-Zone', 'b']), false);
    assert.equal(repeatsMcpField(['Mcp-Method', 'a', 'Mcp-Name', 'b', 'Mcp-Param-X', 'c', 'MCP-NAME', 'd']), true);
    assert.equal(repeatsMcpField(['Mcp-Method', 'a', 'Mcp-Name', 'b', 'MCP-METHOD', 'c']), true);
    assert.equal(
      repeatsMcpField(['Mcp-Method', 'ping', 'Mcp-Name', 'a', 'MCP-Protocol-Version', 'v', 'Mcp-Session-Id', 's']),
      false,
    );
    assert.equal(repeatsMcpField(['accept', 'a', 'accept', 'b', 'x-mcp', '1', 'x-mcp', '2']), false);
    assert.equal(repeatsMcpField([]), false);
  });
});
