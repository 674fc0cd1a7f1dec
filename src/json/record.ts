/** A JSON object: not null, not an array. Parsed JSON and schema nodes are checked with this before their members are read. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
