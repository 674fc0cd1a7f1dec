import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors, type ErrorId } from '../../../src/errors.ts';
import type { Classified } from '../../../src/mcp/classify.ts';
import { answersAsToolResult, ERROR_META_KEY, toolErrorResult } from '../../../src/mcp/tool-error.ts';

function message(method: string, era: 'modern' | 'legacy', protocolVersion: string | undefined): Classified {
  return { ok: true, era, protocolVersion, kind: 'request', id: 1, method, name: 'echo', params: undefined };
}

const fixable = Object.entries(errors).filter(([, e]) => e.toolResult === true).map(([id]) => id as ErrorId);

test('only refusals the model can fix are marked, and never the ones a client must act on', () => {
  assert.deepEqual(fixable.sort(), ['case_variant_key', 'inexact_number', 'invalid_arguments']);
  for (const id of ['unauthenticated', 'tool_not_granted', 'no_tool_granted', 'credential_too_weak', 'rate_limited', 'unknown_tool'] as const) {
    assert.equal(errors[id].toolResult, undefined, id);
  }
});

test('a tools/call from 2025-11-25 on is answered as a tool result; older versions and other methods keep the JSON-RPC error', () => {
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', '2025-11-25'), 'invalid_arguments'), true);
  assert.equal(answersAsToolResult(message('tools/call', 'modern', '2026-07-28'), 'inexact_number'), true);
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', '2025-06-18'), 'invalid_arguments'), false);
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', '2025-03-26'), 'invalid_arguments'), false);
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', undefined), 'invalid_arguments'), false);
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', 'not-a-date'), 'invalid_arguments'), false);
  assert.equal(answersAsToolResult(message('toolgate/discover', 'legacy', '2025-11-25'), 'invalid_arguments'), false);
  assert.equal(answersAsToolResult(message('tools/call', 'legacy', '2025-11-25'), 'tool_not_granted'), false);
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
