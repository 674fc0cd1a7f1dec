import type { SchemaIndex } from './unsafe-shapes.ts';
import type { SchemaNode } from './walk.ts';

/**
 * ajv's `$dynamicRef` disagrees with the spec, so a `$dynamicRef` is only
 * enforced where the spec makes it a plain `$ref`, and is rewritten to one in
 * the private copy (the shape detector refuses the rest). 2020-12 §8.2.3.2:
 * it resolves like `$ref`, and only when that initial target is a
 * `$dynamicAnchor` of the fragment's name does the dynamic scope choose among
 * the resources declaring that name. So it is static when:
 * - its fragment is empty or a JSON pointer (no name to look up);
 * - the initial target carries no `$dynamicAnchor` of that name (an `$anchor`
 *   of the same name does not count);
 * - with `closedWorld`, the target's is the only `$dynamicAnchor` of that name
 *   anywhere, and every reference in the index resolves inside it, so no
 *   other resource (ajv's own meta-schemas declare one) can join the scope.
 *   Registered schemas are checked without it: a tool may add a declaration.
 */
export function staticiseDynamicRefs(nodes: readonly SchemaNode[], index: SchemaIndex, closedWorld: boolean): void {
  let closed: boolean | undefined;
  for (const node of nodes) {
    const s = node.schema;
    const ref = s.$dynamicRef;
    if (typeof ref !== 'string' || Object.hasOwn(s, '$ref')) continue;
    const target = index.resolve(ref, node);
    if (target === undefined) continue;
    const hash = ref.indexOf('#');
    const name = hash < 0 ? '' : ref.slice(hash + 1);
    let isStatic = name === '' || name.startsWith('/') || target.schema.$dynamicAnchor !== name;
    if (!isStatic && closedWorld) {
      closed ??= everyRefResolves(index);
      isStatic = closed && index.all.filter((n) => n.schema.$dynamicAnchor === name).length === 1;
    }
    if (!isStatic) continue;
    s.$ref = ref;
    delete s.$dynamicRef;
  }
}

function everyRefResolves(index: SchemaIndex): boolean {
  return index.all.every((n) =>
    ['$ref', '$dynamicRef'].every((k) => {
      const ref = n.schema[k];
      return ref === undefined || (typeof ref === 'string' && index.resolve(ref, n) !== undefined);
    }),
  );
}
