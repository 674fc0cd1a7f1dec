/**
 * JSON with integers read as written. JSON.parse reads 9007199254740993 as
 * 9007199254740992, while the server behind toolgate (Python, or Go and Java
 * decoding into 64-bit or big integers) reads the digits. Wherever toolgate
 * decides on a number's value (grant conditions, the argument digest that
 * binds approvals and idempotency keys, the approver page, `Mcp-Param-*`
 * mirrors), it reads the arguments with this parser instead, so the value it
 * judges is the value the server will act on.
 *
 * Only integer literals a double cannot hold become a `bigint`; every other
 * number is the double JSON.parse gives, so a body without such a literal
 * reads exactly as JSON.parse reads it. Call it only where
 * `findInexactInteger` found one: the reviver costs on every value.
 */
export function parseExact(text: string): unknown {
  return JSON.parse(text, exactReviver);
}

/** JSON text for a value `parseExact` produced: a `bigint` is written with all its digits. */
export function stringifyExact(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? rawJson(v.toString()) : v), indent);
}

// The reviver's third argument and JSON.rawJSON are ES2026 (JSON.parse
// source text access); Node 24 has both, the TypeScript lib not yet.
interface ReviverContext {
  readonly source?: string;
}
const rawJson = (JSON as unknown as { rawJSON: (this: void, text: string) => unknown }).rawJSON;

function exactReviver(this: unknown, _key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value !== 'number' || Number.isSafeInteger(value)) return value;
  const source = context?.source;
  if (source === undefined || !INTEGER.test(source)) return value;
  const exact = BigInt(source);
  return Number.isFinite(value) && BigInt(value) === exact ? value : exact;
}

const INTEGER = /^-?\d+$/;
