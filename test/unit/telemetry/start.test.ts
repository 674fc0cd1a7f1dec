import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadSettings } from '../../../src/config/settings.ts';
import * as channels from '../../../src/telemetry/channels.ts';
import { discovery } from '../../../src/telemetry/channels.ts';
import { tracingRequested } from '../../../src/telemetry/otel-sdk.ts';
import { startTelemetry } from '../../../src/telemetry/start.ts';

const requestChannels = {
  requestStart: channels.requestStart,
  requestClassified: channels.requestClassified,
  decision: channels.decision,
  upstreamStart: channels.upstreamStart,
  upstreamEnd: channels.upstreamEnd,
  requestEnd: channels.requestEnd,
  discovery,
};
const subscribed = () =>
  Object.entries(requestChannels)
    .filter(([, c]) => c.hasSubscribers)
    .map(([n]) => n);

describe('telemetry start', () => {
  it('with tracing and audit off, subscribes to nothing on the request path', async () => {
    const telemetry = await startTelemetry(loadSettings([], {}), {}, {});
    assert.equal(telemetry.tracing, false);
    assert.equal(telemetry.audit, false);
    assert.deepEqual(subscribed(), []);
    await telemetry.close();
  });

  it('with audit on, subscribes while running and lets go on close', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolgate-audit-'));
    try {
      const file = join(dir, 'audit.log');
      const telemetry = await startTelemetry(loadSettings(['--audit-log', file], {}), {}, {});
      assert.equal(telemetry.audit, true);
      assert.deepEqual(subscribed(), ['requestClassified', 'decision', 'upstreamEnd', 'requestEnd']);
      await telemetry.close();
      assert.deepEqual(subscribed(), []);
      assert.equal(await readFile(file, 'utf8'), '');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start with an audit file it cannot open', async () => {
    await assert.rejects(
      startTelemetry(loadSettings(['--audit-log', '/nonexistent-dir/x/audit.log'], {}), {}, {}),
      /TOOLGATE_AUDIT_LOG/,
    );
  });

  it('turns tracing on only when OTEL_* asks for an exporter', () => {
    assert.equal(tracingRequested({}), false);
    assert.equal(tracingRequested({ OTEL_SERVICE_NAME: 'x' }), false);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), true);
    assert.equal(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), true);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' }), true);
    assert.equal(
      tracingRequested({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }),
      false,
    );
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }), false);
    assert.equal(tracingRequested({ OTEL_TRACES_EXPORTER: 'console', OTEL_SDK_DISABLED: 'false' }), true);
  });
});
