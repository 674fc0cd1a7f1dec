import { Lru } from '../bounded/lru.ts';

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
  readonly #owners: Lru<string, Binding>;

  constructor(opts: { idleMs: number; maxEntries: number; now?: () => number }) {
    this.#idleMs = opts.idleMs;
    this.#now = opts.now ?? Date.now;
    this.#owners = new Lru(opts.maxEntries);
  }

  get size(): number {
    return this.#owners.size;
  }

  /**
   * Records that `principal` opened `sessionId`, and whether its initialize
   * declared URL-mode elicitation; an id already bound to another principal
   * keeps its owner.
   */
  bind(sessionId: string, principal: string, urlElicitation = false): void {
    const held = this.#live(sessionId);
    if (held !== undefined && held.principal !== principal) return;
    this.#owners.set(sessionId, { principal, usedAt: this.#now(), urlElicitation });
  }

  /** Whether `principal` opened `sessionId`; a use by its owner keeps the binding alive. */
  owns(sessionId: string, principal: string): boolean {
    const held = this.#live(sessionId);
    if (held?.principal !== principal) return false;
    this.#owners.set(sessionId, { ...held, usedAt: this.#now() });
    return true;
  }

  /** Whether the session's initialize declared URL-mode elicitation (2025-11-25: who may get -32042). */
  urlElicitation(sessionId: string): boolean {
    return this.#live(sessionId)?.urlElicitation === true;
  }

  /** Forgets a session its owner ended. */
  end(sessionId: string): void {
    this.#owners.delete(sessionId);
  }

  /** A binding still in use; another caller's probe does not count as a use. */
  #live(sessionId: string): Binding | undefined {
    const entry = this.#owners.peek(sessionId);
    if (entry === undefined) return undefined;
    if (this.#now() - entry.usedAt < this.#idleMs) return entry;
    this.#owners.delete(sessionId);
    return undefined;
  }
}

interface Binding {
  readonly principal: string;
  readonly usedAt: number;
  readonly urlElicitation: boolean;
}
