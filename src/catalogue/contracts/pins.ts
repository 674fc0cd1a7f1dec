import { epochScript, freshMarker, guardedWrite, type GuardOptions } from '../../cache/guarded-write.ts';
import { domainKeys } from '../../cache/keys.ts';
import type { RedisClient } from '../../cache/redis.ts';
import { script } from '../../cache/scripts.ts';
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
 * Checks the epoch marker, then HSETNX: the first replica to see a tool is the
 * one whose digest is pinned, and only into a hash that has not lost its pins
 * since this replica last read it.
 * KEYS: marker, pins. ARGV: known marker ('' for none), a fresh marker, tool, pin text.
 * Returns {0, marker} (nothing written), {1} pinned, {2, pin in force}.
 */
const PIN_FIRST = epochScript(`
if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[4]) == 1 then return {1} end
return {2, redis.call('HGET', KEYS[2], ARGV[3])}
`);

/** KEYS: pins. ARGV: tool, pin text. */
const SET_PIN = script(`return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])`);

/** Takes one write back: only while the field still holds that write's text, restoring what it replaced ('' for nothing). */
const RESTORE_PIN = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
`;

/**
 * Pins shared by every replica of a policy domain, in one hash under the
 * domain's hash tag; they survive restarts. A pin's loss would let a changed
 * contract be trusted, so every write follows cache/guarded-write.ts:
 * acknowledged by replicas when configured, taken back when it cannot be
 * vouched for, and a first-seen pin checked against the epoch marker in the
 * same step. Entries that do not parse are ignored, as if the tool had no pin.
 */
export class RedisPinStore implements PinStore {
  readonly #client: RedisClient;
  readonly #keys: { readonly pins: string; readonly epoch: string };
  readonly #guard: GuardOptions;
  #epoch: string | undefined;

  constructor(client: RedisClient, domain: string, guard: GuardOptions = { waitReplicas: 0 }) {
    this.#client = client;
    const keys = domainKeys(domain);
    this.#keys = { pins: keys.contractPins, epoch: keys.contractPinsEpoch };
    this.#guard = guard;
  }

  /**
   * The pins, and the marker they were read under: the caller reconciles what
   * it holds against them (reconcilePin) before it pins anything first-seen.
   */
  async all(): Promise<ReadonlyMap<string, Pin> | undefined> {
    let raw: Record<string, string>;
    let marker: string | null;
    try {
      [raw, marker] = await Promise.all([this.#client.hgetall(this.#keys.pins), this.#client.get(this.#keys.epoch)]);
    } catch {
      return undefined;
    }
    if (marker !== null) this.#epoch = marker;
    const out = new Map<string, Pin>();
    for (const [tool, text] of Object.entries(raw)) {
      const pin = parsePin(text);
      if (pin !== undefined) out.set(tool, pin);
    }
    return out;
  }

  async pinFirst(tool: string, pin: Pin): Promise<Pin | undefined> {
    const text = JSON.stringify(pin);
    for (let pass = 0; pass < 2; pass++) {
      const written = await guardedWrite(
        this.#client,
        {
          script: PIN_FIRST,
          keys: [this.#keys.epoch, this.#keys.pins],
          args: [this.#epoch ?? '', freshMarker(Date.now()), tool, text],
          undo: { lua: RESTORE_PIN, keys: [this.#keys.pins], args: [tool, text, ''] },
          wrote: (reply) => Array.isArray(reply) && reply[0] === 1,
        },
        this.#guard,
      );
      if (!written.ok) return undefined;
      const reply = written.reply as [number, unknown];
      if (reply[0] === 1) return pin;
      if (reply[0] === 2) return typeof reply[1] === 'string' ? parsePin(reply[1]) : undefined;
      // A marker replaced since the last read: the hash lost pins; pin nothing until they are read and written back.
      const known = this.#epoch;
      this.#epoch = String(reply[1]);
      if (known !== undefined) return undefined;
    }
    return undefined;
  }

  async approve(tool: string, pin: Pin): Promise<boolean> {
    const text = JSON.stringify(pin);
    try {
      const previous = await this.#client.hget(this.#keys.pins, tool);
      const written = await guardedWrite(
        this.#client,
        {
          script: SET_PIN,
          keys: [this.#keys.pins],
          args: [tool, text],
          undo: { lua: RESTORE_PIN, keys: [this.#keys.pins], args: [tool, text, previous ?? ''] },
          wrote: () => true,
        },
        this.#guard,
      );
      return written.ok;
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
  return {
    digest: v.digest,
    by: v.by,
    ...(v.contract !== undefined && { contract: v.contract }),
    ...(v.at !== undefined && { at: v.at as number }),
  };
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
export function reconcilePin(
  stored: Pin | undefined,
  held: Pin | undefined,
): { readonly pin: Pin | undefined; readonly kept: boolean } {
  if (held === undefined || (stored !== undefined && stored.digest === held.digest))
    return { pin: stored ?? held, kept: false };
  if (
    stored !== undefined &&
    stored.by === 'operator' &&
    (stored.at === undefined || held.at === undefined || stored.at >= held.at)
  )
    return { pin: stored, kept: false };
  return { pin: held, kept: true };
}
