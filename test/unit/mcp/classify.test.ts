import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { stringifyExact } from '../../../src/json/exact.ts';
import { classify, idOfBody, methodFromHeaders, type McpHeaders } from '../../../src/mcp/classify.ts';
import { decodeHeaderValue } from '../../../src/mcp/header-value.ts';
import { corpus } from '../../helpers/testdata.ts';

const { path: PARSING, skip } = corpus('json-parsing');
const body = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const b64 = (s: string) => `=?base64?${Buffer.from(s, 'utf8').toString('base64')}?=`;
const modern = (h: Partial<McpHeaders> = {}): McpHeaders => ({ protocolVersion: '2026-07-28', ...h });
const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };

describe('classify: the body decides, 2026-07-28 headers must agree with it', () => {
  const table: { name: string; headers: McpHeaders; body: unknown; expect: Record<string, unknown> }[] = [
    {
      name: 'legacy request without headers',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a' } },
      expect: { ok: true, era: 'legacy', kind: 'request', method: 'tools/call', name: 'a', id: 1 },
    },
    {
      name: 'legacy headers are ignored even when they lie',
      headers: { protocolVersion: '2025-11-25', method: 'ping', name: 'z' },
      body: { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'a' } },
      expect: { ok: true, era: 'legacy', method: 'tools/call', name: 'a' },
    },
    {
      name: 'modern request with matching headers',
      headers: modern({ method: 'tools/call', name: 'a' }),
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: envelope } },
      expect: { ok: true, era: 'modern', protocolVersion: '2026-07-28', name: 'a' },
    },
    {
      name: 'modern resources/read mirrors the uri',
      headers: modern({ method: 'resources/read', name: 'file:///x y' }),
      body: { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'file:///x y' } },
      expect: { ok: true, name: 'file:///x y' },
    },
    {
      name: 'base64 Mcp-Name is decoded',
      headers: modern({ method: 'prompts/get', name: b64('résumé') }),
      body: { jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'résumé' } },
      expect: { ok: true, name: 'résumé' },
    },
    {
      name: 'modern tools/list needs no Mcp-Name',
      headers: modern({ method: 'tools/list' }),
      body: { jsonrpc: '2.0', id: 4, method: 'tools/list' },
      expect: { ok: true, era: 'modern', kind: 'request' },
    },
    {
      name: 'modern notification may omit headers',
      headers: modern(),
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      expect: { ok: true, kind: 'notification', id: null },
    },
    {
      name: 'modern notification with a contradicting header',
      headers: modern({ method: 'ping' }),
      body: { jsonrpc: '2.0', method: 'notifications/cancelled' },
      expect: { ok: false, code: 'header_mismatch' },
    },
    {
      name: 'Mcp-Method mismatch',
      headers: modern({ method: 'tools/list' }),
      body: { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'a' } },
      expect: { ok: false, code: 'header_mismatch', id: 5 },
    },
    {
      name: 'Mcp-Method case differs',
      headers: modern({ method: 'Tools/Call', name: 'a' }),
      body: { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'a' } },
      expect: { ok: false, code: 'header_mismatch' },
    },
    {
      name: 'Mcp-Name missing on a modern tools/call',
      headers: modern({ method: 'tools/call' }),
      body: { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'a' } },
      expect: { ok: false, code: 'header_mismatch', id: 6 },
    },
    {
      name: 'Mcp-Name present but body has no name',
      headers: modern({ method: 'tools/call', name: 'a' }),
      body: { jsonrpc: '2.0', id: 6, method: 'tools/call', params: {} },
      expect: { ok: false, code: 'header_mismatch' },
    },
    {
      name: 'unencoded value that looks like the sentinel',
      headers: modern({ method: 'tools/call', name: '=?base64?YQ==?=' }),
      body: { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: '=?base64?YQ==?=' } },
      expect: { ok: false, code: 'header_mismatch' },
    },
    {
      name: 'envelope claims modern, header says 2025',
      headers: { protocolVersion: '2025-11-25', method: 'tools/list' },
      body: { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: envelope } },
      expect: { ok: false, code: 'header_mismatch', id: 7 },
    },
    {
      name: 'envelope claims modern, no version header',
      headers: { method: 'tools/list' },
      body: { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: envelope } },
      expect: { ok: false, code: 'header_mismatch' },
    },
    {
      name: 'a response posted by a 2025 client',
      headers: {},
      body: { jsonrpc: '2.0', id: 9, result: {} },
      expect: { ok: true, kind: 'response', method: undefined },
    },
    {
      name: 'a response with both result and error',
      headers: {},
      body: { jsonrpc: '2.0', id: 9, result: {}, error: {} },
      expect: { ok: false, code: 'invalid_request', id: 9 },
    },
    {
      name: 'a batch',
      headers: {},
      body: [{ jsonrpc: '2.0', id: 1, method: 'ping' }],
      expect: { ok: false, code: 'invalid_request', id: null },
    },
    {
      name: 'empty method',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: '' },
      expect: { ok: false, code: 'invalid_request', id: 1 },
    },
    {
      name: 'a method with a control character',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call\u0000' },
      expect: { ok: false, code: 'invalid_request', id: 1 },
    },
    {
      name: 'a method with a space',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call ' },
      expect: { ok: false, code: 'invalid_request', id: 1 },
    },
    {
      name: 'a method outside ASCII',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'tools/cаll' },
      expect: { ok: false, code: 'invalid_request', id: 1 },
    },
    {
      name: 'boolean id',
      headers: {},
      body: { jsonrpc: '2.0', id: true, method: 'ping' },
      expect: { ok: false, code: 'invalid_request', id: null },
    },
    {
      name: 'array params are allowed by JSON-RPC',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'x', params: [1] },
      expect: { ok: true, params: undefined },
    },
    {
      name: 'a tools/call names where its arguments hold an integer JSON.parse rounded',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":[0,9007199254740993]}}}',
      expect: { ok: true, inexactInteger: '/n/1', exactArguments: { n: [0, 9007199254740993n] } },
    },
    {
      name: 'arguments without such an integer are read once, by JSON.parse',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"n":9007199254740992,"m":1.5e300}}}',
      expect: { ok: true, inexactInteger: undefined, exactArguments: undefined },
    },
    {
      name: 'only a tools/call is scanned for inexact integers',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"method":"x","params":{"name":"a","arguments":{"n":9007199254740993}}}',
      expect: { ok: true, inexactInteger: undefined },
    },
    {
      name: 'a JSON-RPC member only in another letter case',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"Method":"tools/call"}',
      expect: { ok: false, code: 'case_variant_key', id: 1 },
    },
    {
      name: 'params named with a long s',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","param\\u017f":{"name":"a"}}',
      expect: { ok: false, code: 'case_variant_key', id: 1 },
    },
    {
      name: 'a tool name only as "Name"',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { Name: 'a' } },
      expect: { ok: false, code: 'case_variant_key', id: 1 },
    },
    {
      name: 'a resource uri only as "URI"',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { URI: 'file:///a' } },
      expect: { ok: false, code: 'case_variant_key', id: 1 },
    },
    {
      name: 'params members toolgate does not read may use any case',
      headers: {},
      body: { jsonrpc: '2.0', id: 1, method: 'x', params: { Query: 'a', progressToken: 1, arguments: { Name: 1 } } },
      expect: { ok: true },
    },
    {
      name: 'a body nested more than 512 levels deep, refused before parsing',
      headers: {},
      body: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${'['.repeat(520)}${']'.repeat(520)}}}`,
      expect: { ok: false, code: 'nesting_too_deep', id: null },
    },
    {
      name: 'brackets inside strings are not nesting',
      headers: {},
      body: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"${'['.repeat(2000)}\\"{"}}`,
      expect: { ok: true },
    },
    {
      name: '__proto__ keys are plain data',
      headers: {},
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"evil"}}}',
      expect: { ok: true, name: undefined },
    },
  ];
  for (const row of table) {
    it(row.name, () => {
      const result = classify(row.headers, body(row.body)) as unknown as Record<string, unknown>;
      for (const [k, v] of Object.entries(row.expect))
        assert.deepEqual(result[k], v, `${k} of ${stringifyExact(result)}`);
    });
  }
});

describe('classify reads the body as UTF-8, strictly', () => {
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"note":"';
  const withBytes = (...bytes: number[]) => Buffer.concat([Buffer.from(ping), Buffer.from(bytes), Buffer.from('"}}')]);

  it('refuses invalid UTF-8 rather than reading it as U+FFFD', () => {
    for (const bytes of [
      [0xed, 0xa0, 0x80], // a surrogate
      [0xc0, 0xaf], // an overlong '/'
      [0xe2, 0x82], // cut short
      [0xff],
      [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
    ]) {
      assert.deepEqual(classify({}, withBytes(...bytes)), { ok: false, code: 'parse_error', id: null }, String(bytes));
    }
  });

  it('reads multi-byte characters, and refuses a byte order mark as JSON does', () => {
    const read = classify({}, withBytes(0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80));
    assert.ok(read.ok);
    assert.equal(read.params?.note, 'é😀');
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body({ jsonrpc: '2.0', id: 1, method: 'ping' })]);
    assert.deepEqual(classify({}, bom), { ok: false, code: 'parse_error', id: null });
  });
});

describe('decodeHeaderValue', () => {
  it('decodes the standard-alphabet sentinel and passes plain values through', () => {
    assert.equal(decodeHeaderValue('echo'), 'echo');
    assert.equal(decodeHeaderValue(b64('  padded ')), '  padded ');
    assert.equal(decodeHeaderValue('=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='), '=?base64?literal?=');
  });
  it('rejects malformed sentinels instead of guessing', () => {
    for (const bad of [
      '=?base64?*?=',
      '=?base64?YQ?=',
      '=?base64?YQ=?=',
      `=?base64?${Buffer.from([0xc3, 0x28]).toString('base64')}?=`,
      '=?base64??=x?=',
    ]) {
      assert.equal(decodeHeaderValue(bad), undefined, bad);
    }
  });
});

describe('classify never throws and agrees with the JSON parsing corpus', { skip }, () => {
  const files = readdirSync(PARSING).filter((f) => f.endsWith('.json'));
  it('has the corpus', () => assert.ok(files.length > 300));
  for (const f of files) {
    it(f, () => {
      const bytes = readFileSync(join(PARSING, f));
      const result = classify({ protocolVersion: '2026-07-28', method: 'x', name: 'y' }, bytes);
      // Invalid JSON that opens too many levels is refused before it is parsed.
      if (f.startsWith('n_'))
        assert.ok(
          !result.ok && (result.code === 'parse_error' || result.code === 'nesting_too_deep') && result.id === null,
          JSON.stringify(result),
        );
      if (f.startsWith('y_'))
        assert.ok(result.ok || result.code !== 'parse_error', 'valid JSON is never a parse error');
    });
  }
});

describe('methodFromHeaders: when the headers alone may say the method', () => {
  const table: { name: string; headers: McpHeaders; expect: string | undefined }[] = [
    { name: 'a 2026-07-28 request naming its method', headers: modern({ method: 'tools/call' }), expect: 'tools/call' },
    { name: 'a later revision', headers: { protocolVersion: '2027-03-01', method: 'ping' }, expect: 'ping' },
    {
      name: 'a 2025 version: its headers are ignored',
      headers: { protocolVersion: '2025-11-25', method: 'ping' },
      expect: undefined,
    },
    { name: 'no protocol version', headers: { method: 'tools/call' }, expect: undefined },
    { name: 'a malformed version', headers: { protocolVersion: '2026-7-28x', method: 'ping' }, expect: undefined },
    { name: 'no Mcp-Method', headers: modern({ name: 'echo' }), expect: undefined },
    { name: 'a method with a space', headers: modern({ method: 'tools/call x' }), expect: undefined },
    { name: 'a method with a control character', headers: modern({ method: 'tools/call\u0000' }), expect: undefined },
    { name: 'an empty method', headers: modern({ method: '' }), expect: undefined },
  ];
  for (const c of table) it(c.name, () => assert.equal(methodFromHeaders(c.headers), c.expect));
});

describe('idOfBody: the id an error answered in the upstream place carries', () => {
  it('is the request id of a readable message, even one classify refuses', () => {
    assert.equal(idOfBody(modern({ method: 'tools/call' }), body({ jsonrpc: '2.0', id: 'a', method: 'ping' })), 'a');
    assert.equal(idOfBody({}, body({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: 3 })), 7);
  });
  it('is null for a body that cannot be read or has no usable id', () => {
    assert.equal(idOfBody({}, body('{"id":1')), null);
    assert.equal(idOfBody({}, body({ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' })), null);
    assert.equal(idOfBody({}, body({ jsonrpc: '2.0', method: 'ping' })), null);
  });
});
