import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIST_CHANGED_EVENT, ListChangedStreams, type NotificationSink } from '../../../src/discovery/list-changed.ts';

class Recorded implements NotificationSink {
  readonly events: string[] = [];
  send(event: Buffer): void {
    this.events.push(event.toString('utf8'));
  }
}

describe('list_changed streams', () => {
  it('tells only the streams of the principal whose list changed', () => {
    const streams = new ListChangedStreams();
    const alice1 = new Recorded();
    const alice2 = new Recorded();
    const bob = new Recorded();
    streams.open('alice', alice1);
    streams.open('alice', alice2);
    streams.open('bob', bob);
    streams.notify('alice');
    assert.equal(alice1.events.length, 1);
    assert.equal(alice2.events.length, 1);
    assert.equal(bob.events.length, 0);
    assert.equal(alice1.events[0], LIST_CHANGED_EVENT.toString('utf8'));
  });

  it('frames a JSON-RPC notification as one SSE event', () => {
    const text = LIST_CHANGED_EVENT.toString('utf8');
    assert.ok(text.startsWith('data: ') && text.endsWith('\n\n'));
    assert.deepEqual(JSON.parse(text.slice(6)), { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  });

  it('forgets a stream when it ends, and a principal with none left', () => {
    const streams = new ListChangedStreams();
    const first = new Recorded();
    const second = new Recorded();
    const closeFirst = streams.open('alice', first);
    const closeSecond = streams.open('alice', second);
    closeFirst();
    streams.notify('alice');
    assert.deepEqual([first.events.length, second.events.length], [0, 1]);
    assert.equal(streams.watching('alice'), true);
    closeSecond();
    assert.equal(streams.watching('alice'), false);
    closeSecond();
    assert.equal(streams.watching('alice'), false);
  });
});
