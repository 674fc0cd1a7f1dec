/**
 * A small RFC 6902 applier (add, remove, replace, test) for checking what the
 * injector's patches do to a pod, the way the API server applies them: on a
 * copy, all operations or none.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export interface Operation {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
}

export type Applied = { ok: true; doc: unknown } | { ok: false; reason: string };

function tokens(path: string): string[] | undefined {
  if (path === '') return [];
  if (!path.startsWith('/')) return undefined;
  return path.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function isContainer(v: unknown): v is Json[] | Record<string, Json> {
  return typeof v === 'object' && v !== null;
}

export function applyPatch(doc: unknown, ops: readonly Operation[]): Applied {
  let root = structuredClone(doc) as Json;
  for (const [i, op] of ops.entries()) {
    const path = tokens(op.path);
    if (path === undefined) return { ok: false, reason: `op ${i}: bad path` };
    if (path.length === 0) {
      if (op.op === 'add' || op.op === 'replace') root = structuredClone(op.value) as Json;
      else if (op.op !== 'test') return { ok: false, reason: `op ${i}: cannot ${op.op} the root` };
      continue;
    }
    let parent: Json = root;
    for (const t of path.slice(0, -1)) {
      if (!isContainer(parent)) return { ok: false, reason: `op ${i}: missing parent` };
      const next: Json | undefined = Array.isArray(parent) ? parent[Number(t)] : parent[t];
      if (next === undefined) return { ok: false, reason: `op ${i}: missing parent` };
      parent = next;
    }
    const last = path.at(-1) as string;
    if (!isContainer(parent)) return { ok: false, reason: `op ${i}: parent is not a container` };
    const value = structuredClone(op.value) as Json;
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : /^(0|[1-9][0-9]*)$/.test(last) ? Number(last) : NaN;
      if (Number.isNaN(index)) return { ok: false, reason: `op ${i}: bad array index` };
      const exists = index < parent.length;
      if (op.op === 'add') {
        if (index > parent.length) return { ok: false, reason: `op ${i}: index out of range` };
        parent.splice(index, 0, value);
      } else if (op.op === 'replace' || op.op === 'remove' || op.op === 'test') {
        if (!exists) return { ok: false, reason: `op ${i}: ${op.op} of a missing element` };
        if (op.op === 'replace') parent[index] = value;
        else if (op.op === 'remove') parent.splice(index, 1);
        else if (JSON.stringify(parent[index]) !== JSON.stringify(value)) return { ok: false, reason: `op ${i}: test failed` };
      } else return { ok: false, reason: `op ${i}: unsupported op` };
    } else {
      const exists = Object.hasOwn(parent, last);
      if (op.op === 'add') parent[last] = value;
      else if (op.op === 'replace' || op.op === 'remove' || op.op === 'test') {
        if (!exists) return { ok: false, reason: `op ${i}: ${op.op} of a missing member` };
        if (op.op === 'replace') parent[last] = value;
        else if (op.op === 'remove') delete parent[last];
        else if (JSON.stringify(parent[last]) !== JSON.stringify(value)) return { ok: false, reason: `op ${i}: test failed` };
      } else return { ok: false, reason: `op ${i}: unsupported op` };
    }
  }
  return { ok: true, doc: root };
}
