import { keywordKind } from './keywords.ts';
import { childPointer } from '../json/pointer.ts';
import type { Dialect } from './types.ts';
import { isRecord } from '../json/record.ts';
import { resolveUri, type SchemaNode } from './walk.ts';

/**
 * Finds the schema shapes ajv is known to enforce wrongly, measured on the
 * JSON Schema Test Suite and traced to ajv's generated code, so they are
 * refused rather than silently mis-enforced:
 *
 * 1. A property named `__proto__` in a keyword keyed by property names: ajv
 *    drops that entry while compiling, so its rule is never applied.
 * 2. `$dynamicRef`: ajv's dynamic scope resolution disagrees with the spec in
 *    both directions (it accepts arrays the spec rejects).
 * 3. `unevaluatedItems` (unless its own `items` already evaluates every item)
 *    whose in-place scope — the schema and what allOf/anyOf/oneOf/if/then/
 *    else/dependentSchemas/$ref apply to the same array — holds:
 *    - `contains` anywhere: ajv counts every item as evaluated by it;
 *    - under a conditional applicator, a keyword evaluating all items
 *      (`items`, `unevaluatedItems`): ajv's bound check compares the length
 *      with `true`, i.e. 1;
 *    - under a conditional applicator, `prefixItems`, unless the schema has
 *      its own `prefixItems`: otherwise a branch that failed leaves the count
 *      undefined and ajv then checks no item at all;
 *    - a `$ref` cycle: ajv reads the count at run time and the same
 *      undefined count ends the check.
 * 4. `unevaluatedProperties` whose in-place scope holds `if` without `then`:
 *    ajv keeps the failed `if`'s evaluated properties when only `else` is
 *    present, and drops a passing `if`'s when neither is.
 * Draft-07 `$ref` siblings are handled in the walk (they are removed, as the
 * spec ignores them). A `$ref` this module cannot resolve exactly counts as
 * reaching every subschema of the document, so doubt leads to refusal.
 */

const PROPERTY_KEYED = ['properties', 'patternProperties', 'dependentSchemas', 'dependentRequired', 'dependencies'];
/** Applicators whose subschemas see the same instance, and whether they apply conditionally. */
const IN_PLACE: ReadonlyMap<string, boolean> = new Map([
  ['allOf', false],
  ['$ref', false],
  ['anyOf', true],
  ['oneOf', true],
  ['if', true],
  ['then', true],
  ['else', true],
  ['dependentSchemas', true],
]);

/**
 * Checks each of `nodes`; `index` holds every subschema their `$ref`s may
 * reach (registered schemas too), and must include `nodes`.
 */
export function findUnsafeShape(
  nodes: readonly SchemaNode[],
  dialect: Dialect,
  index: SchemaIndex = new SchemaIndex(nodes),
): boolean {
  for (const node of nodes) {
    const s = node.schema;
    for (const keyword of PROPERTY_KEYED) {
      const map = s[keyword];
      if (keywordKind(dialect, keyword) !== undefined && isRecord(map) && Object.hasOwn(map, '__proto__')) return true;
    }
    if (Object.hasOwn(s, '$dynamicRef')) return true;
    if (Object.hasOwn(s, 'unevaluatedItems') && !Object.hasOwn(s, 'items')) {
      const ownPrefix = Object.hasOwn(s, 'prefixItems');
      const hazard: Hazard = (x, conditional) =>
        Object.hasOwn(x, 'contains') ||
        (conditional &&
          (Object.hasOwn(x, 'items') ||
            Object.hasOwn(x, 'unevaluatedItems') ||
            (!ownPrefix && Object.hasOwn(x, 'prefixItems'))));
      if (scopeHas(index, node, hazard, true)) return true;
    }
    if (Object.hasOwn(s, 'unevaluatedProperties')) {
      if (scopeHas(index, node, (x) => Object.hasOwn(x, 'if') && !Object.hasOwn(x, 'then'), false)) return true;
    }
  }
  return false;
}

type Hazard = (s: Record<string, unknown>, conditional: boolean) => boolean;

function scopeHas(index: SchemaIndex, start: SchemaNode, hazard: Hazard, cyclesAreHazards: boolean): boolean {
  const seen = new Set<string>();
  const queue: { node: SchemaNode; conditional: boolean }[] = [{ node: start, conditional: false }];
  while (queue.length > 0) {
    const { node, conditional } = queue.shift()!;
    const key = `${node.pointer}\u0000${conditional}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (hazard(node.schema, conditional)) return true;
    for (const [keyword, isConditional] of IN_PLACE) {
      const value = node.schema[keyword];
      if (value === undefined) continue;
      const cond = conditional || isConditional;
      if (keyword !== '$ref') {
        for (const child of index.children(node, keyword, value)) queue.push({ node: child, conditional: cond });
        continue;
      }
      const target = typeof value === 'string' ? index.resolve(value, node) : undefined;
      if (target === undefined) {
        if (cyclesAreHazards || index.all.some((n) => hazard(n.schema, true))) return true;
      } else if (cyclesAreHazards && [...seen].some((k) => k.startsWith(`${target.pointer}\u0000`))) {
        return true;
      } else {
        queue.push({ node: target, conditional: cond });
      }
    }
  }
  return false;
}

export class SchemaIndex {
  readonly all: readonly SchemaNode[];
  readonly #byPointer = new Map<string, SchemaNode>();
  readonly #resources = new Map<string, string>();
  readonly #anchors = new Map<string, string>();

  /**
   * `aliases` name more URIs for a resource root (URI → its pointer): a
   * registered schema is known by its registration URI as well as its `$id`.
   * Like ajv, an alias resolves the root and JSON pointers, never anchors.
   */
  constructor(nodes: readonly SchemaNode[], aliases: ReadonlyMap<string, string> = new Map()) {
    this.all = nodes;
    for (const [uri, pointer] of aliases) this.#resources.set(uri, pointer);
    for (const n of nodes) {
      this.#byPointer.set(n.pointer, n);
      if (n.resource === n.pointer) this.#resources.set(n.base, n.pointer);
      for (const k of ['$anchor', '$dynamicAnchor'] as const) {
        const name = n.schema[k];
        if (typeof name === 'string') this.#anchors.set(`${n.base}#${name}`, n.pointer);
      }
      const id = n.schema.$id;
      if (typeof id === 'string' && id.startsWith('#')) this.#anchors.set(`${n.base}${id}`, n.pointer);
    }
  }

  /** Subschema nodes under `keyword` of `node` (booleans have no node). */
  children(node: SchemaNode, keyword: string, value: unknown): SchemaNode[] {
    const out: SchemaNode[] = [];
    const add = (...tokens: (string | number)[]) => {
      const child = this.#byPointer.get(tokens.reduce<string>(childPointer, node.pointer));
      if (child !== undefined) out.push(child);
    };
    if (Array.isArray(value)) value.forEach((_, i) => add(keyword, i));
    else if (keyword === 'dependentSchemas' && isRecord(value))
      for (const name of Object.keys(value)) add(keyword, name);
    else add(keyword);
    return out;
  }

  resolve(ref: string, from: SchemaNode): SchemaNode | undefined {
    const hash = ref.indexOf('#');
    const fragment = hash < 0 ? '' : ref.slice(hash + 1);
    const uri = hash === 0 ? from.base : resolveUri(ref, from.base);
    if (uri === undefined) return undefined;
    const resource = this.#resources.get(uri);
    if (resource === undefined) return undefined;
    if (fragment === '') return this.#byPointer.get(resource);
    if (!fragment.startsWith('/')) {
      const pointer = this.#anchors.get(`${uri}#${fragment}`);
      return pointer === undefined ? undefined : this.#byPointer.get(pointer);
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(fragment);
    } catch {
      return undefined;
    }
    return this.#byPointer.get(resource + decoded);
  }
}
