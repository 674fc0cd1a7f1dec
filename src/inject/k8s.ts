/**
 * The few Kubernetes shapes the injector reads and writes. Pods arrive as
 * untrusted JSON, so readers take `unknown` and check every field they use;
 * the written shapes are plain records serialised into the JSONPatch.
 */
import { isRecord } from '../json/record.ts';

export type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json };
export type JsonObject = { readonly [key: string]: Json };

export function stringMap(value: unknown): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  if (!isRecord(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out.set(k, v);
  return out;
}

/** IANA_SVC_NAME, what Kubernetes accepts as a port name. */
export function isPortName(name: string): boolean {
  return /^[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/.test(name) && /[a-z]/.test(name) && !name.includes('--');
}

export function isPortNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** A resource quantity in the forms people write (`100m`, `64Mi`, `1.5`). */
export function isQuantity(text: string): boolean {
  return /^[0-9]{1,12}(\.[0-9]{1,9})?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/.test(text);
}

/** RFC 6901: `~` and `/` inside one reference token. */
export function pointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

export interface PatchOp {
  readonly op: 'add' | 'replace';
  readonly path: string;
  readonly value: Json;
}
