/**
 * A member name as Go's encoding/json matches it to a struct field: letter
 * case ignored under Unicode simple folding, so "Name", "NAME" and "name" are
 * one name, and so are "paramſ" (U+017F) and "params", or "\u212Aey" (Kelvin
 * sign) and "key". Servers decoding with it read any of them as the field
 * (the MCP Go SDK did until 1.3.1, CVE-2026-27896; other Go servers still do).
 * Upper-then-lower casing merges every such pair, and a few more ("ß" and
 * "ss"), which only makes toolgate stricter.
 */
export function foldName(name: string): string {
  // Most names are lowercase ASCII and fold to themselves: no copy, no regex.
  let upper = false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0x7f) return name.toUpperCase().toLowerCase().replaceAll('ß', 'ss');
    if (c >= 0x41 && c <= 0x5a) upper = true;
  }
  return upper ? name.toLowerCase() : name;
}
