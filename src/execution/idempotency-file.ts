import { openSync, closeSync, fsyncSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { StartupError } from '../errors.ts';
import { log } from '../telemetry/log.ts';
import { MemoryIdempotencyStore, type Held, type RecordJournal } from './idempotency-store.ts';

/** The journal is rewritten with only the live records once it is this many times their size. */
const COMPACT_FACTOR = 4;
/** Below this the journal is not rewritten. */
const COMPACT_MIN_BYTES = 1024 * 1024;

/** One journal line: the record for a scope as it now stands, or its removal. */
interface Line {
  readonly k: string;
  readonly h?: Held;
}

/** A change that could not be made durable: its claim is answered idempotency_unavailable, never run unrecorded. */
class IdempotencyFileUnavailable extends Error {
  override readonly name = 'IdempotencyFileUnavailable';
}

/**
 * Idempotency records for one replica without Redis: the in-process store,
 * with every change journaled to a file on a volume, so the records survive a
 * restart of the process (SIGKILL included). A PENDING record read back reads
 * as UNKNOWN once its lease is past, and is never run again.
 *
 * Durability: every claim is appended and `fdatasync`ed before the call is
 * forwarded, so a call that ran always left its PENDING record on disk; its
 * settlement is synced too, before the next journal line. A torn last line
 * (a crash mid-write) is ignored: its call was never forwarded. The journal
 * is rewritten with the live records (write, fsync, rename, fsync the
 * directory) at start and once it grows to four times its size after the
 * last rewrite (1 MiB at least). At most 100,000 keys, the oldest forgotten
 * first, as in process. One process per file: replicas must not share it.
 */
export async function openIdempotencyJournal(
  path: string,
  retentionMs: number,
  now: () => number = Date.now,
): Promise<MemoryIdempotencyStore> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new StartupError('invalid setting TOOLGATE_IDEMPOTENCY_FILE: cannot read the file');
  }
  const journal = new JournalFile(path);
  const store = new MemoryIdempotencyStore(retentionMs, now, journal);
  let torn = 0;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const parsed = parseLine(line);
    if (parsed === undefined) torn++;
    else store.load(parsed.k, parsed.h);
  }
  if (torn > 0)
    log.warn('idempotency journal lines that do not parse were skipped (a write cut by a crash)', { lines: torn });
  try {
    await journal.start(() => store.live());
  } catch {
    throw new StartupError('invalid setting TOOLGATE_IDEMPOTENCY_FILE: cannot write the file or its directory');
  }
  return store;
}

class JournalFile implements RecordJournal {
  readonly #path: string;
  #live: () => Iterable<[string, Held]> = () => [];
  #file: FileHandle | undefined;
  #bytes = 0;
  /** The journal's size when last rewritten: the live records then. */
  #baseline = 0;
  /** Appends, one after another, so lines never interleave and compaction sees them all. */
  #chain: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.#path = path;
  }

  /** Rewrites the journal from the records read back, then opens it for appending. */
  async start(live: () => Iterable<[string, Held]>): Promise<void> {
    this.#live = live;
    this.#rewrite();
    this.#file = await open(this.#path, 'a');
  }

  write(scope: string, held: Held | undefined): Promise<void> {
    const text = `${JSON.stringify(held === undefined ? { k: scope } : ({ k: scope, h: held } satisfies Line))}\n`;
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

  async close(): Promise<void> {
    await this.#chain;
    await this.#file?.close();
    this.#file = undefined;
  }

  async #compact(): Promise<void> {
    await this.#file?.close();
    this.#file = undefined;
    this.#rewrite();
    this.#file = await open(this.#path, 'a');
  }

  /** The live records, written whole to a new file that replaces the journal only once it is on disk. */
  #rewrite(): void {
    const lines: string[] = [];
    for (const [k, h] of this.#live()) lines.push(JSON.stringify({ k, h } satisfies Line));
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
  if (typeof leaseUntil !== 'number' || typeof expiresAt !== 'number' || typeof record !== 'object' || record === null)
    return undefined;
  if (!['P', 'C', 'U', 'N'].includes(record.s) || typeof record.d !== 'string' || typeof record.t !== 'string')
    return undefined;
  return { k, h: { record, leaseUntil, expiresAt } };
}
