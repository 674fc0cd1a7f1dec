import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CURSOR_TTL_MS, CursorCodec, type CursorBinding } from '../../../src/discovery/cursor.ts';
import { fitPage, MAX_RESPONSE_BYTES } from '../../../src/discovery/page.ts';
import { readDiscoverParams } from '../../../src/discovery/params.ts';

describe('discovery input rules', () => {
  const bad: [string, unknown, string, string][] = [
    ['no query', {}, '', 'required'],
    ['a numeric query', { query: 7 }, '/query', 'type'],
    ['an empty query', { query: '' }, '/query', 'minLength'],
    ['a blank query', { query: '   ' }, '/query', 'minLength'],
    ['a 501-character query', { query: 'a'.repeat(501) }, '/query', 'maxLength'],
    ['a control character', { query: 'send\u0007mail' }, '/query', 'pattern'],
    ['a newline', { query: 'send\nmail' }, '/query', 'pattern'],
    ['a C1 control', { query: 'send\u0085mail' }, '/query', 'pattern'],
    ['limit 0', { query: 'x', limit: 0 }, '/limit', 'minimum'],
    ['limit 17', { query: 'x', limit: 17 }, '/limit', 'maximum'],
    ['a fractional limit', { query: 'x', limit: 1.5 }, '/limit', 'type'],
    ['a string limit', { query: 'x', limit: '3' }, '/limit', 'type'],
    ['an unknown param (at the parent, never named)', { query: 'x', page: 2 }, '', 'additionalProperties'],
    ['a numeric cursor', { query: 'x', cursor: 5 }, '/cursor', 'type'],
  ];
  for (const [name, raw, instancePath, keyword] of bad) {
    it(`refuses ${name}`, () => {
      const r = readDiscoverParams(raw, true);
      assert.equal(r.ok, false);
      assert.ok(
        !r.ok && r.errors.some((e) => e.instancePath === instancePath && e.keyword === keyword),
        JSON.stringify(r),
      );
    });
  }
  it('accepts the edges and applies the default limit', () => {
    assert.deepEqual(readDiscoverParams({ query: 'a'.repeat(500), limit: 16 }, true), {
      ok: true,
      params: { query: 'a'.repeat(500), limit: 16, cursor: undefined },
    });
    assert.deepEqual(readDiscoverParams({ query: 'send mail' }, true), {
      ok: true,
      params: { query: 'send mail', limit: 16, cursor: undefined },
    });
    assert.equal(readDiscoverParams({ query: 'x', limit: 1 }, true).ok, true);
  });
  it('has no cursor on the tool door', () => {
    const r = readDiscoverParams({ query: 'x', cursor: 'abc' }, false);
    assert.deepEqual(r, { ok: false, errors: [{ instancePath: '', keyword: 'additionalProperties', count: 1 }] });
    assert.deepEqual(readDiscoverParams({}, true), {
      ok: false,
      errors: [{ instancePath: '', keyword: 'required', missing: ['query'] }],
    });
  });
  it('never throws on hostile input', () => {
    for (const raw of [null, undefined, 3, 'q', [], [{ query: 'x' }], Object.create(null)])
      assert.equal(readDiscoverParams(raw, true).ok, false);
  });
});

describe('discovery cursors', () => {
  const binding: CursorBinding = {
    principal: 'alice',
    scopes: ['a', 'b'],
    catalogueDigest: 'c1',
    revision: 7,
    grantsDigest: 'g1',
    query: 'send mail',
    limit: 4,
  };
  const variants: [string, Partial<CursorBinding>][] = [
    ['principal', { principal: 'bob' }],
    ['scopes', { scopes: ['a'] }],
    ['catalogue digest', { catalogueDigest: 'c2' }],
    ['grant revision', { revision: 8 }],
    ['grant rows', { grantsDigest: 'g2' }],
    ['query', { query: 'send mails' }],
    ['limit', { limit: 5 }],
  ];
  it('round-trips for the same binding', () => {
    const codec = new CursorCodec(() => 1_000_000);
    const c = codec.encode(binding, { offset: 4, issuedAt: 1_000_000 });
    assert.deepEqual(codec.decode(c, binding), { offset: 4, issuedAt: 1_000_000 });
    assert.deepEqual(
      codec.decode(c, { ...binding, scopes: ['b', 'a'] }),
      { offset: 4, issuedAt: 1_000_000 },
      'scope order does not matter',
    );
  });
  for (const [field, change] of variants) {
    it(`is invalid once the ${field} differs`, () => {
      const codec = new CursorCodec(() => 1_000_000);
      const c = codec.encode(binding, { offset: 4, issuedAt: 1_000_000 });
      assert.equal(codec.decode(c, { ...binding, ...change }), undefined);
    });
  }
  it('is invalid when any character of it is changed', () => {
    const codec = new CursorCodec(() => 1_000_000);
    const c = codec.encode(binding, { offset: 4, issuedAt: 1_000_000 });
    for (let i = 0; i < c.length; i++) {
      const flipped = c.slice(0, i) + (c[i] === 'A' ? 'B' : 'A') + c.slice(i + 1);
      if (flipped !== c) assert.equal(codec.decode(flipped, binding), undefined, `position ${i}`);
    }
    // base64url's last character has spare bits: every other spelling of the same signature bytes is refused too.
    const signature = c.slice(c.indexOf('.') + 1);
    const last = signature.at(-1) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBits = Array.from(alphabet).filter(
      (ch) => ch !== last && alphabet.indexOf(ch) >> 2 === alphabet.indexOf(last) >> 2,
    );
    assert.equal(sameBits.length, 3);
    for (const ch of sameBits)
      assert.equal(codec.decode(c.slice(0, -1) + ch, binding), undefined, `last character ${ch}`);
    const [payload] = c.split('.');
    const forged = Buffer.from(JSON.stringify(['x', 0, 1_000_000])).toString('base64url');
    assert.equal(codec.decode(`${forged}.${c.split('.')[1]}`, binding), undefined);
    assert.equal(codec.decode(payload as string, binding), undefined);
  });
  it('is invalid from another process (another key)', () => {
    const c = new CursorCodec(() => 1_000_000).encode(binding, { offset: 4, issuedAt: 1_000_000 });
    assert.equal(new CursorCodec(() => 1_000_000).decode(c, binding), undefined);
  });
  it('expires 120 s after the first page, however often it is paged', () => {
    let now = 1_000_000;
    const codec = new CursorCodec(() => now);
    const c = codec.encode(binding, { offset: 4, issuedAt: 1_000_000 });
    now += CURSOR_TTL_MS;
    assert.ok(codec.decode(c, binding));
    const later = codec.encode(binding, { offset: 8, issuedAt: 1_000_000 });
    now += 1;
    assert.equal(codec.decode(c, binding), undefined);
    assert.equal(codec.decode(later, binding), undefined, 'paging does not renew');
  });
});

describe('discovery pages', () => {
  const tool = (name: string, bytes: number) => ({
    name,
    inputSchema: { type: 'object', description: 'x'.repeat(bytes) },
  });
  it('keeps whole schemas and stops before the 64 KiB bound', () => {
    const tools = [tool('a', 30_000), tool('b', 30_000), tool('c', 30_000)];
    const page = fitPage(1, tools, (p) => ({ tools: p }));
    assert.ok(page.ok);
    assert.equal(page.count, 2);
    assert.ok(Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: page.result })) <= MAX_RESPONSE_BYTES);
    assert.deepEqual((page.result as { tools: unknown[] }).tools, tools.slice(0, 2));
  });
  it('refuses a schema that cannot fit alone instead of truncating it', () => {
    assert.deepEqual(
      fitPage(1, [tool('huge', 70_000), tool('b', 10)], (p) => ({ tools: p })),
      { ok: false, error: 'tool_schema_too_large' },
    );
  });
  it('counts the envelope, including a long id', () => {
    const id = 'i'.repeat(6_000);
    const tools = [tool('a', 30_000), tool('b', 30_000)];
    const withShortId = fitPage(1, tools, (p) => ({ tools: p }));
    assert.ok(withShortId.ok && withShortId.count === 2);
    const withLongId = fitPage(id, tools, (p) => ({ tools: p }));
    assert.ok(withLongId.ok && withLongId.count === 1);
  });
});
