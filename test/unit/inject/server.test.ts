import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:net';
import { createInjectorMetrics } from '../../../src/inject/metrics.ts';
import { startWebhookServer } from '../../../src/inject/server.ts';
import type { WebhookServer } from '../../../src/inject/server.ts';
import { FIXTURES, fixtureConfig, readReview } from './fixtures.ts';
import { makeCert } from './tls.ts';

interface Reply {
  readonly status: number;
  readonly body: any;
  readonly peerCert: Buffer;
}

function post(port: number, ca: Buffer, path: string, body: string, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method, ca, headers: { 'content-type': 'application/json' }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = (res.socket as import('node:tls').TLSSocket).getPeerCertificate?.()?.raw;
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
            peerCert: raw ?? Buffer.alloc(0),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('the webhook over real HTTPS on loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-inject-'));
  const first = makeCert(dir, 'first');
  let server: WebhookServer;
  const metrics = createInjectorMetrics();
  const count = async (outcome: string): Promise<number> =>
    (await metrics.registry.getSingleMetric('toolgate_injector_reviews_total')?.get())?.values.find(
      (v) => v.labels.outcome === outcome,
    )?.value ?? NaN;

  before(async () => {
    server = await startWebhookServer({
      bind: { host: '127.0.0.1', port: 0, hostSetting: '--host', portSetting: '--port' },
      certFile: first.certFile,
      keyFile: first.keyFile,
      certReloadMs: 0,
      config: fixtureConfig(),
      metrics,
    });
  });
  after(() => server.close());

  it('answers a posted AdmissionReview with the injection patch', async () => {
    const body = readFileSync(join(FIXTURES, 'deployment-pod.review.json'), 'utf8');
    const reply = await post(server.port, first.cert, '/mutate', body);
    assert.equal(reply.status, 200);
    assert.equal(reply.body.kind, 'AdmissionReview');
    assert.equal(reply.body.response.uid, readReview('deployment-pod').request.uid);
    assert.equal(reply.body.response.allowed, true);
    const patch = JSON.parse(Buffer.from(reply.body.response.patch, 'base64').toString('utf8'));
    assert.deepEqual(patch, JSON.parse(readFileSync(join(FIXTURES, 'deployment-pod.patch.json'), 'utf8')));
  });
  it('counts every answered review by outcome, from zero', async () => {
    const before = { patched: await count('patched'), denied: await count('denied'), skipped: await count('skipped') };
    for (const v of Object.values(before))
      assert.ok(Number.isFinite(v), 'every outcome series exists before its first review');
    const denied = await post(
      server.port,
      first.cert,
      '/mutate',
      readFileSync(join(FIXTURES, 'bare-pod.review.json'), 'utf8'),
    );
    assert.equal(denied.body.response.allowed, false);
    const update = readReview('deployment-pod');
    update.request.operation = 'UPDATE';
    await post(server.port, first.cert, '/mutate', JSON.stringify(update));
    await post(server.port, first.cert, '/mutate', readFileSync(join(FIXTURES, 'transparent-pod.review.json'), 'utf8'));
    await post(server.port, first.cert, '/mutate', '{nope');
    assert.deepEqual(
      { patched: await count('patched'), denied: await count('denied'), skipped: await count('skipped') },
      { patched: before.patched + 1, denied: before.denied + 1, skipped: before.skipped + 1 },
      'a body that is not a review is not counted',
    );
  });
  it('refuses a body that is not JSON, or not an AdmissionReview, with 400', async () => {
    assert.deepEqual((await post(server.port, first.cert, '/mutate', '{nope')).body, { error: 'parse_error' });
    const notReview = await post(server.port, first.cert, '/mutate', '{"kind":"Pod"}');
    assert.equal(notReview.status, 400);
    assert.deepEqual(notReview.body, { error: 'not_admission_review' });
  });
  it('answers probes and refuses other paths and methods', async () => {
    assert.equal((await post(server.port, first.cert, '/healthz', '', 'GET')).status, 200);
    assert.equal((await post(server.port, first.cert, '/other', '')).status, 404);
    assert.equal((await post(server.port, first.cert, '/mutate', '', 'GET')).status, 405);
  });
  it('swaps in a renewed certificate without a restart', async () => {
    assert.equal(await server.reloadCertificate(), false, 'unchanged files are not reinstalled');
    const renewed = makeCert(dir, 'renewed');
    copyFileSync(renewed.certFile, first.certFile);
    copyFileSync(renewed.keyFile, first.keyFile);
    assert.equal(await server.reloadCertificate(), true);
    const reply = await post(server.port, renewed.cert, '/healthz', '', 'GET');
    assert.equal(reply.status, 200);
    assert.ok(
      reply.peerCert.length > 0 && renewed.cert.includes(reply.peerCert.toString('base64').slice(0, 64)),
      'the renewed certificate is served',
    );
  });
});

describe('toolgate inject-webhook as a process', () => {
  it('serves reviews and its metrics until SIGTERM, then exits 0', async () => {
    const { certFile, keyFile, cert } = makeCert();
    const metricsPort = await freePort();
    const script = `const m = await import(${JSON.stringify(join(import.meta.dirname, '../../../src/commands/inject-webhook.ts'))}); process.exitCode = await m.run(process.argv.slice(1));`;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script,
        '--',
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--tls-cert-file',
        certFile,
        '--tls-key-file',
        keyFile,
        '--config',
        join(FIXTURES, 'config.yaml'),
        '--metrics-port',
        String(metricsPort),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const port = await new Promise<number>((resolve, reject) => {
      let text = '';
      child.stderr.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        const m = /"msg":"inject webhook listening","port":(\d+)/.exec(text);
        if (m) resolve(Number(m[1]));
      });
      child.once('exit', () => reject(new Error(`exited early: ${text}`)));
    });
    const reply = await post(
      port,
      cert,
      '/mutate',
      readFileSync(join(FIXTURES, 'transparent-pod.review.json'), 'utf8'),
    );
    assert.equal(reply.body.response.patchType, 'JSONPatch');
    const refused = await post(port, cert, '/mutate', readFileSync(join(FIXTURES, 'bare-pod.review.json'), 'utf8'));
    assert.equal(refused.body.response.allowed, false);
    const scrape = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(scrape.status, 200);
    const text = await scrape.text();
    assert.match(text, /^toolgate_injector_reviews_total\{outcome="patched"\} 1$/m);
    assert.match(text, /^toolgate_injector_reviews_total\{outcome="denied"\} 1$/m);
    assert.match(text, /^toolgate_injector_reviews_total\{outcome="skipped"\} 0$/m);
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
  });
  it('stops with status 2 and one line naming the setting when a port is in use', async () => {
    const { certFile, keyFile } = makeCert();
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const busy = (holder.address() as import('node:net').AddressInfo).port;
    const script = `const m = await import(${JSON.stringify(join(import.meta.dirname, '../../../src/commands/inject-webhook.ts'))}); process.exitCode = await m.run(process.argv.slice(1));`;
    try {
      for (const [flag, setting] of [
        ['--port', '--port / TOOLGATE_INJECT_PORT'],
        ['--metrics-port', '--metrics-port / TOOLGATE_INJECT_METRICS_PORT'],
      ] as const) {
        const child = spawn(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            script,
            '--',
            '--host',
            '127.0.0.1',
            '--port',
            '0',
            '--metrics-port',
            '0',
            '--tls-cert-file',
            certFile,
            '--tls-key-file',
            keyFile,
            '--config',
            join(FIXTURES, 'config.yaml'),
            '--log-level',
            'error',
            flag,
            String(busy),
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        );
        let stderr = '';
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
        const [code] = await once(child, 'exit');
        assert.equal(code, 2, flag);
        assert.equal(stderr, `toolgate inject-webhook: port ${busy} is in use (${setting})\n`);
      }
    } finally {
      holder.close();
    }
  });
  it('stops with status 2 and one line naming the setting when a flag is bad', async () => {
    const { run } = await import('../../../src/commands/inject-webhook.ts');
    const write = process.stderr.write.bind(process.stderr);
    let text = '';
    process.stderr.write = (chunk: string) => {
      text += chunk;
      return true;
    };
    try {
      assert.equal(await run(['--port', 'eighty']), 2);
      assert.equal(await run(['--config', join(FIXTURES, 'deployment-pod.review.json')]), 2);
    } finally {
      process.stderr.write = write;
    }
    assert.match(text, /invalid setting --port: expected a whole number/);
    assert.match(text, /injector config \S+deployment-pod\.review\.json: \/image: required/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as import('node:net').AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}
