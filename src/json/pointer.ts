/** Appends one reference token to a JSON pointer (RFC 6901). */
export function childPointer(parent: string, token: string | number): string {
  return `${parent}/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}

/** The JSON pointer of the keys a walk collected as it unwound: the innermost first. */
export function pointerFromInnermost(keys: readonly (string | number)[]): string {
  let pointer = '';
  for (let i = keys.length - 1; i >= 0; i--) pointer = childPointer(pointer, keys[i] as string | number);
  return pointer;
}
