/**
 * The official MCP conformance suite (server mode) directly and through
 * toolgate: 0.1.16's active suite against server-everything, and the 0.2.0
 * pre-release's 2026-07-28 requirement set against the stateless v2-SDK
 * fixture. Every check that passes directly must pass through toolgate too.
 * Each direct run must pass checks its server is known to pass, so a broken
 * harness (no server, no results, nothing parsed) fails here instead of
 * comparing two empty sets.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defaultBin,
  defaultNextBin,
  defaultToolgateEntry,
  runComparison,
  type HarnessReport,
} from '../../bench/conformance/harness.ts';
import { CRASHED, compare, parseScenarioFiles, passedKeys, tally } from '../../bench/conformance/results.ts';

// Checks server-everything passes directly with conformance 0.1.16; see
// docs/conformance.md for why the others fail even without toolgate.
const EXPECTED_DIRECT_PASSES = [
  'server-initialize/server-initialize',
  'logging-set-level/logging-set-level',
  'ping/ping',
  'tools-list/tools-list',
  'tools-call-error/tools-call-error',
  'server-sse-multiple-streams/server-accepts-multiple-post-streams',
  'server-sse-multiple-streams/server-sse-streams-functional',
  'resources-list/resources-list',
  'resources-subscribe/resources-subscribe',
  'resources-unsubscribe/resources-unsubscribe',
  'prompts-list/prompts-list',
  'dns-rebinding-protection/localhost-host-valid-accepted',
];

// Checks the v2-SDK fixture passes directly under --requirements 2026-07-28,
// one or more per area: stateless envelope and header rules, SSE progress,
// multi-round input-required flows with signed state, custom headers, caching,
// and the tasks extension the fixture serves itself (bench/conformance/v2-tasks.ts).
const EXPECTED_2026_DIRECT_PASSES = [
  'server-stateless/sep-2575-server-rejects-undeclared-capability',
  'server-stateless/sep-2575-http-server-header-mismatch-400',
  'server-stateless/sep-2575-server-sends-subscription-ack',
  'tools-call-simple-text/tools-call-simple-text',
  'tools-call-with-progress/tools-call-with-progress',
  'prompts-get-with-args/prompts-get-with-args',
  'resources-templates-read/resources-templates-read',
  'input-required-result-multi-round/sep-2322-multi-round-r2',
  'input-required-result-tampered-state/sep-2322-reject-tampered-state',
  'http-custom-header-server-validation/sep-2243-server-reject-param-mismatch',
  'http-header-validation/sep-2243-server-reject-invalid-headers',
  'caching/sep-2549-resources-read-caching-hints',
  'dns-rebinding-protection/localhost-host-rebinding-rejected',
  'tasks-lifecycle/sep-2663-tasks-get-status-completed',
  'tasks-lifecycle/sep-2663-cancel-ack-empty-result',
  'tasks-capability-negotiation/sep-2663-tasks-methods-non-declaring',
  'tasks-mrtr-input/tasks-mrtr-partial-fulfillment',
  'tasks-dispatch-and-envelope/sep-2663-tasks-result-removed-method-not-found',
  'tasks-required-task-error/sep-2663-server-returns-missing-capability-when-required',
  'tasks-mrtr-composition/sep-2663-mrtr-synchronous-before-task-creation',
];

const dir = (scenario: string): string => `server-${scenario}-2026-01-02T03-04-05-678Z`;

describe('conformance result parsing', () => {
  it('keys checks by scenario, numbers repeated ids, and scores only SUCCESS and FAILURE', () => {
    const parsed = parseScenarioFiles([
      { dirName: dir('ping'), text: JSON.stringify([{ id: 'ping', status: 'SUCCESS' }]) },
      {
        dirName: dir('server-sse-polling'),
        text: JSON.stringify([
          { id: 'incoming-sse-event', status: 'INFO' },
          { id: 'incoming-sse-event', status: 'FAILURE', errorMessage: 'x' },
          { id: 'server-sse-retry-field', status: 'WARNING' },
        ]),
      },
      { dirName: dir('tasks-lifecycle'), text: undefined },
    ]);
    assert.ok(parsed.ok);
    assert.deepEqual(
      parsed.checks.map((c) => [c.key, c.status]),
      [
        ['ping/ping', 'SUCCESS'],
        ['server-sse-polling/incoming-sse-event', 'INFO'],
        ['server-sse-polling/incoming-sse-event#2', 'FAILURE'],
        ['server-sse-polling/server-sse-retry-field', 'WARNING'],
        [`tasks-lifecycle/${CRASHED}`, 'FAILURE'],
      ],
    );
    assert.deepEqual(tally(parsed.checks), { passed: 1, failed: 2 });
  });

  it('refuses output it does not understand rather than counting nothing', () => {
    assert.equal(parseScenarioFiles([{ dirName: 'results', text: '[]' }]).ok, false);
    assert.equal(parseScenarioFiles([{ dirName: dir('ping'), text: '{' }]).ok, false);
    assert.equal(parseScenarioFiles([{ dirName: dir('ping'), text: '[{"id":"ping","status":"MAYBE"}]' }]).ok, false);
    assert.equal(
      parseScenarioFiles([
        { dirName: dir('ping'), text: '[]' },
        { dirName: dir('ping').replace('678Z', '679Z'), text: '[]' },
      ]).ok,
      false,
    );
  });

  it('reports a check that passes on one side only, in either direction', () => {
    const a = parseScenarioFiles([
      { dirName: dir('ping'), text: '[{"id":"ping","status":"SUCCESS"},{"id":"x","status":"FAILURE"}]' },
    ]);
    const b = parseScenarioFiles([
      { dirName: dir('ping'), text: '[{"id":"ping","status":"FAILURE"},{"id":"x","status":"SUCCESS"}]' },
    ]);
    assert.ok(a.ok && b.ok);
    assert.deepEqual(compare(a.checks, b.checks), {
      identical: false,
      onlyDirect: ['ping/ping'],
      onlyToolgate: ['ping/x'],
    });
    assert.deepEqual(compare(a.checks, a.checks), { identical: true, onlyDirect: [], onlyToolgate: [] });
  });
});

describe('conformance through toolgate', () => {
  it('passes every check through toolgate that server-everything passes directly', { timeout: 60_000 }, async () => {
    const report = await runComparison({
      bin: defaultBin(),
      upstream: 'everything',
      toolgateEntry: defaultToolgateEntry(),
      suite: 'active',
      scenarios: [],
      requirements: undefined,
      timeoutMs: 25_000,
      outputDir: undefined,
      directOnly: false,
    });

    const direct = passedKeys(report.direct.checks);
    for (const key of EXPECTED_DIRECT_PASSES) assert.ok(direct.has(key), `direct run should pass ${key}`);
    assert.ok(report.direct.tally.passed + report.direct.tally.failed >= 30, 'direct run scored too few checks');

    assert.deepEqual(lostThroughToolgate(report), [], 'checks that pass directly but not through toolgate');
    assert.deepEqual(report.comparison?.onlyToolgate, [], 'checks that pass only through toolgate');
    assert.deepEqual(report.toolgate?.tally, report.direct.tally);
  });

  it(
    'passes every 2026-07-28 check through toolgate that the v2-SDK fixture passes directly',
    { timeout: 60_000 },
    async () => {
      const report = await runComparison(revision2026(false));

      const direct = passedKeys(report.direct.checks);
      for (const key of EXPECTED_2026_DIRECT_PASSES) assert.ok(direct.has(key), `direct run should pass ${key}`);
      // 194 when written, none failing: every scored check, the tasks extension included.
      assert.ok(report.direct.tally.passed >= 180, `direct run passed only ${report.direct.tally.passed} checks`);

      // Toolgate may gain checks (its own header validation where a server is lenient), never lose one.
      assert.deepEqual(lostThroughToolgate(report), [], 'checks that pass directly but not through toolgate');
    },
  );

  it(
    'passes them all through toolgate in policy mode too, under a policy that allows everything the fixture offers',
    { timeout: 60_000 },
    async () => {
      const report = await runComparison(revision2026(true));
      assert.ok(report.direct.tally.passed >= 180, `direct run passed only ${report.direct.tally.passed} checks`);
      // The policy path answers removed methods and undeclared task requests as the server does (resources/subscribe, tasks/result).
      assert.deepEqual(
        lostThroughToolgate(report),
        [],
        'checks that pass directly but not through toolgate in policy mode',
      );
    },
  );
});

/** The 2026-07-28 requirement set against the v2 fixture, through toolgate with or without a policy allowing everything. */
function revision2026(permissivePolicy: boolean): Parameters<typeof runComparison>[0] {
  return {
    bin: defaultNextBin(),
    upstream: 'v2-fixture',
    toolgateEntry: defaultToolgateEntry(),
    suite: 'active',
    scenarios: [],
    requirements: '2026-07-28',
    timeoutMs: 25_000,
    outputDir: undefined,
    directOnly: false,
    permissivePolicy,
  };
}

function lostThroughToolgate(report: HarnessReport): string[] {
  assert.ok(report.toolgate !== undefined && report.comparison !== undefined);
  const byKey = new Map(report.toolgate.checks.map((c) => [c.key, c]));
  return report.comparison.onlyDirect.map(
    (k) => `${k}: ${byKey.get(k)?.status ?? 'absent'} ${byKey.get(k)?.errorMessage ?? ''}`,
  );
}
