/** A JSON object: not null, not an array. Parsed JSON and schema nodes are checked with this before their members are read. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON text that holds one object (a message, an event's data); undefined for anything else, malformed text included. */
export function parseRecord(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
