import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REGISTERED_SCHEMAS, type RegistryErrorReason } from '../../../src/validation/registry.ts';
import { type Validate } from '../../../src/validation/types.ts';
import { type UnsupportedReason } from '../../../src/validation/types.ts';
import { createSchemaRegistry, SchemaRegistry } from '../../../src/validation/registry.ts';
import { SchemaCache } from '../../../src/validation/cache.ts';
import { compileToolSchema } from '../../../src/validation/compile.ts';

const DRAFT7 = 'http://json-schema.org/draft-07/schema#';

function registry(schemas: Record<string, unknown>): SchemaRegistry {
  const built = createSchemaRegistry(schemas);
  if (!built.ok) throw new Error(`registry refused: ${JSON.stringify(built.errors)}`);
  return built.registry;
}

function errors(
  schemas: Record<string, unknown> | Map<string, unknown>,
): { uri: string; reason: RegistryErrorReason }[] {
  const built = createSchemaRegistry(schemas);
  assert.equal(built.ok, false);
  return built.ok ? [] : [...built.errors];
}

function compiled(schema: unknown, reg: SchemaRegistry): Validate {
  const c = compileToolSchema(schema, { registry: reg });
  if (!c.ok) throw new Error(`refused: ${c.reason}`);
  return c.validate;
}

function refusal(schema: unknown, reg?: SchemaRegistry): UnsupportedReason | undefined {
  const c = compileToolSchema(schema, { registry: reg });
  return c.ok ? undefined : c.reason;
}

const shared = registry({
  'https://schemas.example.com/id.json': { type: 'string', pattern: '^[a-z]+-[0-9]+$' },
  'https://schemas.example.com/defs.json': {
    $defs: { count: { type: 'integer', minimum: 0 }, named: { $anchor: 'named', type: 'string', minLength: 2 } },
  },
  // A relative ref resolves against the registration URI, into another registered schema.
  'https://schemas.example.com/ticket.json': {
    type: 'object',
    properties: { id: { $ref: 'id.json' }, n: { $ref: 'defs.json#/$defs/count' } },
    required: ['id'],
  },
  // Known by its registration URI and by its own `$id`.
  'https://schemas.example.com/alias.json': { $id: 'https://schemas.example.com/real.json', type: 'boolean' },
});

test('tool schemas resolve $refs into registered schemas: roots, pointers, anchors, chains, aliases', () => {
  const v = compiled(
    {
      type: 'object',
      properties: {
        ticket: { $ref: 'https://schemas.example.com/ticket.json' },
        n: { $ref: 'https://schemas.example.com/defs.json#/$defs/count' },
        name: { $ref: 'https://schemas.example.com/defs.json#named' },
        a: { $ref: 'https://schemas.example.com/alias.json' },
        b: { $ref: 'https://schemas.example.com/real.json' },
      },
    },
    shared,
  );
  assert.deepEqual(v({ ticket: { id: 'abc-1', n: 2 }, n: 0, name: 'xy', a: true, b: false }), { ok: true });
  for (const bad of [
    { ticket: { id: 'ABC' } },
    { ticket: { id: 'abc-1', n: -1 } },
    { ticket: {} },
    { n: 1.5 },
    { name: 'x' },
    { a: 1 },
    { b: 'x' },
  ]) {
    assert.equal(v(bad).ok, false, JSON.stringify(bad));
  }
  const r = v({ ticket: { id: 'abc-1', n: -1 } });
  assert.ok(!r.ok && r.code === 'invalid_arguments');
  assert.deepEqual(r.errors, [{ instancePath: '/ticket/n', keyword: 'minimum' }]);
});

test('a $ref to anything not registered stays remote_ref; without a registry nothing resolves', () => {
  assert.equal(refusal({ $ref: 'https://schemas.example.com/missing.json' }, shared), 'remote_ref');
  assert.equal(refusal({ $ref: 'https://schemas.example.com/defs.json#/$defs/nope' }, shared), 'remote_ref');
  assert.equal(refusal({ $ref: 'https://schemas.example.com/id.json' }), 'remote_ref');
  assert.equal(refusal({ $ref: 'https://schemas.example.com/id.json' }, undefined), 'remote_ref');
});

test('registration checks every schema once and reports every failure by URI, never by content', () => {
  const secret = 'SECRET-SCHEMA-TEXT';
  const found = errors({
    'https://ok.example.com/a.json': { type: 'string' },
    'relative.json': { type: 'string' },
    'https://x.example.com/f.json#frag': { type: 'string' },
    'HTTPS://X.example.com/upper.json': { type: 'string' },
    'urn:toolgate:root': { type: 'string' },
    'https://x.example.com/rel-id.json': { $id: 'other.json', type: 'string' },
    'https://x.example.com/typo.json': { type: 'string', minLenght: 3, description: secret },
    'https://x.example.com/d4.json': { $schema: 'http://json-schema.org/draft-04/schema#', type: 'string' },
    'https://x.example.com/meta.json': { type: 'strng', title: secret },
    'https://x.example.com/re.json': { pattern: '(a)\\1' },
    'https://x.example.com/dyn.json': { $dynamicAnchor: 'n', items: { $dynamicRef: '#n' } },
    'https://x.example.com/dup.json': { $id: 'https://ok.example.com/a.json' },
  });
  assert.deepEqual(found.map((e) => `${e.uri} ${e.reason}`).sort(), [
    'HTTPS://X.example.com/upper.json invalid_uri',
    'https://x.example.com/d4.json unsupported_dialect',
    'https://x.example.com/dup.json duplicate_uri',
    'https://x.example.com/dyn.json unsupported_shape',
    'https://x.example.com/f.json#frag invalid_uri',
    'https://x.example.com/meta.json malformed_schema',
    'https://x.example.com/re.json invalid_pattern',
    'https://x.example.com/rel-id.json invalid_uri',
    'https://x.example.com/typo.json unknown_keyword',
    'relative.json invalid_uri',
    'urn:toolgate:root invalid_uri',
  ]);
  assert.ok(!JSON.stringify(found).includes(secret));
});

test('registration refuses inputs that are not a URI map, and too many schemas', () => {
  for (const bad of [null, [], 'x', 3] as unknown[]) {
    assert.deepEqual(errors(bad as Record<string, unknown>), [{ uri: '', reason: 'malformed_schema' }]);
  }
  const many: Record<string, unknown> = {};
  for (let i = 0; i <= MAX_REGISTERED_SCHEMAS; i++) many[`https://x.example.com/${i}.json`] = true;
  assert.deepEqual(errors(many), [{ uri: '', reason: 'too_many_schemas' }]);
  assert.equal(createSchemaRegistry({ 'https://x.example.com/a#': true }).ok, true, 'an empty fragment is allowed');
  assert.equal(
    createSchemaRegistry(new Map([['https://x.example.com/m', { type: 'string' }]])).ok,
    true,
    'a Map works too',
  );
});

test("a registered $schema binds its dialect; without one, the referencing tool's dialect applies", () => {
  const reg = registry({
    'https://x.example.com/d7.json': { $schema: DRAFT7, items: [{ type: 'string' }] },
    'https://x.example.com/neutral.json': {
      definitions: { s: { type: 'string' } },
      $ref: '#/definitions/s',
      maxLength: 1,
    },
    'https://x.example.com/tuple.json': { items: [{ type: 'string' }] },
  });
  const d7 = compiled({ $schema: DRAFT7, $ref: 'https://x.example.com/d7.json' }, reg);
  assert.equal(d7(['a', 1]).ok, true);
  assert.equal(d7([1]).ok, false);
  assert.equal(refusal({ $ref: 'https://x.example.com/d7.json' }, reg), 'unsupported_dialect');
  // Draft-07 ignores $ref siblings, 2020-12 applies them: the same registered schema, two meanings.
  assert.equal(compiled({ $schema: DRAFT7, $ref: 'https://x.example.com/neutral.json' }, reg)('long').ok, true);
  assert.equal(compiled({ $ref: 'https://x.example.com/neutral.json' }, reg)('long').ok, false);
  // Array-form items is draft-07 only, so only draft-07 tools may use it.
  assert.equal(compiled({ $schema: DRAFT7, $ref: 'https://x.example.com/tuple.json' }, reg)([1]).ok, false);
  assert.equal(refusal({ $ref: 'https://x.example.com/tuple.json' }, reg), 'unsupported_dialect');
});

test('shapes ajv mis-enforces are refused when reached through registered schemas', () => {
  const reg = registry({
    'https://x.example.com/contains.json': { contains: { type: 'string' } },
    'https://x.example.com/via.json': { allOf: [{ $ref: 'contains.json' }] },
    'https://x.example.com/if.json': {
      if: { properties: { a: true }, required: ['a'] },
      else: { properties: { b: true } },
    },
  });
  // ajv would count every item as evaluated by the registered `contains`.
  assert.equal(
    refusal({ prefixItems: [true], $ref: 'https://x.example.com/contains.json', unevaluatedItems: false }, reg),
    'unsupported_shape',
  );
  assert.equal(
    refusal({ allOf: [{ $ref: 'https://x.example.com/via.json' }], unevaluatedItems: false }, reg),
    'unsupported_shape',
  );
  assert.equal(
    refusal({ $ref: 'https://x.example.com/if.json', unevaluatedProperties: false }, reg),
    'unsupported_shape',
  );
  // The same registered schemas are fine where no unevaluated keyword sees them.
  const v = compiled({ $ref: 'https://x.example.com/via.json' }, reg);
  assert.equal(v([1, 'a']).ok, true);
  assert.equal(v([1]).ok, false);
});

test('$dynamicRef in registered schemas: static ones are enforced as $ref, dynamic ones refused', () => {
  const reg = registry({
    'https://x.example.com/static.json': {
      type: 'array',
      items: { $dynamicRef: '#/$defs/s' },
      $defs: { s: { type: 'string' } },
    },
    'https://x.example.com/anchor.json': {
      type: 'array',
      items: { $dynamicRef: '#a' },
      $defs: { s: { $anchor: 'a', type: 'string' } },
    },
  });
  for (const uri of ['https://x.example.com/static.json', 'https://x.example.com/anchor.json']) {
    const v = compiled({ $ref: uri }, reg);
    assert.equal(v(['x']).ok, true, uri);
    assert.equal(v([1]).ok, false, uri);
  }
  // A tool could extend a dynamic anchor, so a registered dynamic one is refused even if alone.
  const found = errors({
    'https://x.example.com/tree.json': {
      $dynamicAnchor: 'node',
      type: 'object',
      properties: { kids: { items: { $dynamicRef: '#node' } } },
    },
  });
  assert.deepEqual(found, [{ uri: 'https://x.example.com/tree.json', reason: 'unsupported_shape' }]);
});

test('the registry is frozen and independent of later changes to its input', () => {
  const input = { 'https://x.example.com/s.json': { type: 'string', enum: ['a'] } };
  const reg = registry(input);
  input['https://x.example.com/s.json'].enum.push('b');
  const v = compiled({ $ref: 'https://x.example.com/s.json' }, reg);
  assert.equal(v('b').ok, false);
  assert.equal(v('a').ok, true);
  assert.ok(Object.isFrozen(reg));
  assert.deepEqual(reg.uris, ['https://x.example.com/s.json']);
  assert.equal(reg.size, 1);
  assert.throws(
    () => new (SchemaRegistry as unknown as new (...a: unknown[]) => unknown)(Symbol('x'), [], {}),
    TypeError,
  );
});

test('a cache compiles against its own registry only', () => {
  const tool = { $ref: 'https://schemas.example.com/id.json' };
  const withRegistry = new SchemaCache(4, { registry: shared });
  assert.equal(withRegistry.registry, shared);
  const c = withRegistry.get('d1', tool);
  assert.ok(c.ok && c.validate('ab-1').ok && !c.validate('x').ok);
  const other = registry({ 'https://schemas.example.com/id.json': { type: 'integer' } });
  const c2 = new SchemaCache(4, { registry: other }).get('d1', tool);
  assert.ok(c2.ok && c2.validate(1).ok && !c2.validate('ab-1').ok, 'same digest, other registry, other validator');
  assert.deepEqual(new SchemaCache(4).get('d1', tool), { ok: false, reason: 'remote_ref' });
});
