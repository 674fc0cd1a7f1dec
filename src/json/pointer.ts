/** Appends one reference token to a JSON pointer (RFC 6901). */
export function childPointer(parent: string, token: string | number): string {
  return `${parent}/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

/**
 * A value a walk reached, linked to the one it was found in, so that the
 * walk builds a pointer only for the value it reports, not for every value
 * it passes.
 */
export interface Reached {
  /** Undefined for the root. */
  readonly parent: Reached | undefined;
  readonly key: string | number;
}

/** The JSON pointer of a reached value, from the root. */
export function pointerOf(reached: Reached): string {
  const keys: (string | number)[] = [];
  for (let r: Reached | undefined = reached; r?.parent !== undefined; r = r.parent) keys.push(r.key);
  return pointerFromInnermost(keys);
}

/** The JSON pointer of the keys a walk collected as it unwound: the innermost first. */
export function pointerFromInnermost(keys: readonly (string | number)[]): string {
  let pointer = '';
  for (let i = keys.length - 1; i >= 0; i--) pointer = childPointer(pointer, keys[i] as string | number);
  return pointer;
}
