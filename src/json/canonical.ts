import { createHash } from 'node:crypto';

/**
 * RFC 8785 (JSON Canonicalization Scheme): one text per JSON value, whatever
 * key order or number spelling produced it, so digests over it agree across
 * replicas byte for byte.
 */

export type CanonicalResult =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly code: 'non_finite_number' | 'unsupported_value' | 'too_deep' };

/** Deeper than any real schema; bounds recursion on hostile upstream input. */
export const MAX_DEPTH = 512;

class Refused extends Error {
  readonly code: 'non_finite_number' | 'unsupported_value' | 'too_deep';
  constructor(code: Refused['code']) {
    super(code);
    this.code = code;
  }
}

/**
 * Canonical JSON of a JSON-shaped value: object keys sorted by UTF-16 code
 * units, numbers in ECMAScript shortest round-trip form (so -0 is `0`, 1e21
 * is `1e+21`), strings escaped exactly as JSON.stringify does. Lone
 * surrogates are escaped as `\udxxx` the way JSON.stringify does rather than
 * refused: the wire may carry them as escapes, and a deterministic digest is
 * worth more than I-JSON purity here. NaN and ±Infinity are refused because
 * JSON.stringify would turn them into `null` and make two contracts collide.
 * Object properties whose value is `undefined` are omitted, as absent.
 */
export function canonicalize(value: unknown): CanonicalResult {
  try {
    const parts: string[] = [];
    write(value, parts, 0, new Set());
    return { ok: true, text: parts.join('') };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, code: e.code };
    // Only exotic inputs (throwing getters, proxies) get here; JSON never does.
    return { ok: false, code: 'unsupported_value' };
  }
}

function write(value: unknown, out: string[], depth: number, path: Set<object>): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new Refused('non_finite_number');
      out.push(JSON.stringify(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'bigint':
      // An integer a double cannot hold (json/exact.ts): RFC 8785 has no
      // spelling for it, so its digits stand, which no double's form can equal.
      out.push(value.toString());
      return;
    case 'object':
      break;
    case 'function':
    case 'symbol':
    case 'undefined':
      throw new Refused('unsupported_value');
  }
  if (value === null) {
    out.push('null');
    return;
  }
  if (depth >= MAX_DEPTH) throw new Refused('too_deep');
  if (path.has(value)) throw new Refused('unsupported_value');
  path.add(value);
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const item: unknown = value[i];
      if (item === undefined) throw new Refused('unsupported_value');
      write(item, out, depth + 1, path);
    }
    out.push(']');
  } else {
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new Refused('unsupported_value');
    const record = value as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is what RFC 8785 asks for.
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      write(record[k], out, depth + 1, path);
    });
    out.push('}');
  }
  path.delete(value);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
