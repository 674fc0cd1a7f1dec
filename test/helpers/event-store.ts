import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * An ordered in-memory event store for the fixture server. (The SDK's example
 * store derives the stream from the event id by splitting on "_", which breaks
 * for the standalone stream id `_GET_stream`, so GET streams never replay.)
 */
export class OrderedEventStore implements EventStore {
  #next = 0;
  readonly #events = new Map<string, { streamId: string; message: JSONRPCMessage }>();

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `e${++this.#next}`;
    this.#events.set(id, { streamId, message });
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (id: string, m: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.#events.get(lastEventId)?.streamId;
    if (streamId === undefined) return '';
    let after = false;
    for (const [id, e] of this.#events) {
      if (after && e.streamId === streamId) await send(id, e.message);
      if (id === lastEventId) after = true;
    }
    return streamId;
  }
}
