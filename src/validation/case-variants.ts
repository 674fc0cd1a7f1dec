import { foldName } from '../json/fold-name.ts';
import { isRecord } from '../json/record.ts';
import { pointerFromInnermost } from '../json/pointer.ts';
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
 * (bounds.ts): the walk recurses no deeper than they allow.
 */
export function findCaseVariant(args: unknown, names: DeclaredNames): string | undefined {
  // The keys to the member found, innermost first, gathered as the walk unwinds: most calls have none,
  // and a walk need not build a pointer for every member it passes.
  const path: (string | number)[] = [];
  return variantWithin(args, names, path) ? pointerFromInnermost(path) : undefined;
}

function variantWithin(value: unknown, names: DeclaredNames, path: (string | number)[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!variantWithin(value[i], names, path)) continue;
      path.push(i);
      return true;
    }
    return false;
  }
  const members = value as Record<string, unknown>;
  for (const key in members) {
    if (names.exact.has(key) || !names.folded.has(foldName(key))) continue;
    path.push(key);
    return true;
  }
  for (const key in members) {
    if (!variantWithin(members[key], names, path)) continue;
    path.push(key);
    return true;
  }
  return false;
}
