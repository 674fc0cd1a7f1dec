import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { catalogueDigest, toolDigest } from '../../../src/catalogue/digest.ts';
import { canonicalize, MAX_DEPTH, sha256Hex } from '../../../src/json/canonical.ts';
import { corpus } from '../../helpers/testdata.ts';

function canon(v: unknown): string {
  const r = canonicalize(v);
  assert.ok(r.ok, `expected canonical JSON, got ${JSON.stringify(r)}`);
  return r.text;
}

function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe('canonicalize (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units, as in RFC 8785 section 3.2.3', () => {
    const input = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
        '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    );
    // Object.keys would list "1" first (integer-like keys), so the text itself is checked.
    assert.equal(
      canon(input),
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('orders a surrogate pair below U+E000..U+FFFF, unlike code point order', () => {
    // U+1F600 is 0xD83D 0xDE00 in UTF-16, so it sorts before U+FB33 but after U+20AC.
    assert.equal(canon({ '\ufb33': 1, '\u{1f600}': 2, '\u20ac': 3 }), '{"\u20ac":3,"\u{1f600}":2,"\ufb33":1}');
  });

  it('reproduces the RFC 8785 section 3.2.2 example byte for byte', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/","literals":[null,true,false]}',
    );
    assert.equal(
      canon(input),
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('serialises numbers as in RFC 8785 appendix B', () => {
    const cases: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of cases) assert.equal(canon(fromBits(bits)), expected, bits);
  });

  it('spells the brief’s examples in ECMAScript form', () => {
    assert.equal(
      canon([1e21, 1e20, 0.1, -0, 1e-7, 1e-6, 100, 1.5e300]),
      '[1e+21,100000000000000000000,0.1,0,1e-7,0.000001,100,1.5e+300]',
    );
  });

  it('refuses NaN and infinities instead of aliasing them to null', () => {
    for (const v of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      assert.deepEqual(canonicalize({ a: [v] }), { ok: false, code: 'non_finite_number' });
    }
  });

  it('escapes strings exactly as JSON.stringify does, lone surrogates included', () => {
    const s = 'a"b\\c\u0000\u0008\t\n\u000b\f\r\u001f\u007f\u2028/\ud800x\udc00';
    assert.equal(canon(s), JSON.stringify(s));
    assert.equal(canon('\ud800'), '"\\ud800"');
    assert.equal(canon({ '\udfff': 1 }), '{"\\udfff":1}');
  });

  it('omits undefined properties and refuses values JSON cannot carry', () => {
    assert.equal(canon({ b: undefined, a: 1 }), '{"a":1}');
    assert.deepEqual(canonicalize([undefined]), { ok: false, code: 'unsupported_value' });
    assert.deepEqual(canonicalize({ a: () => 1 }), { ok: false, code: 'unsupported_value' });
    assert.deepEqual(canonicalize({ a: new Date(0) }), { ok: false, code: 'unsupported_value' });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.deepEqual(canonicalize(cyclic), { ok: false, code: 'unsupported_value' });
  });

  it('writes an integer read exactly (a bigint) with all its digits, which no double spells', () => {
    assert.equal(canon({ a: 9007199254740993n }), '{"a":9007199254740993}');
    assert.notEqual(canon({ a: 9007199254740993n }), canon({ a: 9007199254740992 }));
    assert.equal(canon([-18446744073709551617n]), '[-18446744073709551617]');
  });

  it('accepts a shared (non-cyclic) reference and null-prototype objects', () => {
    const shared = { x: 1 };
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { z: 1, y: 2 });
    assert.equal(canon({ a: shared, b: shared, c: bare }), '{"a":{"x":1},"b":{"x":1},"c":{"y":2,"z":1}}');
  });

  it('keeps an own __proto__ key from JSON.parse', () => {
    assert.equal(canon(JSON.parse('{"__proto__":{"a":1},"b":2}')), '{"__proto__":{"a":1},"b":2}');
  });

  it('refuses nesting deeper than MAX_DEPTH without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.deepEqual(canonicalize(deep), { ok: false, code: 'too_deep' });
    let ok: unknown = 1;
    for (let i = 0; i < MAX_DEPTH; i++) ok = [ok];
    assert.equal(canon(ok).length, MAX_DEPTH * 2 + 1);
  });
});

describe('tool and catalogue digests', () => {
  const tool = {
    name: 'search',
    title: 'Search',
    description: 'Finds things',
    inputSchema: { type: 'object', properties: { q: { type: 'string', maxLength: 100 } }, required: ['q'] },
    outputSchema: { type: 'object' },
    annotations: { readOnlyHint: true },
  };

  it('is SHA-256 over the canonical contract', () => {
    const expected = createHash('sha256').update(canon(tool), 'utf8').digest('hex');
    assert.deepEqual(toolDigest(tool), { ok: true, digest: expected });
    assert.equal(sha256Hex(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('ignores key order, number spelling and fields outside the contract', () => {
    const reordered = JSON.parse(
      '{"annotations":{"readOnlyHint":true},"outputSchema":{"type":"object"},"inputSchema":{"required":["q"],' +
        '"properties":{"q":{"maxLength":1.00e2,"type":"string"}},"type":"object"},"description":"Finds things",' +
        '"title":"Search","name":"search","icons":[{"src":"x"}],"_meta":{"k":1},"execution":{"taskSupport":"forbidden"}}',
    );
    assert.deepEqual(toolDigest(reordered), toolDigest(tool));
  });

  it('changes when any contract field changes, and tells absent from null', () => {
    const base = toolDigest(tool);
    const variants: Record<string, unknown>[] = [
      { ...tool, name: 'search2' },
      { ...tool, title: 'Search!' },
      { ...tool, description: 'Finds things.' },
      { ...tool, inputSchema: { type: 'object' } },
      { ...tool, outputSchema: { type: 'array' } },
      { ...tool, annotations: { readOnlyHint: false } },
      { ...tool, annotations: null },
    ];
    const { annotations: _dropped, ...withoutAnnotations } = tool;
    variants.push(withoutAnnotations);
    const digests = new Set(variants.map((v) => JSON.stringify(toolDigest(v))));
    assert.equal(digests.size, variants.length);
    assert.ok(!digests.has(JSON.stringify(base)));
  });

  it('reports a contract canonical JSON refuses', () => {
    assert.deepEqual(toolDigest({ name: 'x', inputSchema: { maximum: Number.POSITIVE_INFINITY } }), {
      ok: false,
      code: 'non_finite_number',
    });
  });

  it('the catalogue digest ignores listing order and depends on every tool', () => {
    const d = ['b'.repeat(64), 'a'.repeat(64), 'c'.repeat(64)];
    assert.equal(catalogueDigest(d), catalogueDigest([...d].reverse()));
    assert.equal(catalogueDigest(d), sha256Hex(JSON.stringify([...d].sort())));
    assert.notEqual(catalogueDigest(d), catalogueDigest(d.slice(1)));
    assert.notEqual(catalogueDigest([]), catalogueDigest(['a'.repeat(64)]));
  });

  const live = corpus('livemcpbench');
  it('is deterministic over a real catalogue whatever the key order', { skip: live.skip }, () => {
    const catalog = JSON.parse(readFileSync(join(live.path, 'catalog.json'), 'utf8')) as Record<string, unknown>[];
    const digests = catalog.map((t) => toolDigest(t));
    const shuffled = catalog.map((t) => reverseKeys(t) as Record<string, unknown>);
    assert.deepEqual(
      shuffled.map((t) => toolDigest(t)),
      digests,
    );
    assert.ok(digests.every((d) => d.ok));
    // Two tools share a digest exactly when their canonical contracts are equal.
    const contracts = catalog.map(({ server: _s, ...t }) => canon(t));
    assert.equal(new Set(digests.map((d) => (d.ok ? d.digest : ''))).size, new Set(contracts).size);
  });
});

function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.entries(v)
      .reverse()
      .map(([k, x]) => [k, reverseKeys(x)]),
  );
}
