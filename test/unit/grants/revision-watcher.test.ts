import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RevisionWatcher } from '../../../src/grants/revision-watcher.ts';
import type { RevisionRead } from '../../../src/grants/sources/types.ts';

function setup(stalenessMs = 1000) {
  let t = 0;
  const replies: (RevisionRead | Error)[] = [];
  const seen: number[] = [];
  const w = new RevisionWatcher({
    stalenessMs,
    checkIntervalMs: 100,
    now: () => t,
    read: () => {
      const next = replies.shift() ?? { ok: false, code: 'grants_unavailable' };
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  });
  w.onChange((r) => seen.push(r));
  return {
    w,
    seen,
    advance: (ms: number) => {
      t += ms;
    },
    reply: (...rs: (RevisionRead | Error)[]) => {
      replies.push(...rs);
    },
  };
}
const rev = (revision: number): RevisionRead => ({ ok: true, revision });

describe('RevisionWatcher', () => {
  it('has no revision until one is read, then trusts it for the staleness bound only', async () => {
    const s = setup(1000);
    assert.equal(s.w.revision(), undefined);
    s.reply(rev(7));
    await s.w.check();
    assert.equal(s.w.revision(), 7);
    s.advance(1000);
    assert.equal(s.w.revision(), 7);
    s.advance(1);
    assert.equal(s.w.revision(), undefined);
    s.reply(rev(7));
    await s.w.check();
    assert.equal(s.w.revision(), 7);
    assert.deepEqual(s.seen, [7]);
  });

  it('failed reads and thrown errors confirm nothing', async () => {
    const s = setup(500);
    s.reply(rev(1));
    await s.w.check();
    s.reply({ ok: false, code: 'grants_unavailable' }, new Error('boom'));
    s.advance(300);
    await s.w.check();
    s.advance(300);
    await s.w.check();
    assert.equal(s.w.revision(), undefined);
    assert.equal(s.w.stats().checkFailures, 2);
  });

  it('dates confirmation from when the read was sent, so a slow reply does not stretch the bound', async () => {
    let t = 0;
    let release: (r: RevisionRead) => void = () => {};
    const w = new RevisionWatcher({
      stalenessMs: 1000,
      checkIntervalMs: 100,
      now: () => t,
      read: () =>
        new Promise((res) => {
          release = res;
        }),
    });
    const pending = w.check();
    t = 900;
    release(rev(3));
    await pending;
    t = 1001;
    assert.equal(w.revision(), undefined);
  });

  it('believes higher notices at once but not lower ones', async () => {
    const s = setup();
    s.w.notify(5);
    assert.equal(s.w.revision(), undefined, 'a notice alone does not confirm');
    s.reply(rev(5));
    await s.w.check();
    s.w.notify(6);
    assert.equal(s.w.revision(), 6);
    s.w.notify(4);
    assert.equal(s.w.revision(), 6);
    assert.deepEqual(s.seen, [5, 6]);
  });

  it('a read above everything confirmed but below a notice is believed only when the next read agrees', async () => {
    const s = setup();
    s.reply(rev(5), rev(5), rev(5));
    await s.w.check();
    s.w.notify(6);
    await s.w.check();
    assert.equal(s.w.revision(), 6, 'a read that raced a notice is ignored');
    await s.w.check();
    assert.equal(s.w.revision(), 5);
    assert.deepEqual(s.seen, [5, 6, 5]);
  });

  it('a read below the confirmed revision is a store fault, never believed: nothing is trusted until the revision is back', async () => {
    const s = setup();
    const health: string[] = [];
    s.w.onHealth((h) => health.push(`${h.state}:${h.read}:${h.confirmed}`));
    s.reply(rev(6), rev(0), rev(0), rev(3), rev(6));
    await s.w.check();
    await s.w.check();
    assert.equal(s.w.revision(), undefined, 'Redis restarted empty: revision 0 is not "nothing granted"');
    await s.w.check();
    await s.w.check();
    assert.equal(s.w.revision(), undefined, 'a revision still below the confirmed one does not end the fault');
    s.w.notify(9);
    assert.equal(s.w.lastSeen(), 6, 'notices are not believed during a fault');
    await s.w.check();
    assert.equal(s.w.revision(), 6);
    assert.deepEqual(s.seen, [6, 6], 'recovery tells listeners, so caches built before the fault are dropped');
    assert.deepEqual(health, ['ok:6:6', 'fault:0:6', 'ok:6:6']);
    assert.equal(s.w.stats().faults, 1);
  });

  it('a jump past the confirmed revision (toolgate grants revision --reset) ends a fault', async () => {
    const s = setup();
    s.reply(rev(40), rev(2), rev(1_800_000_000_000));
    await s.w.check();
    await s.w.check();
    assert.equal(s.w.revision(), undefined);
    await s.w.check();
    assert.equal(s.w.revision(), 1_800_000_000_000);
  });

  it('a read answered by a node that is not the master withdraws confirmation at once', async () => {
    const s = setup(10_000);
    const health: string[] = [];
    s.w.onHealth((h) => health.push(h.state));
    s.reply(
      rev(4),
      { ok: false, code: 'grants_unavailable', reason: 'not_master' },
      { ok: false, code: 'grants_unavailable' },
      rev(4),
    );
    await s.w.check();
    await s.w.check();
    assert.equal(s.w.revision(), undefined, 'well inside the staleness bound');
    await s.w.check();
    await s.w.check();
    assert.equal(s.w.revision(), 4);
    assert.deepEqual(health, ['ok', 'not_master', 'unreachable', 'ok']);
  });

  it('reports when the revision was last confirmed, so its age grows from there', async () => {
    const s = setup();
    assert.equal(s.w.confirmedAt(), undefined);
    s.advance(50);
    s.reply(rev(1));
    await s.w.check();
    s.advance(400);
    await s.w.check();
    assert.equal(s.w.confirmedAt(), 50);
  });

  it('a throwing listener does not stop the others', async () => {
    const s = setup();
    s.w.onChange(() => {
      throw new Error('listener');
    });
    const late: number[] = [];
    s.w.onChange((r) => late.push(r));
    s.reply(rev(2));
    await s.w.check();
    assert.deepEqual(late, [2]);
  });
});
