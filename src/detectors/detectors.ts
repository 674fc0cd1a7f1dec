import { paymentCard } from './cards.ts';
import { credentialDetectors } from './credentials.ts';
import type { Detector, Range } from './detector.ts';
import { email } from './email.ts';
import { iban } from './iban.ts';
import { jwt } from './jwt.ts';
import { phone } from './phone.ts';
import { privateKey } from './private-key.ts';

export type { Detector } from './detector.ts';

export const DETECTORS: ReadonlyMap<string, Detector> = new Map(
  [...credentialDetectors, privateKey, jwt, paymentCard, iban, email, phone].map((d) => [d.id, d]),
);

export const DETECTOR_IDS: readonly string[] = [...DETECTORS.keys()];

interface Hit {
  readonly id: string;
  readonly start: number;
  readonly end: number;
}

/** Earliest start first; at the same start the longest, so a marker covers the most it can. */
function resolveOverlaps(hits: Hit[]): Hit[] {
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Hit[] = [];
  let covered = 0;
  for (const hit of hits) {
    if (hit.start < covered) continue;
    kept.push(hit);
    covered = hit.end;
  }
  return kept;
}

/**
 * Replaces matches of the given detectors with `[redacted: <id>]`. Overlaps between detectors:
 * the earliest start wins, then the longest. Returns the very same string (===) and empty counts
 * when nothing matched, so callers can skip re-serialising.
 */
export function redactText(
  text: string,
  ids: readonly string[],
): { readonly text: string; readonly counts: Readonly<Record<string, number>> } {
  const hits: Hit[] = [];
  for (const id of ids) {
    const detector = DETECTORS.get(id);
    // Ids come from validated configuration; an unknown one is a programming error, not a match-nothing.
    if (detector === undefined) throw new Error(`unknown detector '${id}'`);
    for (const [start, end] of detector.find(text) as readonly Range[]) hits.push({ id, start, end });
  }
  if (hits.length === 0) return { text, counts: {} };
  const counts: Record<string, number> = {};
  let out = '';
  let from = 0;
  for (const hit of resolveOverlaps(hits)) {
    out += `${text.slice(from, hit.start)}[redacted: ${hit.id}]`;
    from = hit.end;
    counts[hit.id] = (counts[hit.id] ?? 0) + 1;
  }
  return { text: out + text.slice(from), counts };
}
