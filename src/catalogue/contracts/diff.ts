import { isRecord } from '../../json/record.ts';
import { childPointer } from '../../json/pointer.ts';
import { CONTRACT_FIELDS } from '../digest.ts';

/**
 * Where two contracts of one tool differ, as JSON pointers into the contract
 * (`/description`, `/inputSchema/properties/path/type`). The pointers name
 * structure only, so they can go to audit and logs; the values are kept for
 * the operator's own `contracts diff` and never leave it.
 */
export interface Change {
  readonly pointer: string;
  /** Absent when the location did not exist before. */
  readonly before?: unknown;
  /** Absent when the location no longer exists. */
  readonly after?: unknown;
}

/** What audit and logs carry: the changed contract fields, and for structured ones the pointers inside them. */
export interface FieldChange {
  readonly field: string;
  readonly pointers?: readonly string[];
}

/** Bounds the work and the audit line on hostile or huge schemas. */
const MAX_CHANGES = 64;
const STRUCTURED = new Set(['inputSchema', 'outputSchema', 'annotations']);

/** The contract fields of a tool object, as the digest sees them. */
export function contractOf(tool: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of CONTRACT_FIELDS) if (Object.hasOwn(tool, f) && tool[f] !== undefined) out[f] = tool[f];
  return out;
}

/** The differing leaves, deepest first found, at most MAX_CHANGES of them. Iterative: schemas may nest deeply. */
export function contractChanges(before: unknown, after: unknown): Change[] {
  const out: Change[] = [];
  const stack: [string, unknown, unknown, boolean, boolean][] = [['', before, after, true, true]];
  while (stack.length > 0 && out.length < MAX_CHANGES) {
    const [pointer, a, b, hadA, hasB] = stack.pop() as [string, unknown, unknown, boolean, boolean];
    if (hadA && hasB && sameShape(a, b)) {
      const keys = Array.isArray(a)
        ? unionIndexes(a, b as unknown[])
        : unionKeys(a as Record<string, unknown>, b as Record<string, unknown>);
      for (const k of keys.reverse()) {
        const ao = a as Record<string, unknown>;
        const bo = b as Record<string, unknown>;
        stack.push([childPointer(pointer, k), ao[k], bo[k], Object.hasOwn(ao, k), Object.hasOwn(bo, k)]);
      }
      continue;
    }
    if (hadA && hasB && Object.is(a, b)) continue;
    out.push({ pointer, ...(hadA && { before: a }), ...(hasB && { after: b }) });
  }
  return out;
}

/** Changes grouped by contract field; pointers only inside the structured fields. */
export function changedFields(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): FieldChange[] {
  const byField = new Map<string, string[]>();
  for (const c of contractChanges(contractOf(before), contractOf(after))) {
    const [, field = '', ...rest] = c.pointer.split('/');
    const pointers = byField.get(field) ?? [];
    if (STRUCTURED.has(field) && rest.length > 0) pointers.push(`/${rest.join('/')}`);
    byField.set(field, pointers);
  }
  return [...byField].map(([field, pointers]) => (pointers.length > 0 ? { field, pointers } : { field }));
}

function sameShape(a: unknown, b: unknown): boolean {
  return (Array.isArray(a) && Array.isArray(b)) || (isRecord(a) && isRecord(b));
}

function unionKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}

function unionIndexes(a: readonly unknown[], b: readonly unknown[]): string[] {
  return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => String(i));
}
