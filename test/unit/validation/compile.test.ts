import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNSUPPORTED_REASONS, type Validate } from '../../../src/validation/types.ts';
import { MAX_SCHEMA_DEPTH } from '../../../src/validation/walk.ts';
import { MAX_PATTERN_LENGTH } from '../../../src/validation/regex.ts';
import { MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_NODES, MAX_STRING_CODE_UNITS } from '../../../src/validation/bounds.ts';
import { type UnsupportedReason } from '../../../src/validation/types.ts';
import { compileToolSchema } from '../../../src/validation/compile.ts';

function compiled(schema: unknown): Validate {
  const c = compileToolSchema(schema);
  assert.equal(c.ok, true, 'schema should compile');
  if (!c.ok) throw new Error('unreachable');
  return c.validate;
}

function refusal(schema: unknown): UnsupportedReason | undefined {
  const c = compileToolSchema(schema);
  return c.ok ? undefined : c.reason;
}

const objectSchema = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 2 }, count: { type: 'integer', default: 3 } },
  required: ['name'],
  additionalProperties: false,
};

test('valid arguments pass, invalid ones fail with pointers and keywords', () => {
  const validate = compiled(objectSchema);
  assert.deepEqual(validate({ name: 'ab' }), { ok: true });
  const r = validate({ name: 'a', count: 1.5, extra: true });
  assert.equal(r.ok, false);
  if (r.ok || r.code !== 'invalid_arguments') throw new Error('expected invalid_arguments');
  const pairs = r.errors.map((e) => `${e.keyword}@${e.instancePath}`).sort();
  assert.deepEqual(pairs, ['additionalProperties@', 'minLength@/name', 'type@/count']);
  const extra = r.errors.find((e) => e.keyword === 'additionalProperties');
  assert.deepEqual(
    extra,
    { instancePath: '', keyword: 'additionalProperties', count: 1 },
    "the parent and a count, never the caller's name",
  );
  for (const e of r.errors.filter((x) => x !== extra))
    assert.deepEqual(Object.keys(e).sort(), ['instancePath', 'keyword']);
});

test('required names the missing properties from the schema; additionalProperties counts, never names', () => {
  const validate = compiled({
    type: 'object',
    properties: {
      a: { type: 'string' },
      b: { type: 'string' },
      c: { type: 'object', properties: { d: { type: 'string' } }, additionalProperties: false },
    },
    required: ['a', 'b', 'c'],
    additionalProperties: false,
  });
  const missing = validate({ c: {} });
  if (missing.ok || missing.code !== 'invalid_arguments') throw new Error('expected invalid_arguments');
  assert.deepEqual(missing.errors, [{ instancePath: '', keyword: 'required', missing: ['a', 'b'] }]);
  const extra = validate({ a: 'x', b: 'y', c: { secretName1: 1, secretName2: 2 }, topSecret: 3 });
  if (extra.ok || extra.code !== 'invalid_arguments') throw new Error('expected invalid_arguments');
  assert.deepEqual(
    [...extra.errors].sort((x, y) => x.instancePath.localeCompare(y.instancePath)),
    [
      { instancePath: '', keyword: 'additionalProperties', count: 1 },
      { instancePath: '/c', keyword: 'additionalProperties', count: 2 },
    ],
  );
  assert.doesNotMatch(JSON.stringify(extra), /secret/i);
});

test('every refusal reason is reachable', () => {
  const cases: Record<UnsupportedReason, unknown> = {
    malformed_schema: { type: 'object', properties: { a: { type: 'strng' } } },
    unknown_keyword: { type: 'string', minLenght: 3 },
    remote_ref: { $ref: 'https://example.com/schema.json' },
    invalid_pattern: { type: 'string', pattern: '(a)\\1' },
    pattern_too_long: { type: 'string', pattern: 'a'.repeat(MAX_PATTERN_LENGTH + 1) },
    unsupported_dialect: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'string' },
    unsupported_shape: { contains: { type: 'string' }, unevaluatedItems: false },
    schema_too_large: nest(MAX_SCHEMA_DEPTH + 1),
  };
  for (const reason of UNSUPPORTED_REASONS) assert.equal(refusal(cases[reason]), reason, reason);
});

function nest(depth: number): unknown {
  let s: unknown = { type: 'string' };
  for (let i = 1; i < depth; i++) s = { type: 'object', properties: { a: s } };
  return s;
}

test('malformed schemas of every kind are refused, never thrown', () => {
  for (const s of [
    null,
    42,
    'x',
    [],
    undefined,
    { properties: [] },
    { allOf: {} },
    { exclusiveMinimum: true, type: 'integer' },
  ]) {
    const c = compileToolSchema(s);
    assert.equal(c.ok, false);
  }
  const cyclic: Record<string, unknown> = { type: 'object' };
  cyclic.properties = { self: cyclic };
  assert.equal(refusal(cyclic), 'malformed_schema');
});

test('patterns: lookaround, back-references and over-long patterns are refused; 512 code units are fine', () => {
  assert.equal(refusal({ pattern: '(?=a)b' }), 'invalid_pattern');
  assert.equal(refusal({ pattern: '(?<!a)b' }), 'invalid_pattern');
  assert.equal(refusal({ pattern: '(?<n>a)\\k<n>' }), 'invalid_pattern');
  assert.equal(refusal({ pattern: '[' }), 'invalid_pattern');
  assert.equal(refusal({ patternProperties: { '(a)\\1': true } }), 'invalid_pattern');
  assert.equal(refusal({ pattern: 'a'.repeat(MAX_PATTERN_LENGTH) }), undefined);
  assert.equal(refusal({ patternProperties: { ['b'.repeat(MAX_PATTERN_LENGTH + 1)]: true } }), 'pattern_too_long');
});

test('dialects: 2020-12 by default, draft-07 in its spellings, others refused', () => {
  for (const uri of [
    'http://json-schema.org/draft-07/schema#',
    'http://json-schema.org/draft-07/schema',
    'https://json-schema.org/draft/2020-12/schema',
  ]) {
    assert.equal(refusal({ $schema: uri, type: 'string' }), undefined, uri);
  }
  for (const uri of [
    'http://json-schema.org/draft-06/schema#',
    'https://json-schema.org/draft/2019-09/schema',
    'https://example.com/meta',
    7,
  ]) {
    assert.equal(refusal({ $schema: uri, type: 'string' }), 'unsupported_dialect', String(uri));
  }
  // prefixItems is a 2020-12 keyword; under draft-07 it is unknown.
  assert.equal(refusal({ prefixItems: [{ type: 'string' }] }), undefined);
  assert.equal(
    refusal({ $schema: 'http://json-schema.org/draft-07/schema#', prefixItems: [{ type: 'string' }] }),
    'unknown_keyword',
  );
  // A nested resource may not switch dialect.
  assert.equal(
    refusal({ $defs: { a: { $schema: 'http://json-schema.org/draft-07/schema#' } } }),
    'unsupported_dialect',
  );
  assert.equal(refusal({ $vocabulary: {} }), 'unsupported_dialect');
});

test('draft-07 ignores siblings of $ref, as its spec says', () => {
  const validate = compiled({
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: { s: { type: 'string' } },
    properties: { a: { $ref: '#/definitions/s', maxLength: 1 } },
  });
  assert.deepEqual(validate({ a: 'long' }), { ok: true });
  assert.equal(validate({ a: 1 }).ok, false);
});

test('annotations are allowed and never asserted or applied', () => {
  const validate = compiled({
    type: 'object',
    title: 't',
    description: 'd',
    $comment: 'c',
    examples: [{}],
    deprecated: true,
    properties: {
      url: { type: 'string', format: 'uri', readOnly: true, writeOnly: false },
      n: { type: 'number', default: 5 },
    },
  });
  assert.deepEqual(validate({ url: 'not a uri' }), { ok: true });
});

test('validation never mutates its input (no defaults, coercion or removal)', () => {
  const validate = compiled({
    type: 'object',
    properties: {
      n: { type: 'number', default: 5 },
      s: { type: 'string' },
      o: { type: 'object', properties: { d: { default: [] } } },
    },
    additionalProperties: false,
  });
  for (const args of [{ o: {} }, { s: '12', extra: 1 }, { n: '3' }]) {
    const before = JSON.stringify(args);
    const copy = structuredClone(args);
    validate(args);
    assert.equal(JSON.stringify(args), before);
    assert.deepEqual(args, copy);
  }
});

test('results never carry argument values', () => {
  const secret = 'sk-live-4f8a9c1e2d7b6a5f-SECRET';
  const validate = compiled({
    type: 'object',
    properties: {
      token: { type: 'string', maxLength: 3, pattern: '^x', enum: ['a'], const: 'b', format: 'email' },
      n: { type: 'integer', maximum: 1 },
      list: { type: 'array', items: { type: 'number' }, uniqueItems: true },
    },
    additionalProperties: false,
    required: ['missing'],
  });
  const r = validate({ token: secret, n: 987654321, list: [secret, secret], stray: secret });
  assert.equal(r.ok, false);
  const text = JSON.stringify(r);
  assert.ok(!text.includes(secret));
  assert.ok(!text.includes('sk-live'));
  assert.ok(!text.includes('987654321'));
  assert.ok(!text.includes('stray'), 'additionalProperties reports the object, not the stray key');
});

test('__proto__ and constructor as required properties need own properties', () => {
  const validate = compiled({ type: 'object', required: ['__proto__', 'constructor', 'toString'] });
  assert.equal(validate({}).ok, false);
  assert.equal(validate(JSON.parse('{"__proto__": 1, "constructor": 2, "toString": 3}')).ok, true);
  assert.equal(validate(JSON.parse('{"constructor": 2, "toString": 3}')).ok, false);
  // ajv drops a `__proto__` entry of `properties`; toolgate moves it to an exact pattern.
  const proto = compiled(
    JSON.parse('{"properties": {"__proto__": {"type": "number"}}, "additionalProperties": false}'),
  );
  assert.equal(proto(JSON.parse('{"__proto__": "x"}')).ok, false);
  assert.equal(proto(JSON.parse('{"__proto__": 1}')).ok, true);
  assert.equal(proto({ other: 1 }).ok, false);
  // Other keywords keyed by property names have no such equivalent: refused.
  assert.equal(refusal(JSON.parse('{"dependentSchemas": {"__proto__": {"required": ["a"]}}}')), 'unsupported_shape');
  assert.equal(
    refusal(JSON.parse('{"properties": {"__proto__": true}, "patternProperties": {"^__proto__$": false}}')),
    'unsupported_shape',
  );
  const ctor = compiled({ properties: { constructor: { type: 'number' } } });
  assert.equal(ctor({ constructor: 'x' }).ok, false);
  assert.equal(ctor({}).ok, true);
});

test('bounds: depth, node count and string code units, each at and over its limit', () => {
  const validate = compiled({});
  const deep = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  assert.deepEqual(validate(deep(MAX_ARGUMENT_DEPTH)), { ok: true });
  assert.deepEqual(validate(deep(MAX_ARGUMENT_DEPTH + 1)), { ok: false, code: 'bounds_exceeded' });
  // Far deeper than any recursive validator could survive: refused without recursion.
  assert.deepEqual(validate(deep(200_000)), { ok: false, code: 'bounds_exceeded' });

  assert.deepEqual(validate(Array.from({ length: MAX_ARGUMENT_NODES - 1 }, () => 0)), { ok: true });
  assert.deepEqual(validate(Array.from({ length: MAX_ARGUMENT_NODES }, () => 0)), {
    ok: false,
    code: 'bounds_exceeded',
  });

  assert.deepEqual(validate({ k: 'x'.repeat(MAX_STRING_CODE_UNITS - 1) }), { ok: true });
  assert.deepEqual(validate({ k: 'x'.repeat(MAX_STRING_CODE_UNITS) }), { ok: false, code: 'bounds_exceeded' });
  assert.deepEqual(validate(['x'.repeat(MAX_STRING_CODE_UNITS / 2), 'y'.repeat(MAX_STRING_CODE_UNITS / 2 + 1)]), {
    ok: false,
    code: 'bounds_exceeded',
  });
});

test('values JSON cannot carry are invalid, at their pointer', () => {
  const validate = compiled({});
  assert.deepEqual(validate({ a: [1, Number.NaN] }), {
    ok: false,
    code: 'invalid_arguments',
    errors: [{ instancePath: '/a/1', keyword: 'type' }],
  });
  assert.equal(validate({ f: () => 1 }).ok, false);
  assert.equal(validate({ d: new Date(0) }).ok, false);
  assert.equal(validate(undefined).ok, false);
});

test('a schema recursing without consuming input fails closed', () => {
  const c = compileToolSchema({ $defs: { a: { allOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' });
  assert.ok(!c.ok || !c.validate({}).ok);
});

test('the compiled validator is independent of later changes to the schema object', () => {
  const schema = { type: 'object', properties: { a: { enum: ['x'] } } };
  const validate = compiled(schema);
  schema.properties.a.enum.push('y');
  assert.equal(validate({ a: 'y' }).ok, false);
});

test('an empty enum accepts nothing, in both dialects, nested or not', () => {
  for (const schema of [
    { enum: [] },
    { $schema: 'http://json-schema.org/draft-07/schema#', enum: [] },
    { allOf: [{}], enum: [] },
  ]) {
    const validate = compiled(schema);
    for (const v of [null, 0, 'a', [], {}, false]) assert.equal(validate(v).ok, false, JSON.stringify(v));
  }
  const nested = compiled({ properties: { a: { enum: [] }, b: { not: { enum: [] } } } });
  assert.equal(nested({}).ok, true);
  assert.equal(nested({ a: 1 }).ok, false);
  assert.equal(nested({ b: 1 }).ok, true, 'not of nothing is everything');
});

test('$dynamicRef is enforced only where the spec makes it a $ref', () => {
  const items = (dynamicRef: string, extra: object = {}) => ({
    type: 'array',
    items: { $dynamicRef: dynamicRef },
    $defs: { s: { $dynamicAnchor: 's', type: 'string' }, a: { $anchor: 'a', type: 'string' }, ...extra },
  });
  for (const ref of ['#/$defs/s', '#a', '#s']) {
    const validate = compiled(items(ref));
    assert.equal(validate(['x']).ok, true, ref);
    assert.equal(validate([1]).ok, false, ref);
  }
  // A second declaration of the name makes the resolution dynamic: refused.
  assert.equal(refusal(items('#s', { t: { $id: 'https://example.com/t', $dynamicAnchor: 's' } })), 'unsupported_shape');
  // So does a reference the detector cannot follow (it might reach one).
  assert.equal(
    refusal({ ...items('#s'), allOf: [{ $ref: 'https://json-schema.org/draft/2020-12/schema' }] }),
    'unsupported_shape',
  );
});

test('errors are capped and deduplicated', () => {
  const validate = compiled({ type: 'array', items: { type: 'string' } });
  const r = validate(Array.from({ length: 100 }, () => 1));
  if (r.ok || r.code !== 'invalid_arguments') throw new Error('expected invalid_arguments');
  assert.equal(r.errors.length, 32);
});

test('says whether any keyword compares values, where a rounded number could change the verdict', () => {
  const compares = (schema: unknown) => {
    const c = compileToolSchema(schema);
    assert.equal(c.ok, true, JSON.stringify(schema));
    return c.ok && c.comparesValues;
  };
  assert.equal(compares(objectSchema), false, 'types, lengths and required never compare numbers');
  assert.equal(compares(true), false);
  assert.equal(compares({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } }), false);
  for (const keyword of [
    { maximum: 5 },
    { minimum: 5 },
    { exclusiveMaximum: 5 },
    { exclusiveMinimum: 5 },
    { multipleOf: 3 },
    { const: 9007199254740992 },
    { enum: [1, 2] },
    { uniqueItems: true },
  ]) {
    assert.equal(compares({ type: 'object', properties: { n: keyword } }), true, JSON.stringify(keyword));
    assert.equal(
      compares({ $defs: { deep: { anyOf: [{ not: keyword }] } }, properties: { n: { $ref: '#/$defs/deep' } } }),
      true,
      'also deep inside',
    );
  }
  // The reason for the flag: after JSON.parse, 9007199254740993 passes a
  // maximum of 9007199254740992 that the digits themselves exceed.
  const c = compileToolSchema({ type: 'object', properties: { n: { type: 'integer', maximum: 9007199254740992 } } });
  assert.ok(c.ok);
  assert.deepEqual(c.validate(JSON.parse('{"n":9007199254740993}')), { ok: true });
});

test('an argument named like a declared property in another letter case is refused at its pointer', () => {
  const validate = compiled({
    type: 'object',
    properties: {
      path: { type: 'string', pattern: '^/safe/' },
      opts: { type: 'object', properties: { key: { type: 'string' } } },
    },
  });
  const variant = (args: unknown) => {
    const r = validate(args);
    return !r.ok && r.code === 'case_variant_key' ? r.errors : undefined;
  };
  assert.deepEqual(variant({ Path: '/etc/passwd' }), [{ instancePath: '/Path', keyword: 'properties' }]);
  assert.deepEqual(variant({ path: '/safe/a', opts: { '\u212aey': 'x' } }), [
    { instancePath: '/opts/\u212aey', keyword: 'properties' },
  ]);
  assert.deepEqual(
    variant({ list: [{ PATH: 1 }] }),
    [{ instancePath: '/list/0/PATH', keyword: 'properties' }],
    'at any depth',
  );
  assert.deepEqual(
    validate({ path: '/safe/a', Other: 1, opts: { key: 'k' } }),
    { ok: true },
    'undeclared names keep any case',
  );
  assert.deepEqual(compiled({ type: 'object' })({ Path: 1 }), { ok: true }, 'a schema that declares no property');
});

test('x-mcp-header (MCP 2026-07-28) is an annotation, not an unknown keyword', () => {
  const validate = compiled({
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    required: ['region'],
  });
  assert.deepEqual(validate({ region: 'us-west1' }), { ok: true });
  assert.equal(validate({}).ok, false);
});
