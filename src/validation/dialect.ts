import type { Dialect } from './types.ts';

/**
 * Maps a `$schema` URI to a supported dialect. Real tools ship the draft-07
 * URI with and without the trailing empty fragment, and occasionally over
 * https; all spell the same meta-schema. Draft-04/06 are refused rather than
 * approximated: their `exclusiveMinimum`/`id` semantics differ silently.
 */
const DIALECTS: ReadonlyMap<string, Dialect> = new Map([
  ['https://json-schema.org/draft/2020-12/schema', '2020-12'],
  ['http://json-schema.org/draft-07/schema', 'draft-07'],
  ['https://json-schema.org/draft-07/schema', 'draft-07'],
]);

/** The URI each dialect's compiler knows its meta-schema by. */
export const CANONICAL_URI: Readonly<Record<Dialect, string>> = Object.freeze({
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
  'draft-07': 'http://json-schema.org/draft-07/schema',
});

export function dialectOf(uri: unknown): Dialect | undefined {
  if (typeof uri !== 'string') return undefined;
  const bare = uri.endsWith('#') ? uri.slice(0, -1) : uri;
  return DIALECTS.get(bare);
}
