import { childPointer, pointerOf, type Reached } from '../json/pointer.ts';

/**
 * Size bounds on arguments, checked before the compiled validator runs so
 * that its (recursive) code only ever sees small, shallow, plain JSON. The
 * walk itself uses an explicit stack and stops at the first exceeded bound.
 */

export const MAX_ARGUMENT_DEPTH = 32;
export const MAX_ARGUMENT_NODES = 8_192;
export const MAX_STRING_CODE_UNITS = 262_144;

export interface ArgumentBounds {
  readonly maxDepth: number;
  readonly maxNodes: number;
  readonly maxStringCodeUnits: number;
}

const DEFAULT_BOUNDS: ArgumentBounds = Object.freeze({
  maxDepth: MAX_ARGUMENT_DEPTH,
  maxNodes: MAX_ARGUMENT_NODES,
  maxStringCodeUnits: MAX_STRING_CODE_UNITS,
});

export type BoundsCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: 'bounds_exceeded' }
  /** A value JSON cannot carry (undefined, NaN, a function, a class instance…). */
  | { readonly ok: false; readonly code: 'not_json'; readonly instancePath: string };

function isPlainObject(v: object): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Depth counts containers: a scalar is depth 0, `{}` and `[]` depth 1. Nodes
 * count every value, containers included. String code units count both
 * string values and object keys, since both are copied and matched.
 */
export function checkBounds(args: unknown, bounds: ArgumentBounds = DEFAULT_BOUNDS): BoundsCheck {
  let nodes = 0;
  let units = 0;
  // Each entry links to its parent instead of copying a path: paths are
  // only needed to report a value JSON cannot hold, which is rare.
  const stack: Visit[] = [{ value: args, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    nodes += 1;
    if (nodes > bounds.maxNodes) return { ok: false, code: 'bounds_exceeded' };
    if (value === null || typeof value === 'boolean') continue;
    if (typeof value === 'string') {
      units += value.length;
      if (units > bounds.maxStringCodeUnits) return { ok: false, code: 'bounds_exceeded' };
      continue;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return notJson(pointerOf(visit));
      continue;
    }
    if (typeof value !== 'object' || !(Array.isArray(value) || isPlainObject(value))) return notJson(pointerOf(visit));
    if (depth + 1 > bounds.maxDepth) return { ok: false, code: 'bounds_exceeded' };
    const keys = Array.isArray(value) ? undefined : Object.keys(value);
    const children = keys === undefined ? (value as unknown[]).length : keys.length;
    // Everything on the stack is counted when popped, so refuse before growing it.
    if (nodes + stack.length + children > bounds.maxNodes) return { ok: false, code: 'bounds_exceeded' };
    if (keys === undefined) {
      const items = value as unknown[];
      for (let i = items.length - 1; i >= 0; i--) {
        if (!Object.hasOwn(items, i)) return notJson(childPointer(pointerOf(visit), i));
        stack.push({ value: items[i], depth: depth + 1, parent: visit, key: i });
      }
      continue;
    }
    for (const key of keys) {
      units += key.length;
      if (units > bounds.maxStringCodeUnits) return { ok: false, code: 'bounds_exceeded' };
      stack.push({ value: (value as Record<string, unknown>)[key], depth: depth + 1, parent: visit, key });
    }
  }
  return { ok: true };
}

interface Visit extends Reached {
  readonly value: unknown;
  readonly depth: number;
}

function notJson(instancePath: string): BoundsCheck {
  return { ok: false, code: 'not_json', instancePath };
}
