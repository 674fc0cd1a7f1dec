/**
 * Shannon entropy in bits per character. gitleaks attaches a minimum to most
 * rules so that placeholders such as `AKIAXXXXXXXXXXXXXXXX` do not count as keys.
 */
export function shannonEntropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
