import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { composeChain } from '../../../src/pipeline/compose.ts';
import { deny, PASS, type Exchange, type Interceptor } from '../../../src/interceptors/contract.ts';
import { decision, type Decision } from '../../../src/telemetry/channels.ts';

const exchange = (method: string) =>
  ({
    request: {} as IncomingMessage,
    message: { method },
    principal: { id: 'p', scopes: new Set(), credentialStrength: 'static' },
  }) as unknown as Exchange;

function recorder(name: string, seen: string[], verdict = PASS, methods = ['tools/call'], async = false): Interceptor {
  return {
    name,
    methods,
    intercept() {
      seen.push(name);
      return async ? Promise.resolve(verdict) : verdict;
    },
  };
}

describe('composeChain', () => {
  it('refuses a malformed chain when it is built, not per request', () => {
    assert.throws(() => composeChain([recorder('a', []), recorder('a', [])]), /listed twice/);
    assert.throws(() => composeChain([recorder('Bad-Name', [])]), /snake_case/);
    assert.throws(() => composeChain([recorder('a', [], PASS, [])]), /no method/);
  });

  it('runs in array order, mixing sync and async, and stops at the first refusal', async () => {
    const seen: string[] = [];
    const chain = composeChain([
      recorder('first', seen),
      recorder('second', seen, PASS, ['tools/call'], true),
      recorder('third', seen, deny('tool_not_granted'), ['tools/call'], true),
      recorder('fourth', seen),
    ]);
    const v = await chain.run(exchange('tools/call'));
    assert.deepEqual(seen, ['first', 'second', 'third']);
    assert.equal(v.kind === 'deny' && v.error, 'tool_not_granted');
  });

  it('stays synchronous when every interceptor is', () => {
    const chain = composeChain([recorder('a', []), recorder('b', [])]);
    assert.equal(chain.run(exchange('tools/call')), PASS);
  });

  it('routes by method: other methods skip the chain', () => {
    const seen: string[] = [];
    const chain = composeChain([recorder('calls', seen), recorder('lists', seen, PASS, ['tools/list'])]);
    void chain.run(exchange('tools/list'));
    void chain.run(exchange('ping'));
    assert.deepEqual(seen, ['lists']);
  });

  it('skips an interceptor that does not apply, publishing nothing for it', () => {
    const seen: string[] = [];
    const published: Decision[] = [];
    const listen = (m: unknown) => published.push(m as Decision);
    decision.subscribe(listen);
    try {
      const idle: Interceptor = { ...recorder('idle', seen, deny('validator_denied')), applies: () => false };
      const chain = composeChain([idle, recorder('busy', seen)]);
      assert.equal(chain.run(exchange('tools/call')), PASS);
      assert.deepEqual(seen, ['busy']);
      assert.deepEqual(
        published.map((d) => [d.stage, d.allowed]),
        [['busy', true]],
      );
    } finally {
      decision.unsubscribe(listen);
    }
  });
});
