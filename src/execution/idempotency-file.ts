import { randomUUID } from 'node:crypto';
import { openSync, closeSync, fsyncSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Lru } from '../cache/lru.ts';
import { StartupError } from '../errors.ts';
import { log } from '../telemetry/log.ts';
import { claimOf, settledRecord, type Claim, type IdempotencyStore, type RecordShape, type Settlement } from './idempotency-store.ts';

const MAX_FILE_KEYS = 100_000;
/** The journal is rewritten with only the live records once it is this many times their size. */
const COMPACT_FACTOR = 4;
/** Below this the journal is not rewritten. */
const COMPACT_MIN_BYTES = 1024 * 1024;

interface Held {
  record: RecordShape;
  /** Wall-clock ms: records outlive the process, so they cannot use a monotonic clock. */
  leaseUntil: number;
  expiresAt: number;
}

/** One journal line: the record for a scope as it now stands, or its removal. */
interface Line {
  readonly k: string;
  readonly h?: Held;
}

/** A claim or settlement that could not be made durable: answered idempotency_unavailable, never run unrecorded. */
class IdempotencyFileUnavailable extends Error {
  override readonly name = 'IdempotencyFileUnavailable';
}

/**
 * Idempotency records for one replica without Redis, in a journal file on a
 * volume, so they survive a restart of the process (SIGKILL included): a
 * PENDING record found at start reads as UNKNOWN once its lease is past, and
 * is never run again.
 *
 * Durability: every claim is appended and `fdatasync`ed before the call is
 * forwarded, so a call that ran always left its PENDING record on disk; its
 * settlement is synced too, before the next journal line. A torn last line
 * (a crash mid-write) is ignored: its call was never forwarded. The journal
 * is rewritten with the live records (write, fsync, rename, fsync the
 * directory) at start and once it grows to four times its size after the
 * last rewrite (1 MiB at least). At most 100,000 keys, the oldest forgotten first, as
 * in process. One process per file: replicas must not share it.
 */
export class FileIdempotencyStore implements IdempotencyStore {
  readonly #path: string;
  readonly #retentionMs: number;
  readonly #now: () => number;
  readonly #records = new Lru<string, Held>(MAX_FILE_KEYS);
  #file: FileHandle | undefined;
  #bytes = 0;
  /** The journal's size when last rewritten: the live records then. */
  #baseline = 0;
  /** Appends, one after another, so lines never interleave and compaction sees them all. */
  #chain: Promise<void> = Promise.resolve();

  private constructor(path: string, retentionMs: number, now: () => number) {
    this.#path = path;
    this.#retentionMs = retentionMs;
    this.#now = now;
  }

  /** Reads the journal (creating it), keeping the records still within their retention. */
  static async open(path: string, retentionMs: number, now: () => number = Date.now): Promise<FileIdempotencyStore> {
    const store = new FileIdempotencyStore(path, retentionMs, now);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new StartupError('invalid setting TOOLGATE_IDEMPOTENCY_FILE: cannot read the file');
    }
    let torn = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const parsed = parseLine(line);
      if (parsed === undefined) {
        torn++;
        continue;
      }
      if (parsed.h === undefined) store.#records.delete(parsed.k);
      else store.#records.set(parsed.k, parsed.h);
    }
    if (torn > 0) log.warn('idempotency journal lines that do not parse were skipped (a write cut by a crash)', { lines: torn });
    try {
      store.#rewrite();
      store.#file = await open(path, 'a');
    } catch {
      throw new StartupError('invalid setting TOOLGATE_IDEMPOTENCY_FILE: cannot write the file or its directory');
    }
    return store;
  }

  async claim(scope: string, digest: string, leaseMs: number): Promise<Claim> {
    const now = this.#now();
    const held = this.#records.get(scope);
    if (held !== undefined && held.expiresAt > now) return claimOf(held.record, digest, held.leaseUntil - now);
    const token = randomUUID();
    const next: Held = { record: { s: 'P', d: digest, t: token }, leaseUntil: now + leaseMs, expiresAt: now + this.#retentionMs };
    // Taken in memory at once, so a concurrent repeat sees it; forwarded only once it is on disk.
    this.#records.set(scope, next);
    try {
      await this.#append({ k: scope, h: next });
    } catch {
      if (this.#records.peek(scope) === next) this.#records.delete(scope);
      throw new IdempotencyFileUnavailable();
    }
    return { kind: 'acquired', token };
  }

  async settle(scope: string, token: string, how: Settlement): Promise<void> {
    const held = this.#records.peek(scope);
    if (held === undefined || held.record.s !== 'P' || held.record.t !== token) return;
    const record = settledRecord(held.record, how);
    if (record === undefined) {
      this.#records.delete(scope);
      await this.#append({ k: scope });
      return;
    }
    const next: Held = { record, leaseUntil: 0, expiresAt: this.#now() + this.#retentionMs };
    this.#records.set(scope, next);
    await this.#append({ k: scope, h: next });
  }

  async close(): Promise<void> {
    await this.#chain.catch(() => {});
    await this.#file?.close();
    this.#file = undefined;
  }

  #append(line: Line): Promise<void> {
    const text = `${JSON.stringify(line)}\n`;
    const step = this.#chain.then(async () => {
      const file = this.#file;
      if (file === undefined) throw new IdempotencyFileUnavailable();
      await file.write(text);
      await file.datasync();
      this.#bytes += Buffer.byteLength(text);
      if (this.#bytes > Math.max(COMPACT_MIN_BYTES, COMPACT_FACTOR * this.#baseline)) await this.#compact();
    });
    this.#chain = step.catch(() => {});
    return step;
  }

  async #compact(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
    this.#rewrite();
    this.#file = await open(this.#path, 'a');
  }

  /** The live records, written whole to a new file that replaces the journal only once it is on disk. */
  #rewrite(): void {
    const now = this.#now();
    const lines: string[] = [];
    for (const [k, h] of this.#records.entries()) if (h.expiresAt > now) lines.push(JSON.stringify({ k, h } satisfies Line));
    const text = lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    const tmp = `${this.#path}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.#path);
    const dir = openSync(dirname(this.#path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.#bytes = Buffer.byteLength(text);
    this.#baseline = this.#bytes;
  }
}

function parseLine(text: string): Line | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const { k, h } = v as { k?: unknown; h?: unknown };
  if (typeof k !== 'string') return undefined;
  if (h === undefined) return { k };
  if (typeof h !== 'object' || h === null) return undefined;
  const { record, leaseUntil, expiresAt } = h as Partial<Held>;
  if (typeof leaseUntil !== 'number' || typeof expiresAt !== 'number' || typeof record !== 'object' || record === null) return undefined;
  if (!['P', 'C', 'U', 'N'].includes(record.s) || typeof record.d !== 'string' || typeof record.t !== 'string') return undefined;
  return { k, h: { record, leaseUntil, expiresAt } };
}
