import { isRecord } from '../json/record.ts';
import { CANONICAL_URI, dialectOf } from './dialect.ts';
import { keywordKind } from './keywords.ts';
import { childPointer } from '../json/pointer.ts';
import { rewriteEquivalents } from './equivalents.ts';
import { compilePattern } from './regex.ts';
import type { Dialect, SchemaObject, UnsupportedReason } from './types.ts';

/**
 * One pass over every subschema, without recursion (schemas come from
 * upstream servers and may be arbitrarily deep). It refuses what the
 * compiler must never see — unknown keywords, foreign dialects, patterns the
 * linear engine cannot run — and records each subschema for the shape check.
 * It rewrites `$schema` to the canonical URI, draft-07 `$ref` siblings and
 * the shapes in equivalents.ts in place, so it must be given a private copy.
 */

export const MAX_SCHEMA_DEPTH = 64;
const MAX_SCHEMA_NODES = 10_000;

export interface SchemaNode {
  readonly schema: SchemaObject;
  /** JSON pointer of this subschema inside its document, after the document's prefix. */
  readonly pointer: string;
  /** Absolute URI of the schema resource this subschema belongs to. */
  readonly base: string;
  /** Pointer (prefixed the same way) of that resource's root. */
  readonly resource: string;
}

/** Base URI for a root without `$id`; never dereferenced. */
const ROOT_BASE = 'urn:toolgate:root';

export type WalkResult =
  | { readonly ok: true; readonly dialect: Dialect; readonly nodes: readonly SchemaNode[] }
  | { readonly ok: false; readonly reason: UnsupportedReason };

export interface WalkOptions {
  /** The dialect when the root has no `$schema` (a tool's default is 2020-12, as MCP says). */
  readonly dialect?: Dialect;
  /** The root's base URI before its own `$id`. */
  readonly base?: string;
  /**
   * Prefixed to every pointer, so subschemas of several documents can share
   * one index. A prefix never starts with `/`, so it cannot meet a pointer.
   */
  readonly document?: string;
}

export function walkSchema(root: unknown, options: WalkOptions = {}): WalkResult {
  let dialect: Dialect = options.dialect ?? '2020-12';
  if (typeof root === 'boolean') return { ok: true, dialect, nodes: [] };
  if (!isRecord(root)) return { ok: false, reason: 'malformed_schema' };
  if (Object.hasOwn(root, '$schema')) {
    const found = dialectOf(root.$schema);
    if (found === undefined) return { ok: false, reason: 'unsupported_dialect' };
    dialect = found;
  }

  const nodes: SchemaNode[] = [];
  const stack: { value: unknown; pointer: string; depth: number; base: string; resource: string }[] = [
    {
      value: root,
      pointer: options.document ?? '',
      depth: 1,
      base: options.base ?? ROOT_BASE,
      resource: options.document ?? '',
    },
  ];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    const { value, pointer, depth } = entry;
    if (typeof value === 'boolean') continue;
    if (!isRecord(value)) return { ok: false, reason: 'malformed_schema' };
    if (depth > MAX_SCHEMA_DEPTH || nodes.length >= MAX_SCHEMA_NODES) return { ok: false, reason: 'schema_too_large' };
    if (dialect === 'draft-07' && Object.hasOwn(value, '$ref')) ignoreRefSiblings(value);
    rewriteEquivalents(value);
    let { base, resource } = entry;
    if (typeof value.$id === 'string' && !value.$id.startsWith('#')) {
      // A relative `$id` under a root without one has no absolute URI; give
      // it a private one so refs inside it still resolve locally.
      base = resolveUri(value.$id, base) ?? `urn:toolgate:unresolved:${nodes.length}`;
      resource = pointer;
    }
    nodes.push({ schema: value, pointer, base, resource });
    const push = (child: unknown, ...tokens: (string | number)[]) => {
      stack.push({
        value: child,
        pointer: tokens.reduce<string>(childPointer, pointer),
        depth: depth + 1,
        base,
        resource,
      });
    };

    for (const [keyword, child] of Object.entries(value)) {
      const kind = keywordKind(dialect, keyword);
      if (kind === undefined)
        return { ok: false, reason: keyword === '$vocabulary' ? 'unsupported_dialect' : 'unknown_keyword' };
      switch (kind) {
        case 'schema':
          push(child, keyword);
          break;
        case 'schemaArray':
          if (!Array.isArray(child)) return { ok: false, reason: 'malformed_schema' };
          child.forEach((s, i) => push(s, keyword, i));
          break;
        case 'schemaOrArray':
          if (Array.isArray(child)) child.forEach((s, i) => push(s, keyword, i));
          else push(child, keyword);
          break;
        case 'schemaMap':
        case 'patternMap':
          if (!isRecord(child)) return { ok: false, reason: 'malformed_schema' };
          for (const [name, s] of Object.entries(child)) {
            if (kind === 'patternMap') {
              const checked = compilePattern(name);
              if (!checked.ok) return { ok: false, reason: checked.reason };
            }
            push(s, keyword, name);
          }
          break;
        case 'dependencies':
          if (!isRecord(child)) return { ok: false, reason: 'malformed_schema' };
          for (const [name, s] of Object.entries(child)) if (!Array.isArray(s)) push(s, keyword, name);
          break;
        case 'pattern': {
          if (typeof child !== 'string') return { ok: false, reason: 'malformed_schema' };
          const checked = compilePattern(child);
          if (!checked.ok) return { ok: false, reason: checked.reason };
          break;
        }
        case 'value':
          if (keyword === '$schema') {
            if (dialectOf(child) !== dialect) return { ok: false, reason: 'unsupported_dialect' };
            value.$schema = CANONICAL_URI[dialect];
          }
          break;
        case 'annotation':
          break;
      }
    }
  }
  return { ok: true, dialect, nodes };
}

/**
 * Draft-07 ignores every sibling of `$ref`; ajv applies them (and lets a
 * sibling `$id` move the base URI), so they are removed from the private copy.
 * `definitions` stays: other refs may point into it by JSON pointer.
 */
function ignoreRefSiblings(schema: SchemaObject): void {
  for (const keyword of Object.keys(schema)) {
    if (keyword === '$ref' || keyword === 'definitions') continue;
    if (keywordKind('draft-07', keyword) === 'annotation') continue;
    delete schema[keyword];
  }
}

/** Resolves `ref` against `base`, without its fragment; undefined if not a URI. */
export function resolveUri(ref: string, base: string): string | undefined {
  try {
    const url = new URL(ref, base);
    url.hash = '';
    return url.href;
  } catch {
    return undefined;
  }
}
