import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors, type ErrorId } from '../../../src/errors.ts';
import type { Classified } from '../../../src/mcp/classify.ts';
import { ERROR_META_KEY, toolErrorResult, wireFor } from '../../../src/mcp/tool-error.ts';

function message(method: string, era: 'modern' | 'legacy', protocolVersion: string | undefined): Classified {
  return { ok: true, era, protocolVersion, kind: 'request', id: 1, method, name: 'echo', params: undefined };
}

const fixable = Object.entries(errors)
  .filter(([, e]) => e.toolResult === true)
  .map(([id]) => id as ErrorId);

test('only refusals the model can fix are marked, and never the ones a client must act on', () => {
  assert.deepEqual(fixable.sort(), ['case_variant_key', 'inexact_number', 'invalid_arguments']);
  for (const id of [
    'unauthenticated',
    'tool_not_granted',
    'no_tool_granted',
    'credential_too_weak',
    'rate_limited',
    'unknown_tool',
  ] as const) {
    assert.equal(errors[id].toolResult, undefined, id);
  }
});

const call = (era: 'modern' | 'legacy', protocolVersion: string | undefined) =>
  message('tools/call', era, protocolVersion);

test('in result mode a policy refusal of a tools/call is a tool result in every era', () => {
  for (const m of [
    call('legacy', '2025-03-26'),
    call('legacy', '2025-06-18'),
    call('legacy', '2025-11-25'),
    call('modern', '2026-07-28'),
    call('legacy', undefined),
  ]) {
    for (const id of [
      'tool_not_granted',
      'rate_limited',
      'tool_contract_changed',
      'approval_denied',
      'approval_required',
      'validator_denied',
      'idempotency_unavailable',
    ] as const) {
      assert.deepEqual(wireFor(m, id, false, 'result'), { form: 'tool_result' }, `${id} on ${m.protocolVersion}`);
    }
  }
});

test('an HTTP status stays where the client acts at the HTTP layer: a challenge, authentication, framing', () => {
  const m = call('legacy', '2025-11-25');
  assert.deepEqual(
    wireFor(m, 'tool_not_granted', true, 'result'),
    { form: 'error', status: 403 },
    'scopes would help: insufficient_scope',
  );
  assert.deepEqual(wireFor(m, 'credential_too_weak', true, 'result'), { form: 'error', status: 403 });
  assert.deepEqual(wireFor(m, 'header_mismatch', false, 'result'), { form: 'error', status: 400 });
  assert.deepEqual(wireFor(m, 'unauthenticated', false, 'result'), { form: 'error', status: 401 });
  assert.deepEqual(wireFor(m, 'session_not_found', false, 'result'), { form: 'error', status: 404 });
});

test('a protocol error goes in a 200 answer where that era sends one: unknown tool on 2026-07-28, -32042, argument errors before 2025-11-25', () => {
  assert.deepEqual(wireFor(call('modern', '2026-07-28'), 'unknown_tool', false, 'result'), {
    form: 'error',
    status: 200,
  });
  assert.deepEqual(wireFor(call('legacy', '2025-11-25'), 'unknown_tool', false, 'result'), { form: 'tool_result' });
  assert.deepEqual(wireFor(call('legacy', '2025-11-25'), 'approval_url_elicitation', false, 'result'), {
    form: 'error',
    status: 200,
  });
  assert.deepEqual(wireFor(call('legacy', '2025-11-25'), 'invalid_arguments', false, 'result'), {
    form: 'tool_result',
  });
  assert.deepEqual(wireFor(call('modern', '2026-07-28'), 'inexact_number', false, 'result'), { form: 'tool_result' });
  for (const v of ['2025-06-18', '2025-03-26', undefined, 'not-a-date']) {
    assert.deepEqual(
      wireFor(call('legacy', v), 'invalid_arguments', false, 'result'),
      { form: 'error', status: 200 },
      String(v),
    );
  }
});

test('other methods get a JSON-RPC error in a 200 answer; protocol mode keeps every registry status', () => {
  assert.deepEqual(wireFor(message('toolgate/discover', 'legacy', '2025-11-25'), 'invalid_params', false, 'result'), {
    form: 'error',
    status: 200,
  });
  assert.deepEqual(wireFor(message('tools/list', 'legacy', '2025-11-25'), 'rate_limited', false, 'result'), {
    form: 'error',
    status: 200,
  });
  assert.deepEqual(wireFor(message('tools/list', 'legacy', '2025-11-25'), 'no_tool_granted', true, 'result'), {
    form: 'error',
    status: 403,
  });
  assert.deepEqual(wireFor(call('legacy', '2025-11-25'), 'tool_not_granted', false, 'protocol'), {
    form: 'error',
    status: 403,
  });
  assert.deepEqual(wireFor(call('legacy', '2025-11-25'), 'invalid_arguments', false, 'protocol'), {
    form: 'error',
    status: 400,
  });
});

test('a refusal no scope would help never mentions scopes; a rate limit says how long to wait', () => {
  for (const data of [undefined, { reason: 'condition' as const }, { reason: 'condition_error' as const }]) {
    const t = (toolErrorResult('tool_not_granted', data, true).content as { text: string }[])[0]?.text ?? '';
    assert.doesNotMatch(t, /scope/i);
    assert.match(t, /toolgate refused the call/);
  }
  const limited = toolErrorResult('rate_limited', { retryAfterMs: 2500 }, true);
  assert.match((limited.content as { text: string }[])[0]?.text ?? '', /Wait 3 s/);
  assert.equal((limited.structuredContent as { retryAfterMs?: number }).retryAfterMs, 2500);
  assert.doesNotMatch(errors.tool_not_granted.message, /request the scopes/);
});

test('the result says which argument and which rule, carries the machine data, and never a value', () => {
  const data = {
    errors: [
      { instancePath: '', keyword: 'required', missing: ['query', 'mode'] },
      { instancePath: '/filters', keyword: 'additionalProperties', count: 2 },
      { instancePath: '/mode', keyword: 'enum' },
      { instancePath: '/n', keyword: 'someFutureKeyword' },
    ],
  };
  const r = toolErrorResult('invalid_arguments', data, true);
  const text = (r.content as { text: string }[])[0]?.text ?? '';
  assert.match(text, /the arguments object is missing the required properties "query", "mode"/);
  assert.match(text, /argument \/filters has 2 properties the schema does not allow/);
  assert.match(text, /argument \/mode is not one of the allowed values/);
  assert.match(text, /argument \/n fails the "someFutureKeyword" rule/);
  assert.match(text, /Correct the arguments and call the tool again\.$/);
  assert.equal(r.isError, true);
  const machine = { code: 'invalid_arguments', retryable: false, hint: 'fix_arguments', ...data };
  assert.deepEqual(r.structuredContent, machine);
  assert.deepEqual((r._meta as Record<string, unknown>)[ERROR_META_KEY], machine);
  assert.equal(toolErrorResult('invalid_arguments', data, false).structuredContent, undefined);
});

test('many failures are summarised for the model; the machine data keeps them all', () => {
  const errs = Array.from({ length: 12 }, (_, i) => ({ instancePath: `/a${i}`, keyword: 'type' }));
  const r = toolErrorResult('invalid_arguments', { errors: errs }, true);
  assert.match((r.content as { text: string }[])[0]?.text ?? '', /and 4 more/);
  assert.equal((r.structuredContent as { errors: unknown[] }).errors.length, 12);
});
