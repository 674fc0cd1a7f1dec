import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { errors, type ErrorId } from '../../../src/errors.ts';
import { grpcError, grpcStatusOf } from '../../../src/grpc/status.ts';
import { interpret } from '../../../src/grpc/validator-client.ts';

test('every registry error maps to a gRPC status other than OK or UNKNOWN', () => {
  for (const id of Object.keys(errors) as ErrorId[]) {
    const s = grpcStatusOf(id);
    assert.ok(s !== status.OK && s !== status.UNKNOWN, id);
  }
});

test('the mapping follows the HTTP status, with the documented exceptions', () => {
  assert.equal(grpcStatusOf('unauthenticated'), status.UNAUTHENTICATED);
  assert.equal(grpcStatusOf('tool_not_granted'), status.PERMISSION_DENIED);
  assert.equal(grpcStatusOf('invalid_params'), status.INVALID_ARGUMENT);
  assert.equal(grpcStatusOf('grants_unavailable'), status.UNAVAILABLE);
  assert.equal(grpcStatusOf('grants_read_only'), status.FAILED_PRECONDITION);
  assert.equal(grpcStatusOf('upstream_timeout'), status.DEADLINE_EXCEEDED);
  assert.equal(grpcStatusOf('rate_limited'), status.RESOURCE_EXHAUSTED);
});

test('a gRPC error carries the registry message and closed codes as metadata', () => {
  const e = grpcError('validator_denied');
  assert.equal(e.details, errors.validator_denied.message);
  assert.deepEqual(e.metadata?.get('toolgate-code'), ['validator_denied']);
  assert.deepEqual(e.metadata?.get('toolgate-hint'), ['fix_arguments']);
  assert.deepEqual(e.metadata?.get('toolgate-retryable'), ['false']);
});

test('validator answers: only a well-formed one counts; codes are kept only when closed', () => {
  assert.deepEqual(interpret({ valid: true, severity: 'SEVERITY_UNSPECIFIED', message: '', code: '' }), {
    kind: 'valid',
  });
  assert.deepEqual(interpret({ valid: false, severity: 'SEVERITY_ERROR', message: 'x', code: 'pii_found' }), {
    kind: 'invalid',
    severity: 'error',
    code: 'pii_found',
  });
  assert.deepEqual(interpret({ valid: false, severity: 'SEVERITY_WARNING', message: 'x', code: 'Has Spaces' }), {
    kind: 'invalid',
    severity: 'warning',
    code: undefined,
  });
  assert.deepEqual(interpret({ valid: false, severity: 'SEVERITY_UNSPECIFIED', message: 'x', code: '' }), {
    kind: 'failed',
    reason: 'malformed',
  });
  assert.deepEqual(interpret({ valid: false, severity: 7 as unknown as 'SEVERITY_ERROR', message: '', code: '' }), {
    kind: 'failed',
    reason: 'malformed',
  });
  assert.deepEqual(interpret(undefined), { kind: 'failed', reason: 'malformed' });
});
