import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SessionBindings } from '../../../src/auth/session-bindings.ts';

function store(maxEntries = 10) {
  const clock = { now: 1_000_000 };
  return { clock, sessions: new SessionBindings({ idleMs: 60_000, maxEntries, now: () => clock.now }) };
}

describe('SessionBindings', () => {
  it('lets only the principal that opened a session use it', () => {
    const { sessions } = store();
    sessions.bind('s1', 'alice');
    assert.equal(sessions.owns('s1', 'alice'), true);
    assert.equal(sessions.owns('s1', 'bob'), false);
    assert.equal(sessions.owns('never-issued', 'alice'), false);
  });

  it('keeps the first owner when another principal presents the same id at initialize', () => {
    const { sessions } = store();
    sessions.bind('s1', 'alice');
    sessions.bind('s1', 'bob');
    assert.equal(sessions.owns('s1', 'bob'), false);
    assert.equal(sessions.owns('s1', 'alice'), true);
  });

  it('forgets a binding left unused for the idle time, and a use by its owner restarts the clock', () => {
    const { clock, sessions } = store();
    sessions.bind('s1', 'alice');
    clock.now += 59_000;
    assert.equal(sessions.owns('s1', 'alice'), true);
    clock.now += 59_000;
    assert.equal(sessions.owns('s1', 'alice'), true, 'the use above kept it alive');
    clock.now += 60_000;
    assert.equal(sessions.owns('s1', 'alice'), false);
    assert.equal(sessions.size, 0);
    sessions.bind('s1', 'bob');
    assert.equal(sessions.owns('s1', 'bob'), true, 'a forgotten id is free to bind again');
  });

  it('drops the least recently used binding past its bound', () => {
    const { sessions } = store(2);
    sessions.bind('a', 'p');
    sessions.bind('b', 'p');
    assert.equal(sessions.owns('a', 'p'), true);
    sessions.bind('c', 'p');
    assert.equal(sessions.size, 2);
    assert.equal(sessions.owns('b', 'p'), false, 'b was the least recently used');
    assert.equal(sessions.owns('a', 'p'), true);
    assert.equal(sessions.owns('c', 'p'), true);
  });

  it("does not count another caller's probe as a use", () => {
    const { sessions } = store(2);
    sessions.bind('a', 'p');
    sessions.bind('b', 'p');
    assert.equal(sessions.owns('a', 'stranger'), false);
    sessions.bind('c', 'p');
    assert.equal(sessions.owns('a', 'p'), false, 'a stayed the least recently used');
    assert.equal(sessions.owns('b', 'p'), true);
  });

  it('forgets a session its owner ended', () => {
    const { sessions } = store();
    sessions.bind('s1', 'alice');
    sessions.end('s1');
    assert.equal(sessions.owns('s1', 'alice'), false);
  });

  it('remembers whether the session declared URL elicitation, through uses, and not for another owner', () => {
    const { clock, sessions } = store();
    sessions.bind('s1', 'alice', true);
    sessions.bind('s2', 'alice');
    assert.equal(sessions.owns('s1', 'alice'), true);
    assert.equal(sessions.urlElicitation('s1'), true);
    assert.equal(sessions.urlElicitation('s2'), false);
    sessions.bind('s2', 'bob', true);
    assert.equal(sessions.urlElicitation('s2'), false, "another principal's initialize changes nothing");
    assert.equal(sessions.urlElicitation('unknown'), false);
    clock.now += 61_000;
    assert.equal(sessions.urlElicitation('s1'), false, 'forgotten with the binding');
  });
});
