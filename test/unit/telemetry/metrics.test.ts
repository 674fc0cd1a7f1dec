import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { decision, inflight, upstreamEnd } from '../../../src/telemetry/channels.ts';
import { discovery } from '../../../src/telemetry/channels.ts';
import { auditRecord, grantState, policyReload, snapshotLookup } from '../../../src/telemetry/channels.ts';
import { createMetrics } from '../../../src/telemetry/metrics/metrics.ts';
import { parsePrometheusText, sampleValue } from './prom-text.ts';

const request = (method: string) => ({ method, headers: {} }) as IncomingMessage;

describe('metrics from the telemetry channels', () => {
  it('reads the requests in flight at scrape time, as they came and went', async () => {
    const metrics = createMetrics();
    try {
      const read = async () =>
        sampleValue(parsePrometheusText(await metrics.registry.metrics()), 'toolgate_inflight_requests');
      assert.equal(await read(), 0);
      for (let i = 0; i < 3; i++) inflight.publish({ delta: 1 });
      assert.equal(await read(), 3);
      inflight.publish({ delta: -1 });
      assert.equal(await read(), 2);
      inflight.publish({ delta: -1 });
      inflight.publish({ delta: -1 });
      assert.equal(await read(), 0);
    } finally {
      metrics.dispose();
    }
  });

  it('counts decisions, keywords, upstream results, discovery, grants, reloads and audit drops', async () => {
    const metrics = createMetrics();
    try {
      const req = request('POST');
      decision.publish({ request: req, stage: 'grants', allowed: true, durationSeconds: 0.0001 });
      decision.publish({
        request: req,
        stage: 'arguments',
        allowed: false,
        error: 'invalid_arguments',
        keywords: ['maximum', 'maximum', 'x-vendor', 'pattern'],
        durationSeconds: 0.0002,
      });
      upstreamEnd.publish({ request: req, status: 200, durationSeconds: 0.01 });
      upstreamEnd.publish({ request: req, status: 0, error: 'upstream_timeout', durationSeconds: 30 });
      upstreamEnd.publish({ request: request('BREW'), status: 503, durationSeconds: 0.02 });
      discovery.publish({ request: req, results: 3, total: 9, durationSeconds: 0.002 });
      snapshotLookup.publish({ result: 'hit' });
      snapshotLookup.publish({ result: 'bogus' } as never);
      grantState.publish({ revision: 42, confirmedAtMs: Date.now() - 5000 });
      policyReload.publish({ outcome: 'applied', generation: 1, durationSeconds: 0.01 });
      policyReload.publish({ outcome: 'rejected', generation: 1, durationSeconds: 0.01 });
      policyReload.publish({ outcome: 'something else' } as never);
      auditRecord.publish({ outcome: 'dropped' });

      const f = parsePrometheusText(await metrics.registry.metrics());
      assert.equal(sampleValue(f, 'toolgate_decisions_total', { stage: 'grants', outcome: 'allow' }), 1);
      assert.equal(sampleValue(f, 'toolgate_decisions_total', { stage: 'arguments', outcome: 'invalid_arguments' }), 1);
      assert.equal(sampleValue(f, 'toolgate_decision_duration_seconds_count', { stage: 'arguments' }), 1);
      assert.equal(sampleValue(f, 'toolgate_validation_failures_total', { keyword: 'maximum' }), 1, 'once per refusal');
      assert.equal(sampleValue(f, 'toolgate_validation_failures_total', { keyword: 'other' }), 1);
      assert.equal(sampleValue(f, 'toolgate_validation_failures_total', { keyword: 'x-vendor' }), undefined);
      assert.equal(sampleValue(f, 'toolgate_upstream_duration_seconds_count', { http_method: 'POST' }), 2);
      assert.equal(sampleValue(f, 'toolgate_upstream_duration_seconds_count', { http_method: 'other' }), 1);
      assert.equal(sampleValue(f, 'toolgate_upstream_errors_total', { code: 'upstream_timeout' }), 1);
      assert.equal(sampleValue(f, 'toolgate_upstream_errors_total', { code: 'status_5xx' }), 1);
      assert.equal(sampleValue(f, 'toolgate_discovery_results_sum'), 3);
      assert.equal(sampleValue(f, 'toolgate_discovery_duration_seconds_count'), 1);
      assert.equal(sampleValue(f, 'toolgate_grant_snapshot_lookups_total', { result: 'hit' }), 1);
      assert.equal(
        sampleValue(f, 'toolgate_grant_snapshot_lookups_total', { result: 'miss' }),
        0,
        'both results are exported from the start',
      );
      assert.equal(f.get('toolgate_grant_snapshot_lookups_total')?.samples.length, 2, 'unknown results are not labels');
      assert.equal(sampleValue(f, 'toolgate_grant_revision'), 42);
      const age = sampleValue(f, 'toolgate_grant_revision_age_seconds') as number;
      assert.ok(age >= 5 && age < 60, String(age));
      assert.equal(sampleValue(f, 'toolgate_policy_reloads_total', { outcome: 'applied' }), 1);
      assert.equal(sampleValue(f, 'toolgate_policy_reloads_total', { outcome: 'rejected' }), 1);
      assert.equal(f.get('toolgate_policy_reloads_total')?.samples.length, 2);
      assert.equal(sampleValue(f, 'toolgate_policy_last_reload_successful'), 0);
      assert.equal(sampleValue(f, 'toolgate_audit_events_total', { outcome: 'dropped' }), 1);
      for (const family of f.values()) assert.ok(family.help.length > 0, `${family.name} has help`);
    } finally {
      metrics.dispose();
    }
    assert.equal(decision.hasSubscribers, false, 'dispose unsubscribes');
    assert.equal(policyReload.hasSubscribers, false);
  });

  it('counts each deciding row of a stage apart, however the rows alternate, and refusals and audits apart from them', async () => {
    const metrics = createMetrics();
    try {
      const req = request('POST');
      const rows = ['/grants/0', '/grants/1', '/grants/1', '/grants/0', 'named', '/grants/0', 'named'];
      for (const rule of rows)
        decision.publish({ request: req, stage: 'grants', allowed: true, rule, durationSeconds: 0 });
      decision.publish({ request: req, stage: 'grants', allowed: true, durationSeconds: 0 });
      decision.publish({
        request: req,
        stage: 'grants',
        allowed: true,
        mode: 'audit',
        rule: '/grants/0',
        durationSeconds: 0,
      });
      decision.publish({
        request: req,
        stage: 'grants',
        allowed: false,
        error: 'tool_not_granted',
        rule: '/grants/1',
        durationSeconds: 0,
      });
      decision.publish({ request: req, stage: 'known_tool', allowed: true, rule: '/grants/0', durationSeconds: 0 });

      const f = parsePrometheusText(await metrics.registry.metrics());
      const count = (labels: Record<string, string>) => sampleValue(f, 'toolgate_decisions_total', labels);
      const allowed = { stage: 'grants', outcome: 'allow', mode: 'enforce' };
      assert.equal(count({ ...allowed, rule: '/grants/0' }), 3);
      assert.equal(count({ ...allowed, rule: '/grants/1' }), 2);
      assert.equal(count({ ...allowed, rule: 'named' }), 2);
      assert.equal(count({ ...allowed, rule: '' }), 1);
      assert.equal(count({ stage: 'grants', outcome: 'allow', mode: 'audit', rule: '/grants/0' }), 1);
      assert.equal(count({ stage: 'grants', outcome: 'tool_not_granted', mode: 'enforce', rule: '/grants/1' }), 1);
      assert.equal(count({ stage: 'known_tool', outcome: 'allow', mode: 'enforce', rule: '/grants/0' }), 1);
      assert.equal(sampleValue(f, 'toolgate_decision_duration_seconds_count', { stage: 'grants' }), 10);
    } finally {
      metrics.dispose();
    }
  });

  it('the strict parser refuses malformed expositions', () => {
    for (const bad of [
      'x 1\n',
      '# TYPE x counter\nx{a="1} 1\n',
      '# TYPE x counter\nx 1 2 3\n',
      '# TYPE x counter\nx one\n',
      '# TYPE x counter\n# TYPE y counter\nx 1\ny 1\nx 2\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n',
      '# TYPE x counter\nx 1',
    ]) {
      assert.throws(() => parsePrometheusText(bad), Error, bad);
    }
  });
});
