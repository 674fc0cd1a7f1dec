import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listenOnLoopback, readAll, type Listening } from '../helpers/http-server.ts';
import { startPolicyServer, type PolicyServer } from '../helpers/mcp-policy-server.ts';
import { post } from '../helpers/raw.ts';
import { startToolgate } from '../helpers/toolgate.ts';

/**
 * The production path: OTEL_* variables turn the SDK on and spans leave over
 * OTLP/HTTP (JSON here, to read them back). Its own file, because the SDK
 * registers process-wide.
 */
describe('tracing configured by OTEL_* exports over OTLP', () => {
  let collector: Listening;
  let upstream: PolicyServer;
  const received: { path: string; body: string }[] = [];

  before(async () => {
    collector = await listenOnLoopback(async (req, res) => {
      received.push({ path: req.url ?? '', body: (await readAll(req)).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    upstream = await startPolicyServer();
    Object.assign(process.env, {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
    });
  });
  after(async () => {
    await upstream.close();
    await collector.close();
  });

  it('sends the server and client spans with service.name toolgate when toolgate stops', async () => {
    const gate = await startToolgate(upstream.origin);
    await gate.ready;
    const res = await post(
      gate.url,
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_docs","arguments":{"query":"x"}}}',
    );
    assert.equal(res.status, 200, res.text);
    const seen = upstream.calls.at(-1);
    assert.match(String(seen?.headers.traceparent), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await gate.close();
    const traces = received
      .filter((r) => r.path === '/v1/traces')
      .map((r) => r.body)
      .join('\n');
    assert.match(traces, /"service\.name"[^}]*"stringValue":"toolgate"/);
    assert.ok(traces.includes('"name":"tools/call search_docs"'), traces.slice(0, 500));
    assert.ok(traces.includes('"name":"POST"'));
  });
});
