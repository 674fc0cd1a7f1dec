import { Lru } from '../cache/lru.ts';

/**
 * Which principal opened each MCP session (2025 Streamable HTTP). A session
 * id is not a credential, and a server toolgate did not write may keep
 * per-session state another caller must not reach: a resumable stream's
 * events (tool results) are replayed to whoever presents the id with
 * Last-Event-ID. So an id is bound to the principal whose `initialize`
 * created it through toolgate, and only that principal may use it.
 *
 * In process, one store per sidecar, like the sessions themselves: each pod's
 * server keeps its own, so a session never outlives its replica. Bounded: an
 * id unused for `idleMs` is forgotten, and at `maxEntries` the least recently
 * used goes first; a forgotten id is answered as unknown, and MCP clients
 * start a new session.
 */
export class SessionBindings {
  readonly #idleMs: number;
  readonly #now: () => number;
  readonly #owners: Lru<string, { principal: string; usedAt: number }>;

  constructor(opts: { idleMs: number; maxEntries: number; now?: () => number }) {
    this.#idleMs = opts.idleMs;
    this.#now = opts.now ?? Date.now;
    this.#owners = new Lru(opts.maxEntries);
  }

  get size(): number {
    return this.#owners.size;
  }

  /** Records that `principal` opened `sessionId`; an id already bound to another principal keeps its owner. */
  bind(sessionId: string, principal: string): void {
    const held = this.#live(sessionId);
    if (held !== undefined && held !== principal) return;
    this.#owners.set(sessionId, { principal, usedAt: this.#now() });
  }

  /** Whether `principal` opened `sessionId`; a use by its owner keeps the binding alive. */
  owns(sessionId: string, principal: string): boolean {
    if (this.#live(sessionId) !== principal) return false;
    this.#owners.set(sessionId, { principal, usedAt: this.#now() });
    return true;
  }

  /** Forgets a session its owner ended. */
  end(sessionId: string): void {
    this.#owners.delete(sessionId);
  }

  /** The owner of a binding still in use; another caller's probe does not count as a use. */
  #live(sessionId: string): string | undefined {
    const entry = this.#owners.peek(sessionId);
    if (entry === undefined) return undefined;
    if (this.#now() - entry.usedAt < this.#idleMs) return entry.principal;
    this.#owners.delete(sessionId);
    return undefined;
  }
}
