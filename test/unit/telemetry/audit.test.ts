import { once } from 'node:events';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { Classified } from '../../../src/mcp/classify.ts';
import { startAudit } from '../../../src/telemetry/audit.ts';
import { createAuditSink, type AuditSink } from '../../../src/telemetry/audit-sink.ts';
import { decision, requestClassified, requestEnd, upstreamEnd } from '../../../src/telemetry/channels.ts';
import { auditRecord } from '../../../src/telemetry/channels.ts';

const SECRET = 'sk-live-4f9c2b7e1d3a5c8e0b6f';
const principal = { id: 'alice', scopes: new Set(['docs']), credentialStrength: 'static' as const };

function memorySink(): AuditSink & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (l) => (lines.push(l), true), close: async () => {} };
}

function fakeRequest(traceparent?: string): IncomingMessage {
  return {
    method: 'POST',
    headers: traceparent === undefined ? {} : { traceparent },
    socket: { remoteAddress: '10.0.0.7', remotePort: 51000 },
  } as unknown as IncomingMessage;
}

function call(name: string, args: unknown, meta?: Record<string, string>): Classified {
  return {
    ok: true,
    era: 'legacy',
    protocolVersion: '2025-11-25',
    kind: 'request',
    id: 7,
    method: 'tools/call',
    name,
    params: { name, arguments: args, ...(meta && { _meta: meta }) },
  };
}

function run(
  request: IncomingMessage,
  message: Classified | undefined,
  steps: { allowed: boolean; stage: string; error?: 'tool_not_granted' }[],
  outcome = 'forwarded',
  status = 200,
) {
  if (message !== undefined) requestClassified.publish({ request, message });
  for (const s of steps) decision.publish({ request, principal, durationSeconds: 0.0001, ...s });
  if (outcome === 'forwarded') upstreamEnd.publish({ request, status: 200, durationSeconds: 0.004 });
  requestEnd.publish({ request, method: message?.method ?? 'unclassified', outcome, status, durationSeconds: 0.005 });
}

describe('audit events', () => {
  const sideEffects: Record<string, 'read_only' | 'non_idempotent_write'> = {
    search_docs: 'read_only',
    delete_repo: 'non_idempotent_write',
  };
  const setup = () => {
    const sink = memorySink();
    const audit = startAudit({
      sink,
      upstream: new URL('http://127.0.0.1:3000'),
      pod: 'pod-a',
      version: '9.9.9',
      sideEffect: (t) => sideEffects[t],
    });
    return { sink, audit };
  };

  it('records a call of a tool that is not read-only, with a digest of its arguments and never their values', () => {
    const { sink, audit } = setup();
    try {
      const args = { repo: SECRET, force: true };
      run(
        fakeRequest(),
        call('delete_repo', args, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }),
        [{ stage: 'grants', allowed: true }],
      );
      assert.equal(sink.lines.length, 1);
      const line = sink.lines[0] as string;
      assert.ok(!line.includes(SECRET));
      const e = JSON.parse(line);
      assert.equal(e.class_uid, 6003);
      assert.equal(e.activity_id, 99);
      assert.equal(e.type_uid, 600399);
      assert.equal(e.status, 'Success');
      assert.equal(e.status_code, 'forwarded');
      assert.deepEqual(e.actor, { user: { uid: 'alice' } });
      assert.equal(e.api.operation, 'tools/call');
      assert.equal(e.api.request.uid, '7');
      assert.deepEqual(e.resources, [{ name: 'delete_repo', type: 'mcp_tool' }]);
      const canonical = `{"force":true,"repo":"${SECRET}"}`;
      assert.equal(e.unmapped.arguments_sha256, createHash('sha256').update(canonical).digest('hex'));
      assert.equal(e.unmapped.arguments_bytes, Buffer.byteLength(canonical));
      assert.equal(e.unmapped.side_effect, 'non_idempotent_write');
      assert.equal(e.unmapped.upstream_status, 200);
      assert.equal(e.unmapped.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736', 'the caller trace id without tracing on');
      assert.deepEqual(e.src_endpoint, { ip: '10.0.0.7', port: 51000 });
      assert.deepEqual(e.dst_endpoint, { hostname: '127.0.0.1', port: 3000, svc_name: 'mcp' });
      assert.equal(e.device.hostname, 'pod-a');
      assert.equal(e.metadata.product.name, 'toolgate');
      assert.equal(e.metadata.product.version, '9.9.9');
      assert.equal(e.duration, 5);
    } finally {
      audit.dispose();
    }
  });

  it('skips allowed calls of read-only tools and records their denials', () => {
    const { sink, audit } = setup();
    try {
      run(fakeRequest(), call('search_docs', { q: 'x' }), [{ stage: 'grants', allowed: true }]);
      assert.equal(sink.lines.length, 0);
      run(
        fakeRequest(),
        call('search_docs', { q: 'x' }),
        [{ stage: 'grants', allowed: false, error: 'tool_not_granted' }],
        'tool_not_granted',
        403,
      );
      assert.equal(sink.lines.length, 1);
      const e = JSON.parse(sink.lines[0] as string);
      assert.equal(e.status, 'Failure');
      assert.equal(e.status_code, 'tool_not_granted');
      assert.equal(e.status_detail, 'denied at grants: tool_not_granted');
      assert.deepEqual(e.actor.authorizations, [{ decision: 'deny', policy: { name: 'grants' } }]);
      assert.equal(e.api.response.code, 403);
      assert.equal(e.severity_id, 3);
    } finally {
      audit.dispose();
    }
  });

  it('records unauthenticated requests that never got classified, and audits unknown tools as writes', () => {
    const { sink, audit } = setup();
    try {
      const req = fakeRequest();
      decision.publish({
        request: req,
        stage: 'authentication',
        allowed: false,
        error: 'unauthenticated',
        durationSeconds: 0,
      });
      requestEnd.publish({
        request: req,
        method: 'unclassified',
        outcome: 'unauthenticated',
        status: 401,
        durationSeconds: 0.001,
      });
      run(fakeRequest(), call('mystery_tool', {}), [{ stage: 'grants', allowed: true }]);
      run(fakeRequest(), { ...call('x', {}), method: 'tools/list', name: undefined }, [
        { stage: 'tools_list', allowed: true },
      ]);
      assert.equal(sink.lines.length, 2);
      const [unauth, mystery] = sink.lines.map((l) => JSON.parse(l));
      assert.equal(unauth.api.operation, 'unclassified');
      assert.equal(unauth.actor.user, undefined);
      assert.equal(unauth.status_code, 'unauthenticated');
      assert.equal(mystery.resources[0].name, 'mystery_tool');
      assert.equal(mystery.unmapped.side_effect, undefined);
    } finally {
      audit.dispose();
    }
  });

  it('counts queued and dropped events on the audit channel', () => {
    const seen: string[] = [];
    const onRecord = (m: unknown) => seen.push((m as { outcome: string }).outcome);
    auditRecord.subscribe(onRecord);
    const full: AuditSink = { write: () => false, close: async () => {} };
    const audit = startAudit({ sink: full, upstream: new URL('http://127.0.0.1:3000'), pod: 'p', version: '1' });
    try {
      run(fakeRequest(), call('delete_repo', {}), [{ stage: 'grants', allowed: true }]);
      assert.deepEqual(seen, ['dropped']);
    } finally {
      audit.dispose();
      auditRecord.unsubscribe(onRecord);
    }
  });
});

describe('the audit sink', () => {
  /** A destination that accepts writes but completes them only when told to. */
  function slowOutput() {
    const chunks: string[] = [];
    const pending: (() => void)[] = [];
    const out = new Writable({
      highWaterMark: 16,
      write(chunk, _enc, done) {
        chunks.push(String(chunk));
        pending.push(done);
      },
    });
    return { out, chunks, release: () => pending.splice(0).forEach((f) => f()) };
  }

  it('never writes on the caller turn, batches lines, and bounds the queue while the output is blocked', async () => {
    const { out, chunks, release } = slowOutput();
    const sink = createAuditSink(out, 3, true);
    assert.equal(sink.write('a'), true);
    assert.equal(sink.write('b'), true);
    assert.equal(chunks.length, 0, 'queued, not written');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(chunks, ['a\nb\n']);
    // The output has not completed the batch: new lines wait in the bounded queue.
    assert.equal(sink.write('c'), true);
    assert.equal(sink.write('d'), true);
    assert.equal(sink.write('e'), true);
    assert.equal(sink.write('f'), false, 'dropped when full');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(chunks, ['a\nb\n'], 'waits for drain');
    release();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(chunks, ['a\nb\n', 'c\nd\ne\n']);
    const closed = sink.close();
    release();
    await closed;
    assert.equal(out.writableEnded, true);
  });

  it('drops everything after the output fails, without throwing', async () => {
    const out = new Writable({ write: (_c, _e, done) => done(new Error('disk full')) });
    const sink = createAuditSink(out, 10, true);
    // Waits for the failure itself, not for a guess at how long it takes to surface.
    const failed = once(out, 'error');
    sink.write('a');
    await failed;
    assert.equal(sink.write('b'), false);
    await sink.close();
  });
});
