import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { spliceMetaFields } from '../../../src/json/meta-splice.ts';
import { corpus } from '../../helpers/testdata.ts';

const { path: CORPUS, skip } = corpus('json-parsing');
const TP = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const FIELDS = { traceparent: TP, tracestate: 'vendor=1' };

const splice = (text: string, fields: Record<string, string> = FIELDS) =>
  spliceMetaFields(Buffer.from(text), fields)?.toString('utf8');

function parses(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What the splice must produce, computed the slow way. */
function expected(original: unknown, fields: Record<string, string>): unknown {
  const copy = structuredClone(original) as Record<string, Record<string, unknown>>;
  const params = (copy.params ??= {});
  params._meta = { ...(params._meta as object | undefined), ...fields };
  return copy;
}

describe('spliceMetaFields', () => {
  it('adds _meta fields and leaves every other byte as it was', () => {
    const body =
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{ "q" : "h\\u00e9llo" ,"n":1.50e3}}}';
    const out = splice(body);
    assert.equal(
      out,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"traceparent":"${TP}","tracestate":"vendor=1"},"name":"x","arguments":{ "q" : "h\\u00e9llo" ,"n":1.50e3}}}`,
    );
  });

  it('creates params when the message has none', () => {
    assert.equal(
      splice('{"jsonrpc":"2.0","id":1,"method":"ping"}', { traceparent: TP }),
      `{"params":{"_meta":{"traceparent":"${TP}"}},"jsonrpc":"2.0","id":1,"method":"ping"}`,
    );
    assert.equal(splice(' { } ', { a: 'b' }), ' {"params":{"_meta":{"a":"b"}} } ');
  });

  it('creates _meta in empty and non-empty params', () => {
    assert.equal(splice('{"params":{}}', { a: 'b' }), '{"params":{"_meta":{"a":"b"}}}');
    assert.equal(splice('{"params":{ }}', { a: 'b' }), '{"params":{"_meta":{"a":"b"} }}');
    assert.equal(
      splice('{"params":{"x":[1,{"_meta":2}]}}', { a: 'b' }),
      '{"params":{"_meta":{"a":"b"},"x":[1,{"_meta":2}]}}',
    );
  });

  it('replaces existing fields and keeps the other _meta entries', () => {
    const body =
      '{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-old","progressToken":7}}}';
    const out = splice(body) as string;
    assert.deepEqual(JSON.parse(out), expected(JSON.parse(body), FIELDS));
    assert.ok(out.includes('"io.modelcontextprotocol/protocolVersion":"2026-07-28"'));
    assert.ok(!out.includes('00-old'));
  });

  it('recognises escaped key spellings', () => {
    const body = '{"par\\u0061ms":{"\\u005fmeta":{"trace\\u0070arent":{"nested":[1]}}}}';
    const out = splice(body) as string;
    assert.deepEqual(JSON.parse(out), expected(JSON.parse(body), FIELDS));
  });

  it('escapes what it writes', () => {
    const out = splice('{}', { 'k"\\': 'v"\n\u2028' }) as string;
    assert.deepEqual(JSON.parse(out), { params: { _meta: { 'k"\\': 'v"\n\u2028' } } });
  });

  it('refuses what it cannot splice unambiguously', () => {
    for (const body of [
      '[]',
      '"x"',
      '{"params":[1]}',
      '{"params":null}',
      '{"params":{"_meta":[]}}',
      '{"params":{"_meta":"x"}}',
      '{"params":{},"params":{}}',
      '{"params":{"_meta":{},"_meta":{}}}',
      '{"params":{"_meta":{"traceparent":"a","traceparent":"b"}}}',
      '{"params":{}} x',
      '{"params":{}',
      '\ufeff{}',
      '{"a":01}',
      '{"a":"\t"}',
      '{"a":[1,]}',
      '{"a":1,}',
      '',
    ]) {
      assert.equal(splice(body), undefined, body);
    }
    assert.equal(
      spliceMetaFields(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), FIELDS),
      undefined,
      'invalid UTF-8',
    );
  });

  it('returns the body itself when there is nothing to add', () => {
    const body = Buffer.from('not json');
    assert.equal(spliceMetaFields(body, {}), body);
  });

  it('walks deep nesting without recursion', () => {
    const deep = `{"params":{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    const out = splice(deep, { a: 'b' }) as string;
    assert.ok(out.startsWith('{"params":{"_meta":{"a":"b"},"x":[[['));
    assert.equal(splice(`{"x":${'['.repeat(1000)}}`), undefined);
  });

  it('never corrupts a case of the JSON parsing corpus, and refuses every invalid one', { skip }, () => {
    const names = readdirSync(CORPUS).filter((n) => n.endsWith('.json'));
    assert.ok(names.length >= 300, `corpus has ${names.length} files`);
    let spliced = 0;
    for (const name of names) {
      const bytes = readFileSync(join(CORPUS, name));
      const out = spliceMetaFields(bytes, FIELDS);
      const original = parses(bytes.toString('utf8'));
      if (name.startsWith('n_')) assert.equal(out, undefined, name);
      if (out === undefined) continue;
      spliced++;
      assert.notEqual(original, undefined, `${name}: spliced what JSON.parse refuses`);
      assert.deepEqual(JSON.parse(out.toString('utf8')), expected(original, FIELDS), name);
    }
    // Wrapped as params of a message, every case that parses to an object or is a valid value elsewhere must survive too.
    for (const name of names) {
      const bytes = readFileSync(join(CORPUS, name));
      const wrapped = Buffer.concat([Buffer.from('{"id":1,"params":{"arguments":'), bytes, Buffer.from('}}')]);
      const out = spliceMetaFields(wrapped, FIELDS);
      const original = parses(wrapped.toString('utf8'));
      if (name.startsWith('n_')) assert.equal(out, undefined, name);
      if (name.startsWith('y_')) assert.notEqual(out, undefined, name);
      if (out === undefined) continue;
      spliced++;
      assert.notEqual(original, undefined, `${name}: spliced what JSON.parse refuses`);
      const text = out.toString('utf8');
      assert.deepEqual(JSON.parse(text), expected(original, FIELDS), name);
      assert.ok(
        out.subarray(out.length - bytes.length - 2, out.length - 2).equals(bytes),
        `${name}: arguments are byte-identical`,
      );
    }
    assert.ok(spliced > 100, `spliced ${spliced}`);
  });
});
