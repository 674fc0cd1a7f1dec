/** Appends one reference token to a JSON pointer (RFC 6901). */
export function childPointer(parent: string, token: string | number): string {
  return `${parent}/${String(token).replaceAll('~', '~0').replaceAll('/', '~1')}`;
}
