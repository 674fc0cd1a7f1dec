/**
 * The approval store contract, in process and in a real redis-server: one
 * record per binding, single use, expiry, and decisions only on pending
 * records inside their time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Approvals } from '../../src/approval/approvals.ts';
import { bindingOf, newApprovalId, type ApprovalRecord } from '../../src/approval/record.ts';
import { RedisApprovalStore } from '../../src/approval/redis-store.ts';
import { MemoryApprovalStore, type ApprovalStore } from '../../src/approval/store.ts';
import { run as approvalsCli } from '../../src/commands/approvals.ts';
import { approvalKeys } from '../../src/cache/keys.ts';
import type { RedisClient } from '../../src/cache/redis.ts';
import { readyClient } from '../helpers/redis-client.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';
import { replicaCaughtUp } from '../helpers/redis-topologies.ts';

const T0 = 1_800_000_000_000;
let serial = 0;

function draft(now = T0, ttlMs = 60_000): ApprovalRecord {
  const parts = {
    principal: 'caller',
    tool: 'refund_payment',
    argumentsDigest: `d${++serial}`,
    policyRevision: '1.abc',
  };
  return {
    id: newApprovalId(),
    binding: bindingOf(parts),
    ...parts,
    approverScope: 'payments.approve',
    selfApproval: false,
    createdAt: now,
    expiresAt: now + ttlMs,
    state: 'pending',
    arguments: '{"amount":250}',
  };
}

describe('MemoryApprovalStore at its bound', () => {
  it('forgets the oldest record by id as well as by binding when it makes room', async () => {
    const store = new MemoryApprovalStore();
    const first = draft();
    await store.open(first);
    const rest = Array.from({ length: 10_000 }, () => draft());
    for (const r of rest) await store.open(r);
    assert.equal(await store.get(first.id), undefined);
    assert.equal((await store.decide(first.id, 'approved', 'alice', T0)).kind, 'not_found');
    assert.equal((await store.get(rest[0]?.id as string))?.binding, rest[0]?.binding);
    assert.equal((await store.pending(T0, 20_000)).length, 10_000);
  });
});

function contract(name: string, make: () => ApprovalStore) {
  describe(`${name}: the approval store contract`, () => {
    it('opens one record per binding: a second open gets the first', async () => {
      const store = make();
      const a = draft();
      assert.equal((await store.open(a)).created, true);
      const again = await store.open({ ...a, id: newApprovalId() });
      assert.equal(again.created, false);
      assert.equal(again.record.id, a.id);
    });

    it('keeps a pending record on spend, and spends an approved one exactly once', async () => {
      const store = make();
      const a = draft();
      await store.open(a);
      assert.equal((await store.spend(a.binding, T0 + 1)).kind, 'pending');
      assert.equal((await store.decide(a.id, 'approved', 'alice', T0 + 2)).kind, 'decided');
      const spent = await store.spend(a.binding, T0 + 3);
      assert.equal(spent.kind, 'spent');
      assert.equal(spent.kind === 'spent' && spent.record.decidedBy, 'alice');
      assert.equal((await store.spend(a.binding, T0 + 4)).kind, 'none');
      assert.equal(await store.get(a.id), undefined);
    });

    it('reports a denied record once, then forgets it', async () => {
      const store = make();
      const a = draft();
      await store.open(a);
      await store.decide(a.id, 'denied', 'alice', T0 + 1);
      assert.equal((await store.spend(a.binding, T0 + 2)).kind, 'denied');
      assert.equal((await store.spend(a.binding, T0 + 3)).kind, 'none');
    });

    it('expires: an approved record used after expiresAt is expired, not spent; a late decision changes nothing', async () => {
      const store = make();
      const a = draft(T0, 10_000);
      await store.open(a);
      await store.decide(a.id, 'approved', 'alice', T0 + 1);
      assert.equal((await store.spend(a.binding, T0 + 10_000)).kind, 'expired');
      const b = draft(T0, 10_000);
      await store.open(b);
      assert.equal((await store.decide(b.id, 'approved', 'alice', T0 + 10_001)).kind, 'not_pending');
      assert.equal((await store.spend(b.binding, T0 + 10_002)).kind, 'expired');
    });

    it('decides only once', async () => {
      const store = make();
      const a = draft();
      await store.open(a);
      assert.equal((await store.decide(a.id, 'denied', 'alice', T0 + 1)).kind, 'decided');
      assert.equal((await store.decide(a.id, 'approved', 'bob', T0 + 2)).kind, 'not_pending');
      assert.equal((await store.decide(newApprovalId(), 'approved', 'bob', T0 + 2)).kind, 'not_found');
    });

    it('lists pending records inside their time, soonest first', async () => {
      const store = make();
      const late = draft(T0, 50_000);
      const soon = draft(T0, 20_000);
      const gone = draft(T0, 10_000);
      const decidedOne = draft(T0, 30_000);
      for (const r of [late, soon, gone, decidedOne]) await store.open(r);
      await store.decide(decidedOne.id, 'approved', 'alice', T0 + 1);
      const ids = (await store.pending(T0 + 15_000, 10)).map((r) => r.id);
      assert.deepEqual(
        ids.filter((id) => [late.id, soon.id, gone.id, decidedOne.id].includes(id)),
        [soon.id, late.id],
      );
    });
  });
}

contract('in process', () => new MemoryApprovalStore());

let redis: RedisServer;
let client: RedisClient;
before(async () => {
  redis = await startRedis();
  client = await readyClient(redis.url, { commandTimeoutMs: 2000, connectTimeoutMs: 2000, name: 'approval-test' });
});
after(async () => {
  client?.disconnect();
  await redis?.close();
});
contract('Redis', () => new RedisApprovalStore({ client, domain: `t${++serial}` }));

describe('RedisApprovalStore under faults: a spend Redis cannot vouch for leaves the approval usable', () => {
  const approved = async (store: RedisApprovalStore) => {
    const a = draft();
    await store.open(a);
    assert.equal((await store.decide(a.id, 'approved', 'alice', T0 + 1)).kind, 'decided');
    return a;
  };

  it('Redis stalled past the deadline during the spend: unavailable, and the spend that ran late is put back', async () => {
    const impatient = await readyClient(redis.url, {
      commandTimeoutMs: 200,
      connectTimeoutMs: 2000,
      name: 'approval-stall',
    });
    try {
      const store = new RedisApprovalStore({
        client: impatient,
        domain: `stall${++serial}`,
        guard: { waitReplicas: 0, timeoutMs: 200 },
      });
      const a = await approved(store);
      // The script is loaded first, so the stalled spend is the real one, not a NOSCRIPT answer.
      assert.equal((await store.spend('no-such-binding', T0)).kind, 'none');
      assert.match(await redis.command('CLIENT', 'PAUSE', '600', 'WRITE'), /^\+OK/);
      await assert.rejects(store.spend(a.binding, T0 + 2));
      // Past the pause, and past the second in which the client's breaker refuses without sending.
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await store.get(a.id))?.state, 'approved', 'not burnt');
      assert.equal((await store.spend(a.binding, T0 + 3)).kind, 'spent', 'and spent once, when Redis answers');
      assert.equal((await store.spend(a.binding, T0 + 4)).kind, 'none');
    } finally {
      impatient.disconnect();
    }
  });

  it('with a replica to wait for that does not acknowledge: unavailable, put back, and spent once it does', async () => {
    await redis.command('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(redis.port)]);
    try {
      const store = new RedisApprovalStore({
        client,
        domain: `wait${++serial}`,
        guard: { waitReplicas: 1, timeoutMs: 1000 },
      });
      await replicaCaughtUp(redis.port);
      const a = await approved(store);
      replica.freeze();
      try {
        await assert.rejects(store.spend(a.binding, T0 + 2));
        assert.equal(
          (await store.get(a.id))?.state,
          'approved',
          'a failover to that replica could have handed it out again: not spent',
        );
      } finally {
        replica.thaw();
      }
      let spent: string | undefined;
      for (let i = 0; i < 100 && spent === undefined; i++)
        spent = await store.spend(a.binding, T0 + 3).then(
          (r) => r.kind,
          () => undefined,
        );
      assert.equal(spent, 'spent');
    } finally {
      await replica.close();
    }
  });
});

describe('RedisApprovalStore across a failover: a spend applied but never confirmed is not a silent burn', () => {
  it('the take-back is stuck behind a stalled master when it dies: the promoted replica says unsettled, then asks anew', async () => {
    const master = await startRedis();
    const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
    // WAIT blocks for half the guard's 6 s: the pause below must land before it gives up and sends the
    // take-back, and on a busy machine a 0.5 s WAIT could be over first.
    const onMaster = await readyClient(master.url, {
      commandTimeoutMs: 8000,
      connectTimeoutMs: 2000,
      name: 'approval-failover',
    });
    const probe = await readyClient(master.url, {
      commandTimeoutMs: 2000,
      connectTimeoutMs: 2000,
      name: 'approval-failover-probe',
    });
    let promoted: RedisClient | undefined;
    try {
      await master.command('CONFIG', 'SET', 'repl-diskless-sync-delay', '0');
      const domain = `failover${++serial}`;
      const store = new RedisApprovalStore({ client: onMaster, domain, guard: { waitReplicas: 1, timeoutMs: 6000 } });
      const a = draft();
      await store.open(a);
      assert.equal((await store.decide(a.id, 'approved', 'alice', T0 + 1)).kind, 'decided');
      await replicaCaughtUp(master.port);
      replica.freeze();
      const spending = store.spend(a.binding, T0 + 2);
      // The spend has run on the master and sits in the frozen replica's stream; its WAIT is still waiting.
      const record = approvalKeys(domain).record(a.binding);
      for (let i = 0; i < 200 && (await probe.exists(record)) === 1; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(await probe.exists(record), 0);
      assert.match(await master.command('CLIENT', 'PAUSE', '10000', 'WRITE'), /^\+OK/);
      await assert.rejects(spending, 'unacknowledged: the call does not run');
      await master.kill();
      replica.thaw();
      assert.match(await replica.command('REPLICAOF', 'NO', 'ONE'), /^\+OK/);
      promoted = await readyClient(replica.url, {
        commandTimeoutMs: 2000,
        connectTimeoutMs: 2000,
        name: 'approval-promoted',
      });
      const after = new RedisApprovalStore({ client: promoted, domain });
      const repeat = await after.spend(a.binding, T0 + 3);
      assert.equal(repeat.kind, 'unsettled', 'not none: a fresh approval would hide that the call may have run');
      assert.equal(repeat.kind === 'unsettled' && repeat.record.id, a.id);
      assert.equal(
        (await after.spend(a.binding, T0 + 4)).kind,
        'unsettled',
        'told until the spend is past any take-back',
      );
      assert.equal((await after.spend(a.binding, T0 + 61_000)).kind, 'unsettled');
      assert.equal(
        (await after.spend(a.binding, T0 + 61_001)).kind,
        'none',
        'then the next repeat asks for a new approval',
      );
    } finally {
      onMaster.disconnect();
      probe.disconnect();
      promoted?.disconnect();
      await replica.close();
      await master.close();
    }
  });

  it('a spend Redis confirms leaves no marker: the next repeat asks anew', async () => {
    const store = new RedisApprovalStore({ client, domain: `confirm${++serial}` });
    const a = draft();
    await store.open(a);
    await store.decide(a.id, 'approved', 'alice', T0 + 1);
    assert.equal((await store.spend(a.binding, T0 + 2)).kind, 'spent');
    await client.ping();
    assert.equal((await store.spend(a.binding, T0 + 3)).kind, 'none');
  });
});

describe('Approvals: who may decide, and what a held call gets', () => {
  const rule = { approverScope: 'payments.approve', expiresIn: 60, selfApproval: false };
  const call = {
    principal: 'caller',
    tool: 'refund_payment',
    argumentsDigest: 'abc',
    policyRevision: '1.x',
    rule,
    arguments: '{}',
  };
  let now = T0;
  const approvals = () =>
    new Approvals({ store: new MemoryApprovalStore(), pageUrl: () => 'https://approve.example', now: () => now });

  it('asks once, sends the caller to the page, and lets the approved call run once', async () => {
    const a = approvals();
    const asked = await a.forCall(call);
    assert.equal(asked.kind, 'ask');
    assert.ok(asked.kind === 'ask' && asked.url === `https://approve.example/approvals/${asked.record.id}`);
    const id = asked.kind === 'ask' ? asked.record.id : '';
    const again = await a.forCall(call);
    assert.equal(again.kind === 'ask' && again.record.id, id);
    assert.deepEqual(
      (await a.decide(id, { id: 'alice', scopes: new Set(['payments.approve']) }, 'approved', 'page')).ok,
      true,
    );
    assert.equal((await a.forCall(call)).kind, 'run');
    assert.equal((await a.forCall(call)).kind, 'ask');
  });

  it('enforces approverScope and selfApproval', async () => {
    const a = approvals();
    const asked = await a.forCall(call);
    const id = asked.kind === 'ask' ? asked.record.id : '';
    const noScope = await a.decide(id, { id: 'bob', scopes: new Set(['payments']) }, 'approved', 'page');
    assert.equal(!noScope.ok && noScope.error, 'approver_scope_required');
    const self = await a.decide(id, { id: 'caller', scopes: new Set(['payments.approve']) }, 'approved', 'page');
    assert.equal(!self.ok && self.error, 'self_approval_refused');
    // The CLI skips the scope check, never the self-approval rule.
    const cliSelf = await a.decide(id, { id: 'caller', scopes: new Set() }, 'approved', 'cli', false);
    assert.equal(!cliSelf.ok && cliSelf.error, 'self_approval_refused');
    const selfAllowed = approvals();
    const own = await selfAllowed.forCall({ ...call, rule: { ...rule, selfApproval: true } });
    assert.equal(
      (
        await selfAllowed.decide(
          own.kind === 'ask' ? own.record.id : '',
          { id: 'caller', scopes: new Set(['payments.approve']) },
          'approved',
          'page',
        )
      ).ok,
      true,
    );
  });

  it("expires after the rule's expiresIn: the repeat is told approval_expired once, then a new approval is asked", async () => {
    const a = approvals();
    now = T0;
    const asked = await a.forCall(call);
    await a.decide(
      asked.kind === 'ask' ? asked.record.id : '',
      { id: 'alice', scopes: new Set(['payments.approve']) },
      'approved',
      'page',
    );
    now = T0 + rule.expiresIn * 1000;
    assert.equal((await a.forCall(call)).kind, 'expired');
    const fresh = await a.forCall(call);
    assert.equal(fresh.kind, 'ask');
    now = T0;
  });

  it('fails closed when the store cannot be reached', async () => {
    const broken: ApprovalStore = {
      open: () => Promise.reject(new Error('down')),
      spend: () => Promise.reject(new Error('down')),
      get: () => Promise.reject(new Error('down')),
      decide: () => Promise.reject(new Error('down')),
      pending: () => Promise.reject(new Error('down')),
    };
    const a = new Approvals({ store: broken, pageUrl: () => 'https://x' });
    assert.equal((await a.forCall(call)).kind, 'unavailable');
    const d = await a.decide(newApprovalId(), { id: 'alice', scopes: new Set() }, 'approved', 'page');
    assert.equal(!d.ok && d.error, 'approval_unavailable');
  });
});

describe('toolgate approvals (CLI) against Redis', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: { env: {}, stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } },
    };
  };
  const flags = () => ['--redis-url', redis.url, '--domain', 'cli'];

  it('lists and shows pending approvals without argument values, refuses self-approval, approves once', async () => {
    const approvals = new Approvals({
      store: new RedisApprovalStore({ client, domain: 'cli' }),
      pageUrl: () => 'https://x',
    });
    const rule = { approverScope: 'payments.approve', expiresIn: 600, selfApproval: false };
    const asked = await approvals.forCall({
      principal: 'caller',
      tool: 'refund_payment',
      argumentsDigest: 'f'.repeat(64),
      policyRevision: '1.a',
      rule,
      arguments: '{"iban":"DE-secret-iban"}',
    });
    assert.equal(asked.kind, 'ask');
    const id = asked.kind === 'ask' ? asked.record.id : '';
    const list = io();
    assert.equal(await approvalsCli(['list', ...flags()], list.io), 0);
    assert.equal(JSON.parse(list.out.join('').trim()).id, id);
    assert.ok(!list.out.join('').includes('secret-iban'));
    const self = io();
    assert.equal(await approvalsCli(['approve', id, '--as', 'caller', ...flags()], self.io), 2);
    assert.match(self.err.join(''), /self_approval_refused/);
    const ok = io();
    assert.equal(await approvalsCli(['approve', id, '--as', 'alice', ...flags()], ok.io), 0);
    assert.equal(JSON.parse(ok.out.join('')).state, 'approved');
    const again = io();
    assert.equal(await approvalsCli(['deny', id, '--as', 'alice', ...flags()], again.io), 2);
    assert.match(again.err.join(''), /approval_already_decided/);
    const show = io();
    assert.equal(await approvalsCli(['show', id, ...flags()], show.io), 0);
    assert.equal(JSON.parse(show.out.join('')).decidedBy, 'alice');
    assert.ok(!show.out.join('').includes('secret-iban'));
  });

  it('refuses bad input with one line and status 2', async () => {
    for (const argv of [
      ['approve', 'short', '--as', 'a', ...flags()],
      ['approve', 'x'.repeat(22), ...flags()],
      ['list'],
      ['nope'],
    ]) {
      const r = io();
      assert.equal(await approvalsCli(argv, r.io), 2, argv.join(' '));
      assert.equal(r.err.length, 1);
    }
  });
});
