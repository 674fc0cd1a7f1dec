import { foldName } from '../json/fold-name.ts';
import { isRecord } from '../json/record.ts';
import { childPointer, pointerOf, type Reached } from '../json/pointer.ts';
import type { SchemaNode } from './walk.ts';

/**
 * Arguments named like a declared property but not exactly it ("Path" where
 * the schema declares "path"): the schema never checks them as that property,
 * yet a Go server decoding into a struct reads them as it (fold-name.ts).
 */
export interface DeclaredNames {
  readonly exact: ReadonlySet<string>;
  readonly folded: ReadonlySet<string>;
}

/** Every property name declared anywhere in the schema; undefined when there is none. */
export function declaredNames(nodes: readonly SchemaNode[]): DeclaredNames | undefined {
  const exact = new Set<string>();
  for (const { schema } of nodes) {
    if (isRecord(schema.properties)) for (const name of Object.keys(schema.properties)) exact.add(name);
  }
  if (exact.size === 0) return undefined;
  return { exact, folded: new Set([...exact].map(foldName)) };
}

/**
 * The pointer of the first member, at any depth, whose name folds to a
 * declared name without being one. `args` must already be within the bounds
 * (bounds.ts), which keeps this walk small.
 */
export function findCaseVariant(args: unknown, names: DeclaredNames): string | undefined {
  // Pointers are built only for the member found: most calls have none, and a walk need not pay for the rest.
  const stack: Visit[] = [{ value: args, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const value = visit.value;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (typeof item === 'object' && item !== null) stack.push({ value: item, parent: visit, key: i });
      }
    } else if (isRecord(value)) {
      for (const key of Object.keys(value)) {
        if (!names.exact.has(key) && names.folded.has(foldName(key))) return childPointer(pointerOf(visit), key);
        const item = value[key];
        if (typeof item === 'object' && item !== null) stack.push({ value: item, parent: visit, key });
      }
    }
  }
  return undefined;
}

interface Visit extends Reached {
  readonly value: unknown;
}
