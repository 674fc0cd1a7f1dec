import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { childPointer } from '../../../src/json/pointer.ts';
import { checkBounds, type ArgumentBounds, type BoundsCheck } from '../../../src/validation/bounds.ts';

/**
 * The bounds as a plain explicit-stack walk: every value popped counts as a
 * node, a container is refused before its members are pushed if they would
 * pass the node bound with everything already waiting, and members are
 * pushed in order (so an object's come off last first). checkBounds must
 * decide every value exactly as this does, pointer included.
 */
function reference(args: unknown, b: ArgumentBounds): BoundsCheck {
  let nodes = 0;
  let units = 0;
  const stack: { value: unknown; depth: number; path: (string | number)[] }[] = [{ value: args, depth: 0, path: [] }];
  const notJson = (path: (string | number)[]): BoundsCheck => ({
    ok: false,
    code: 'not_json',
    instancePath: path.reduce<string>((p, k) => childPointer(p, k), ''),
  });
  const exceeded: BoundsCheck = { ok: false, code: 'bounds_exceeded' };
  for (let visit = stack.pop(); visit !== undefined; visit = stack.pop()) {
    const { value, depth, path } = visit;
    if (++nodes > b.maxNodes) return exceeded;
    if (value === null || typeof value === 'boolean') continue;
    if (typeof value === 'string') {
      units += value.length;
      if (units > b.maxStringCodeUnits) return exceeded;
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return notJson(path);
      continue;
    }
    if (typeof value !== 'object') return notJson(path);
    const proto: unknown = Object.getPrototypeOf(value);
    if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return notJson(path);
    if (depth + 1 > b.maxDepth) return exceeded;
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    if (nodes + stack.length + (keys?.length ?? (value as unknown[]).length) > b.maxNodes) return exceeded;
    if (keys === undefined) {
      const items = value as unknown[];
      for (let i = items.length - 1; i >= 0; i--) {
        if (!Object.hasOwn(items, i)) return notJson([...path, i]);
        stack.push({ value: items[i], depth: depth + 1, path: [...path, i] });
      }
      continue;
    }
    for (const key of keys) {
      units += key.length;
      if (units > b.maxStringCodeUnits) return exceeded;
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, path: [...path, key] });
    }
  }
  return { ok: true };
}

const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, undefined, () => 1, new Date(0), 1n),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.oneof(fc.array(tie('node'), { maxLength: 5 }), fc.sparseArray(tie('node'), { maxLength: 5 })),
  object: fc.dictionary(fc.string({ maxLength: 4 }), tie('node'), { maxKeys: 5 }),
})).node;
const bounds = fc.record({
  maxDepth: fc.integer({ min: 0, max: 5 }),
  maxNodes: fc.integer({ min: 1, max: 30 }),
  maxStringCodeUnits: fc.integer({ min: 0, max: 30 }),
});

test('checkBounds decides as an explicit-stack walk: verdict, refusal and pointer', () => {
  fc.assert(
    fc.property(value, bounds, (v, b) => {
      assert.deepEqual(checkBounds(v, b), reference(v, b));
    }),
    { numRuns: 5_000 },
  );
});

test('members are checked in the walk order: a hole is found before an earlier bad item, the last member first', () => {
  const generous = { maxDepth: 8, maxNodes: 100, maxStringCodeUnits: 100 };
  // oxlint-disable-next-line no-sparse-arrays -- the hole is the point
  const holed = [Number.NaN, , 1];
  assert.deepEqual(checkBounds({ a: holed }, generous), { ok: false, code: 'not_json', instancePath: '/a/1' });
  assert.deepEqual(checkBounds({ a: Number.NaN, b: { 'c/d': undefined } }, generous), {
    ok: false,
    code: 'not_json',
    instancePath: '/b/c~1d',
  });
});

test('a container whose members would pass the node bound is refused before it is entered', () => {
  const b = { maxDepth: 8, maxNodes: 10, maxStringCodeUnits: 100 };
  // The array's tenth item is not JSON, but nine items and the array and the object make eleven nodes.
  assert.deepEqual(checkBounds({ a: [1, 2, 3, 4, 5, 6, 7, 8, Number.NaN] }, b), { ok: false, code: 'bounds_exceeded' });
  assert.deepEqual(checkBounds({ a: [1, 2, 3, 4, 5, 6, 7, Number.NaN] }, b), {
    ok: false,
    code: 'not_json',
    instancePath: '/a/7',
  });
});
