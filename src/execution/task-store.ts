import { Lru } from '../bounded/lru.ts';

/** Who created a task through toolgate, and with which tool: what every later request about it is checked against. */
export interface TaskOwner {
  readonly principal: string;
  readonly tool: string;
}

/**
 * Task id → creator. Losing a record only ever closes a door (the creator
 * is told the task does not exist), so records need no epoch or WAIT; a
 * store that cannot answer throws, and the request fails closed.
 */
export interface TaskStore {
  /** Records the creator for `ttlMs`; `taken` when the id is already bound to another principal. */
  bind(taskId: string, owner: TaskOwner, ttlMs: number): Promise<'bound' | 'taken'>;
  owner(taskId: string): Promise<TaskOwner | undefined>;
  /** One lookup for a listing, in the order of `taskIds`. */
  owners(taskIds: readonly string[]): Promise<readonly (TaskOwner | undefined)[]>;
}

/** Longest a task id may be to be recorded; longer ones are not bound, so their task cannot be reached. */
export const MAX_TASK_ID_LENGTH = 512;
/** A task without a TTL (kept until the server forgets it) is bound this long. */
const UNBOUNDED_TASK_MS = 7 * 24 * 3_600_000;
const MIN_TASK_MS = 1000;

/** The binding's lifetime for a task's TTL as its result states it (null or absent: without bound). */
export function bindingMs(ttl: unknown): number {
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0) return UNBOUNDED_TASK_MS;
  return Math.min(UNBOUNDED_TASK_MS, Math.max(MIN_TASK_MS, Math.ceil(ttl)));
}

/** In process, bounded: a replica alone needs nothing more, and a restart forgets (fails closed). */
export class MemoryTaskStore implements TaskStore {
  readonly #records: Lru<string, { readonly owner: TaskOwner; readonly until: number }>;
  readonly #now: () => number;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.#records = new Lru(maxEntries);
    this.#now = now;
  }

  bind(taskId: string, owner: TaskOwner, ttlMs: number): Promise<'bound' | 'taken'> {
    const held = this.#live(taskId);
    if (held !== undefined && held.principal !== owner.principal) return Promise.resolve('taken');
    this.#records.set(taskId, { owner, until: this.#now() + ttlMs });
    return Promise.resolve('bound');
  }

  owner(taskId: string): Promise<TaskOwner | undefined> {
    return Promise.resolve(this.#live(taskId));
  }

  owners(taskIds: readonly string[]): Promise<readonly (TaskOwner | undefined)[]> {
    return Promise.resolve(taskIds.map((id) => this.#live(id)));
  }

  #live(taskId: string): TaskOwner | undefined {
    const r = this.#records.get(taskId);
    if (r === undefined) return undefined;
    if (r.until > this.#now()) return r.owner;
    this.#records.delete(taskId);
    return undefined;
  }
}
