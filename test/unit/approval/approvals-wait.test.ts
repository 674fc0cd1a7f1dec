import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { Approvals, type HeldCall } from '../../../src/approval/approvals.ts';
import { MemoryApprovalStore } from '../../../src/approval/store.ts';

const rule = { approverScope: 'approve', expiresIn: 900, selfApproval: false };
const call = (request?: IncomingMessage): HeldCall => ({
  principal: 'caller',
  tool: 'refund',
  argumentsDigest: 'a'.repeat(64),
  policyRevision: 'r1',
  rule,
  arguments: '{}',
  ...(request !== undefined && { request }),
});

/** A store that counts how often a held call reads it. */
function counted(): { store: MemoryApprovalStore; spends: () => number } {
  const store = new MemoryApprovalStore();
  let n = 0;
  const spend = store.spend.bind(store);
  store.spend = (...args) => {
    n++;
    return spend(...args);
  };
  return { store, spends: () => n };
}

describe('Approvals.forCallWaiting', () => {
  it('a decision made here ends the wait at once, and the waiting call spends it', async () => {
    const { store } = counted();
    const approvals = new Approvals({ store, pageUrl: () => 'http://page' });
    const asked = await approvals.forCall(call());
    assert.equal(asked.kind, 'ask');
    const waiting = approvals.forCallWaiting(call(), 60_000);
    const decided = await approvals.decide(
      asked.kind === 'ask' ? asked.record.id : '',
      { id: 'alice', scopes: new Set(['approve']) },
      'approved',
      'page',
    );
    assert.equal(decided.ok, true);
    assert.equal((await waiting).kind, 'run');
  });

  it(
    'stops waiting for a caller whose connection is gone, reading the store no further',
    { timeout: 20_000 },
    async () => {
      const { store, spends } = counted();
      const approvals = new Approvals({ store, pageUrl: () => 'http://page' });
      await approvals.forCall(call());
      const socket = { destroyed: false };
      const request = { socket } as unknown as IncomingMessage;
      const waiting = approvals.forCallWaiting(call(request), 60_000);
      socket.destroyed = true;
      const before = spends();
      assert.equal((await waiting).kind, 'ask');
      assert.ok(spends() - before <= 1, 'at most the read already under way when the caller left');
    },
  );

  it('with no time to wait, answers as forCall does', async () => {
    const approvals = new Approvals({ store: new MemoryApprovalStore(), pageUrl: () => 'http://page' });
    assert.equal((await approvals.forCallWaiting(call(), 0)).kind, 'ask');
  });
});
