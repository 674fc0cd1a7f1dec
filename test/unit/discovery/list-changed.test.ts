import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { principalDigest } from '../../../src/cache/keys.ts';
import { listChangedEvent, ListChangedStreams, listensForToolChanges } from '../../../src/discovery/list-changed.ts';

function parse(event: Buffer): unknown {
  const text = event.toString('utf8');
  assert.ok(
    text.startsWith('data: ') && text.endsWith('\n\n') && !text.slice(0, -2).includes('\n'),
    'one data line, one event',
  );
  return JSON.parse(text.slice(6));
}

describe('list_changed streams', () => {
  it('tells only the streams of the principal whose list changed', () => {
    const streams = new ListChangedStreams();
    const told: string[] = [];
    streams.open('alice', () => told.push('alice-1'));
    streams.open('alice', () => told.push('alice-2'));
    streams.open('bob', () => told.push('bob'));
    streams.notify('alice');
    assert.deepEqual(told, ['alice-1', 'alice-2']);
    streams.notify('carol');
    assert.deepEqual(told, ['alice-1', 'alice-2']);
  });

  it('finds a principal by digest (a message from another replica) only while it has a stream open', () => {
    const streams = new ListChangedStreams();
    const told: string[] = [];
    const close = streams.open('alice', () => told.push('alice'));
    streams.notifyDigest(principalDigest('alice'));
    streams.notifyDigest(principalDigest('bob'));
    streams.notifyDigest('alice');
    assert.deepEqual(told, ['alice']);
    close();
    streams.notifyDigest(principalDigest('alice'));
    assert.deepEqual(told, ['alice']);
  });

  it('tells every open stream at once (a grant change)', () => {
    const streams = new ListChangedStreams();
    const told: string[] = [];
    streams.open('alice', () => told.push('alice'));
    const closeBob = streams.open('bob', () => told.push('bob'));
    closeBob();
    streams.open('carol', () => told.push('carol'));
    streams.notifyAll();
    assert.deepEqual(told, ['alice', 'carol']);
  });

  it('forgets a stream when it ends, and a principal with none left', () => {
    const streams = new ListChangedStreams();
    const told: string[] = [];
    const closeFirst = streams.open('alice', () => told.push('first'));
    const closeSecond = streams.open('alice', () => told.push('second'));
    closeFirst();
    streams.notify('alice');
    assert.deepEqual(told, ['second']);
    assert.equal(streams.watching('alice'), true);
    closeSecond();
    assert.equal(streams.watching('alice'), false);
    closeSecond();
    assert.equal(streams.watching('alice'), false);
  });

  it('frames the notification as one SSE event, stamped with the subscription on a listen stream', () => {
    assert.deepEqual(parse(listChangedEvent()), { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    assert.deepEqual(parse(listChangedEvent(7)), {
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
    });
    assert.deepEqual((parse(listChangedEvent('sub "1"\n')) as { params: unknown }).params, {
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub "1"\n' },
    });
  });

  it('recognises a listen request that opted in to tool list changes, and only that', () => {
    assert.equal(listensForToolChanges({ notifications: { toolsListChanged: true, promptsListChanged: true } }), true);
    for (const params of [
      undefined,
      {},
      { notifications: null },
      { notifications: { toolsListChanged: 'true' } },
      { notifications: { promptsListChanged: true } },
      { notifications: [true] },
    ]) {
      assert.equal(listensForToolChanges(params as Record<string, unknown> | undefined), false, JSON.stringify(params));
    }
  });
});
