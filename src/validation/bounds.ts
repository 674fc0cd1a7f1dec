import { pointerFromInnermost } from '../json/pointer.ts';

/**
 * Size bounds on arguments, checked before the compiled validator runs so
 * that its (recursive) code only ever sees small, shallow, plain JSON. The
 * walk stops at the first exceeded bound.
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
  const walk = new BoundsWalk(bounds);
  const fault = walk.visit(args, 0);
  if (fault === Fault.None) return WITHIN;
  if (fault === Fault.Exceeded) return EXCEEDED;
  return { ok: false, code: 'not_json', instancePath: pointerFromInnermost(walk.path) };
}

const WITHIN: BoundsCheck = Object.freeze({ ok: true });
const EXCEEDED: BoundsCheck = Object.freeze({ ok: false, code: 'bounds_exceeded' });

/** How a visit ended: within the bounds, over one, or at a value JSON cannot carry. */
const Fault = { None: 0, Exceeded: 1, NotJson: 2 } as const;
type Fault = (typeof Fault)[keyof typeof Fault];

/**
 * One walk, depth first. It recurses: the depth bound is checked before a
 * container's members are entered, so the stack never holds more than
 * `maxDepth` frames, and nothing is allocated per value but an object's key
 * list. Members are visited in the order an explicit stack would pop them
 * (array items first to last, object members last to first), and everything
 * not yet visited counts against the node bound, so a large container is
 * refused before it is entered. `path` collects the keys to a value JSON
 * cannot carry, innermost first, only as the walk unwinds from it.
 */
class BoundsWalk {
  readonly #maxDepth: number;
  readonly #maxNodes: number;
  readonly #maxUnits: number;
  #nodes = 0;
  #units = 0;
  /** Members seen in their containers but not visited yet. */
  #pending = 0;
  /** The keys to the value JSON cannot carry, innermost first, once the walk found one. */
  readonly path: (string | number)[] = [];

  constructor(bounds: ArgumentBounds) {
    this.#maxDepth = bounds.maxDepth;
    this.#maxNodes = bounds.maxNodes;
    this.#maxUnits = bounds.maxStringCodeUnits;
  }

  visit(value: unknown, depth: number): Fault {
    if (++this.#nodes > this.#maxNodes) return Fault.Exceeded;
    if (value === null || typeof value === 'boolean') return Fault.None;
    if (typeof value === 'string') {
      this.#units += value.length;
      return this.#units > this.#maxUnits ? Fault.Exceeded : Fault.None;
    }
    if (typeof value === 'number') return Number.isFinite(value) ? Fault.None : Fault.NotJson;
    if (typeof value !== 'object') return Fault.NotJson;
    if (Array.isArray(value)) return this.#items(value, depth);
    return isPlainObject(value) ? this.#members(value as Record<string, unknown>, depth) : Fault.NotJson;
  }

  #items(items: readonly unknown[], depth: number): Fault {
    if (depth + 1 > this.#maxDepth || this.#crowded(items.length)) return Fault.Exceeded;
    for (let i = items.length - 1; i >= 0; i--) {
      if (!Object.hasOwn(items, i)) {
        this.path.push(i);
        return Fault.NotJson;
      }
    }
    this.#pending += items.length;
    for (let i = 0; i < items.length; i++) {
      this.#pending--;
      const fault = this.visit(items[i], depth + 1);
      if (fault === Fault.None) continue;
      if (fault === Fault.NotJson) this.path.push(i);
      return fault;
    }
    return Fault.None;
  }

  #members(object: Record<string, unknown>, depth: number): Fault {
    if (depth + 1 > this.#maxDepth) return Fault.Exceeded;
    const keys = Object.keys(object);
    if (this.#crowded(keys.length)) return Fault.Exceeded;
    for (const key of keys) {
      this.#units += key.length;
      if (this.#units > this.#maxUnits) return Fault.Exceeded;
    }
    this.#pending += keys.length;
    for (let i = keys.length - 1; i >= 0; i--) {
      this.#pending--;
      const key = keys[i] as string;
      const fault = this.visit(object[key], depth + 1);
      if (fault === Fault.None) continue;
      if (fault === Fault.NotJson) this.path.push(key);
      return fault;
    }
    return Fault.None;
  }

  /** Whether `children` more, with everything seen and not yet visited, would pass the node bound. */
  #crowded(children: number): boolean {
    return this.#nodes + this.#pending + children > this.#maxNodes;
  }
}
