import { principalDigest } from '../cache/keys.ts';
import type { JsonRpcId } from '../mcp/jsonrpc.ts';
import { isRecord } from '../json/record.ts';

/**
 * The open notification streams of each principal, so toolgate can tell
 * clients their tools/list changed (`notifications/tools/list_changed`) when
 * it changed for toolgate's reasons rather than the upstream's: a grant
 * change (every stream) or a discovery that activated tools (that
 * principal's). In process: a stream lives on the replica that holds its
 * connection; each replica hears grant changes itself, and activations made
 * through other replicas arrive by digest through the Redis relay
 * (list-changed-redis.ts), or without Redis on the clients' next tools/list.
 */
export class ListChangedStreams {
  readonly #byPrincipal = new Map<string, Set<() => void>>();
  /** Principals with a stream open, by SHA-256 digest: how other replicas name them. */
  readonly #byDigest = new Map<string, string>();

  /** Registers a stream by what tells it; the returned function removes it (call it when the stream ends). */
  open(principal: string, tell: () => void): () => void {
    let streams = this.#byPrincipal.get(principal);
    if (streams === undefined) {
      this.#byPrincipal.set(principal, (streams = new Set()));
      this.#byDigest.set(principalDigest(principal), principal);
    }
    streams.add(tell);
    return () => {
      streams.delete(tell);
      if (streams.size === 0 && this.#byPrincipal.get(principal) === streams) {
        this.#byPrincipal.delete(principal);
        this.#byDigest.delete(principalDigest(principal));
      }
    };
  }

  /** Whether the principal has a stream open here (so a change is worth working out). */
  watching(principal: string): boolean {
    return this.#byPrincipal.has(principal);
  }

  notify(principal: string): void {
    const streams = this.#byPrincipal.get(principal);
    if (streams === undefined) return;
    for (const tell of streams) tell();
  }

  /** As `notify`, for a principal named by its SHA-256 digest (a message from another replica). */
  notifyDigest(digest: string): void {
    const principal = this.#byDigest.get(digest);
    if (principal !== undefined) this.notify(principal);
  }

  notifyAll(): void {
    for (const streams of this.#byPrincipal.values()) for (const tell of streams) tell();
  }
}

/**
 * The notification as one SSE event (default event type, no id). On a
 * 2026-07-28 `subscriptions/listen` stream it names the subscription it
 * belongs to, as the server's own notifications there do; on a 2025 GET
 * stream it carries nothing else.
 */
export function listChangedEvent(subscriptionId?: JsonRpcId): Buffer {
  const params =
    subscriptionId === undefined || subscriptionId === null
      ? ''
      : `,"params":{"_meta":{"io.modelcontextprotocol/subscriptionId":${JSON.stringify(subscriptionId)}}}`;
  return Buffer.from(`data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"${params}}\n\n`);
}

/** Whether a `subscriptions/listen` request opted in to tool list changes. */
export function listensForToolChanges(params: Readonly<Record<string, unknown>> | undefined): boolean {
  const filter = params?.notifications;
  return isRecord(filter) && filter.toolsListChanged === true;
}
