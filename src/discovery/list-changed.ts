/**
 * The open GET streams of each principal, so a discovery that activates
 * tools can tell that principal's clients their tools/list changed
 * (`notifications/tools/list_changed`). In process: a stream lives on the
 * replica that holds its connection, and an activation made through another
 * replica reaches this one's clients on their next tools/list instead.
 */

export interface NotificationSink {
  /** Adds a complete SSE event to the stream. */
  send(event: Buffer): void;
}

/** Server-to-client notification, as the Streamable HTTP transport frames it (default event type, no id). */
export const LIST_CHANGED_EVENT: Buffer = Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');

export class ListChangedStreams {
  readonly #byPrincipal = new Map<string, Set<NotificationSink>>();

  /** Registers a stream; the returned function removes it (call it when the stream ends). */
  open(principal: string, sink: NotificationSink): () => void {
    let sinks = this.#byPrincipal.get(principal);
    if (sinks === undefined) this.#byPrincipal.set(principal, (sinks = new Set()));
    sinks.add(sink);
    return () => {
      sinks.delete(sink);
      if (sinks.size === 0 && this.#byPrincipal.get(principal) === sinks) this.#byPrincipal.delete(principal);
    };
  }

  /** Whether the principal has a stream open here (so a change is worth working out). */
  watching(principal: string): boolean {
    return this.#byPrincipal.has(principal);
  }

  notify(principal: string): void {
    const sinks = this.#byPrincipal.get(principal);
    if (sinks === undefined) return;
    for (const sink of sinks) sink.send(LIST_CHANGED_EVENT);
  }
}
