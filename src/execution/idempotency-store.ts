import { randomUUID } from 'node:crypto';
import { Lru } from '../bounded/lru.ts';
import type { StoredResponse } from '../upstream/capture.ts';

/**
 * What a key's record says when a call claims it. `acquired`: this call runs
 * and must settle the record; every other kind is answered without running.
 */
export type Claim =
  | { readonly kind: 'acquired'; readonly token: string }
  | { readonly kind: 'completed'; readonly response: StoredResponse }
  | { readonly kind: 'not_stored' }
  | { readonly kind: 'in_progress'; readonly retryAfterMs: number }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'reused' };

/** How the call that held the key ended. */
export type Settlement =
  | { readonly kind: 'completed'; readonly response: StoredResponse | undefined }
  /** It may have run, and there is no result: a repeat gets outcome_unknown, never a second run. */
  | { readonly kind: 'unknown' }
  /** It certainly never reached the upstream: the key is free again. */
  | { readonly kind: 'released' };

/**
 * Idempotency records, keyed by the scoped key (principal, tool, key):
 * PENDING under a lease → COMPLETED with the stored result, UNKNOWN when the
 * call may have run without a result, or gone when it certainly did not run.
 * A PENDING record whose lease ran out reads as UNKNOWN: its holder died.
 */
export interface IdempotencyStore {
  /**
   * Whether records outlive this process (Redis, a journal file). A store that
   * forgets them on restart cannot keep a non_idempotent_write to one run per
   * key, so such keyed calls are refused rather than promised.
   */
  readonly durable: boolean;
  claim(scope: string, digest: string, leaseMs: number): Promise<Claim>;
  /** Settles a record this call acquired; a record since taken over by nobody else is never overwritten. */
  settle(scope: string, token: string, how: Settlement): Promise<void>;
}

/** The record as stored (JSON in Redis): state, argument digest, holder token, result. */
export interface RecordShape {
  readonly s: 'P' | 'C' | 'U' | 'N';
  readonly d: string;
  readonly t: string;
  readonly r?: StoredResponse;
}

/** Turns a stored record into the claim a repeat gets, given the remaining lease of a PENDING one. */
export function claimOf(record: RecordShape, digest: string, leaseLeftMs: number): Claim {
  if (record.d !== digest) return { kind: 'reused' };
  switch (record.s) {
    case 'C':
      return record.r === undefined ? { kind: 'not_stored' } : { kind: 'completed', response: record.r };
    case 'N':
      return { kind: 'not_stored' };
    case 'U':
      return { kind: 'unknown' };
    case 'P':
      return leaseLeftMs > 0 ? { kind: 'in_progress', retryAfterMs: leaseLeftMs } : { kind: 'unknown' };
  }
}

/** The record a settlement leaves, or undefined when the key is freed. */
export function settledRecord(pending: RecordShape, how: Settlement): RecordShape | undefined {
  if (how.kind === 'released') return undefined;
  if (how.kind === 'unknown') return { s: 'U', d: pending.d, t: pending.t };
  return how.response === undefined
    ? { s: 'N', d: pending.d, t: pending.t }
    : { s: 'C', d: pending.d, t: pending.t, r: how.response };
}

const MAX_MEMORY_KEYS = 100_000;

/** A record as held in process: what it says, and until when (wall-clock ms, so a journal can keep it). */
export interface Held {
  readonly record: RecordShape;
  readonly leaseUntil: number;
  readonly expiresAt: number;
}

/** Where in-process records are also written when they must outlive the process (idempotency-file.ts). */
export interface RecordJournal {
  /** The scope's record as it now stands (undefined: removed), durable once this resolves. */
  write(scope: string, held: Held | undefined): Promise<void>;
  close(): Promise<void>;
}

/**
 * The in-process store, for one replica without Redis. With a journal, every
 * change is written to it, and a claim is acquired only once that is durable.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records = new Lru<string, Held>(MAX_MEMORY_KEYS);
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #journal: RecordJournal | undefined;

  constructor(retentionMs: number, now: () => number = Date.now, journal?: RecordJournal) {
    this.#retentionMs = retentionMs;
    this.#now = now;
    this.#journal = journal;
  }

  get durable(): boolean {
    return this.#journal !== undefined;
  }

  async claim(scope: string, digest: string, leaseMs: number): Promise<Claim> {
    const now = this.#now();
    const held = this.#records.get(scope);
    if (held !== undefined && held.expiresAt > now) return claimOf(held.record, digest, held.leaseUntil - now);
    const token = randomUUID();
    const next: Held = {
      record: { s: 'P', d: digest, t: token },
      leaseUntil: now + leaseMs,
      expiresAt: now + this.#retentionMs,
    };
    // Taken at once, so a concurrent repeat sees it; acquired only once the journal has it.
    this.#records.set(scope, next);
    if (this.#journal !== undefined) {
      try {
        await this.#journal.write(scope, next);
      } catch (err) {
        if (this.#records.peek(scope) === next) this.#records.delete(scope);
        throw err;
      }
    }
    return { kind: 'acquired', token };
  }

  async settle(scope: string, token: string, how: Settlement): Promise<void> {
    const held = this.#records.peek(scope);
    if (held === undefined || held.record.s !== 'P' || held.record.t !== token) return;
    const record = settledRecord(held.record, how);
    const next =
      record === undefined ? undefined : { record, leaseUntil: 0, expiresAt: this.#now() + this.#retentionMs };
    if (next === undefined) this.#records.delete(scope);
    else this.#records.set(scope, next);
    await this.#journal?.write(scope, next);
  }

  /** A record read back from the journal at start (undefined: removed). */
  load(scope: string, held: Held | undefined): void {
    if (held === undefined) this.#records.delete(scope);
    else this.#records.set(scope, held);
  }

  /** The records within their retention, least recently used first: what a journal rewrite keeps. */
  *live(): Generator<[string, Held]> {
    const now = this.#now();
    for (const entry of this.#records.entries()) if (entry[1].expiresAt > now) yield entry;
  }

  async close(): Promise<void> {
    await this.#journal?.close();
  }
}
