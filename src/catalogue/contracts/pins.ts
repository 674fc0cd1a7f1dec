import { domainKeys } from '../../cache/keys.ts';
import type { RedisClient } from '../../cache/redis.ts';
import { isRecord } from '../../json/record.ts';

/**
 * A contract toolgate holds as approved for one tool, beside the digests the
 * policy lists: pinned on first sight (`pin: first-seen`) or approved by an
 * operator. The contract itself is kept so drift can be described field by
 * field and `contracts diff` can show what changed.
 */
export interface Pin {
  readonly digest: string;
  /** The contract fields as they were approved; absent when only a digest was approved. */
  readonly contract?: Readonly<Record<string, unknown>>;
  /** An operator's approval vouches for the content (lint defers to it); a first-seen pin only for its stability. */
  readonly by: 'first-seen' | 'operator';
  /** When it was pinned (epoch ms), so a stale copy of a later approval can be told apart; absent in pins from older builds. */
  readonly at?: number;
}

export interface PinStore {
  /** Every pin by tool; undefined when the store cannot be read (the caller keeps what it knew). */
  all(): Promise<ReadonlyMap<string, Pin> | undefined>;
  /** Pins `pin` unless the tool already has one; answers the pin in force, undefined when the store failed. */
  pinFirst(tool: string, pin: Pin): Promise<Pin | undefined>;
  /** Replaces the tool's pin; false when the store failed. */
  approve(tool: string, pin: Pin): Promise<boolean>;
}

const DIGEST = /^[0-9a-f]{64}$/;

export function isDigest(v: unknown): v is string {
  return typeof v === 'string' && DIGEST.test(v);
}

/** One replica's pins (no Redis): they last as long as the process. */
export class MemoryPinStore implements PinStore {
  readonly #pins = new Map<string, Pin>();

  async all(): Promise<ReadonlyMap<string, Pin>> {
    return new Map(this.#pins);
  }

  async pinFirst(tool: string, pin: Pin): Promise<Pin> {
    const held = this.#pins.get(tool);
    if (held !== undefined) return held;
    this.#pins.set(tool, pin);
    return pin;
  }

  async approve(tool: string, pin: Pin): Promise<boolean> {
    this.#pins.set(tool, pin);
    return true;
  }
}

/**
 * Pins shared by every replica of a policy domain, in one hash under the
 * domain's hash tag; they survive restarts. HSETNX makes the first replica
 * to see a tool the one whose digest is pinned. Entries that do not parse
 * are ignored, as if the tool had no pin.
 */
export class RedisPinStore implements PinStore {
  readonly #client: RedisClient;
  readonly #key: string;

  constructor(client: RedisClient, domain: string) {
    this.#client = client;
    this.#key = domainKeys(domain).contractPins;
  }

  async all(): Promise<ReadonlyMap<string, Pin> | undefined> {
    let raw: Record<string, string>;
    try {
      raw = await this.#client.hgetall(this.#key);
    } catch {
      return undefined;
    }
    const out = new Map<string, Pin>();
    for (const [tool, text] of Object.entries(raw)) {
      const pin = parsePin(text);
      if (pin !== undefined) out.set(tool, pin);
    }
    return out;
  }

  async pinFirst(tool: string, pin: Pin): Promise<Pin | undefined> {
    try {
      if ((await this.#client.hsetnx(this.#key, tool, JSON.stringify(pin))) === 1) return pin;
      const text = await this.#client.hget(this.#key, tool);
      return text === null ? undefined : parsePin(text);
    } catch {
      return undefined;
    }
  }

  async approve(tool: string, pin: Pin): Promise<boolean> {
    try {
      await this.#client.hset(this.#key, tool, JSON.stringify(pin));
      return true;
    } catch {
      return false;
    }
  }
}

function parsePin(text: string): Pin | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(v) || !isDigest(v.digest) || (v.by !== 'first-seen' && v.by !== 'operator')) return undefined;
  if (v.contract !== undefined && !isRecord(v.contract)) return undefined;
  if (v.at !== undefined && !(Number.isSafeInteger(v.at) && (v.at as number) > 0)) return undefined;
  return { digest: v.digest, by: v.by, ...(v.contract !== undefined && { contract: v.contract }), ...(v.at !== undefined && { at: v.at as number }) };
}

/**
 * Which pin stands when the store's copy and the one held in memory differ.
 * The store can lose pins (restarted empty, flushed) or go back in time (a
 * failover to a replica that missed a write): a pin the store no longer has,
 * or has only in an older form, must not fall back to trust. So the store's
 * pin replaces the held one only when it is an operator's approval at least
 * as recent (or of an older build, which did not date pins); a first-seen
 * pin of another digest can only have been written after the held one was
 * lost, and is not trusted over it.
 */
export function reconcilePin(stored: Pin | undefined, held: Pin | undefined): { readonly pin: Pin | undefined; readonly kept: boolean } {
  if (held === undefined || (stored !== undefined && stored.digest === held.digest)) return { pin: stored ?? held, kept: false };
  if (stored !== undefined && stored.by === 'operator' && (stored.at === undefined || held.at === undefined || stored.at >= held.at)) return { pin: stored, kept: false };
  return { pin: held, kept: true };
}
