import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { loadWebhookSettings } from '../../../src/inject/settings.ts';

describe('the injector config', () => {
  it('fills defaults and freezes', () => {
    const parsed = parseInjectorConfig('image: toolgate:dev\n');
    assert.ok(parsed.ok);
    assert.equal(parsed.config.proxyPort, 8080);
    assert.equal(parsed.config.adminPort, 9090);
    assert.equal(parsed.config.portName, 'mcp');
    assert.equal(parsed.config.sidecarMode, 'native', 'native sidecars unless the chart says plain');
    assert.equal(parsed.config.redirect, undefined, 'no iptables redirect unless asked for');
    assert.ok(Object.isFrozen(parsed.config) && Object.isFrozen(parsed.config.env));
  });
  it('reads the sidecar mode and the redirect init container', () => {
    const parsed = parseInjectorConfig(
      'image: toolgate:dev\nsidecarMode: plain\nredirect: { image: iptables:1, imagePullPolicy: Always }\n',
    );
    assert.ok(parsed.ok);
    assert.equal(parsed.config.sidecarMode, 'plain');
    assert.deepEqual(parsed.config.redirect, { image: 'iptables:1', imagePullPolicy: 'Always' });
  });
  it('refuses unknown keys, bad types, bad port names, managed variables and equal ports', () => {
    const cases: [string, RegExp][] = [
      ['image: x\nimagePullPolicy: Sometimes\n', /imagePullPolicy/],
      ['image: x\nsidecarImage: y\n', /sidecarImage/],
      ['image: x\nproxyPort: "8080"\n', /proxyPort/],
      ['image: x\nportName: MCP_Port\n', /portName/],
      ['image: x\nadminPort: 8080\n', /adminPort/],
      ['image: x\nenv: [{ name: TOOLGATE_UPSTREAM, value: "http://evil" }]\n', /env\/0\/name/],
      ['image: x\nresources: { requests: { cpu: lots } }\n', /resources\/requests\/cpu/],
      ['proxyPort: 1\n', /\/image/],
      ['image: x\nsidecarMode: sidecar\n', /sidecarMode/],
      ['image: x\nredirect: {}\n', /redirect/],
      ['image: x\nredirect: { image: "a b" }\n', /redirect\/image/],
    ];
    for (const [text, path] of cases) {
      const parsed = parseInjectorConfig(text);
      assert.equal(parsed.ok, false, text);
      if (!parsed.ok) assert.match(parsed.errors.map((e) => e.path).join(' '), path, text);
    }
  });
});

describe('the inject-webhook settings', () => {
  it('takes flags over environment over defaults, treating empty variables as unset', () => {
    const parsed = loadWebhookSettings(['--port=9443'], {
      TOOLGATE_INJECT_PORT: '7443',
      TOOLGATE_INJECT_HOST: '',
      TOOLGATE_INJECT_CERT_RELOAD_MS: '0',
    });
    assert.ok(parsed.ok);
    assert.equal(parsed.value.port, 9443);
    assert.equal(parsed.value.host, '0.0.0.0');
    assert.equal(parsed.value.certReloadMs, 0);
    assert.equal(parsed.value.certFile, '/etc/toolgate-injector/tls/tls.crt');
    assert.equal(parsed.value.metricsPort, 9090);
    const moved = loadWebhookSettings(['--metrics-port', '0'], { TOOLGATE_INJECT_METRICS_PORT: '9191' });
    assert.ok(moved.ok);
    assert.equal(moved.value.metricsPort, 0, 'the flag wins; 0 turns the metrics listener off');
  });
  it('names the setting, never the value', () => {
    assert.deepEqual(loadWebhookSettings([], { TOOLGATE_INJECT_PORT: 'secret-ish' }), {
      ok: false,
      reason: 'invalid setting TOOLGATE_INJECT_PORT: expected a whole number from 0 to 65535',
    });
    assert.deepEqual(loadWebhookSettings([], { TOOLGATE_INJECT_METRICS_PORT: '99999' }), {
      ok: false,
      reason: 'invalid setting TOOLGATE_INJECT_METRICS_PORT: expected a whole number from 0 to 65535',
    });
    assert.deepEqual(loadWebhookSettings(['--bogus', 'x'], {}), {
      ok: false,
      reason: 'invalid setting --bogus: unknown flag',
    });
    assert.deepEqual(loadWebhookSettings(['--port'], {}), {
      ok: false,
      reason: 'invalid setting --port: missing value',
    });
  });
});
