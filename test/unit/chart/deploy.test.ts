import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseStaticKeys } from '../../../src/auth/static-keys.ts';
import { parsePolicy } from '../../../src/config/policy/policy.ts';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { planInjection } from '../../../src/inject/inject.ts';
import { applied, frontProblems } from '../inject/admission.ts';
import { findKubectl } from '../../helpers/helm.ts';
import { deployKustomizations, REPO } from './chart-files.ts';

const DEPLOY = join(REPO, 'deploy');
const DEMO = join(DEPLOY, 'examples/demo');
const read = (path: string) => readFileSync(path, 'utf8');

describe('deploy/: the files toolgate itself reads', () => {
  it('the base injector config, the demo policy and the demo key file load with the real loaders', () => {
    const config = parseInjectorConfig(read(join(DEPLOY, 'base/injector-config.yaml')));
    assert.ok(config.ok);
    const policy = parsePolicy(read(join(DEMO, 'policy.yaml')));
    assert.ok(policy.ok, policy.ok ? '' : JSON.stringify(policy.errors));
    const keys = parseStaticKeys(read(join(DEMO, 'keys.yaml')));
    assert.ok(keys.ok);
    const hash = createHash('sha256').update('demo-agent-key').digest('hex');
    assert.match(read(join(DEMO, 'keys.yaml')), new RegExp(hash), 'the documented demo key matches its hash');
  });
  it('the demo MCP server pod template gets the sidecar, with its probe following the renamed port', () => {
    const config = parseInjectorConfig(read(join(DEPLOY, 'base/injector-config.yaml')));
    assert.ok(config.ok);
    const docs = parseAllDocuments(read(join(DEMO, 'mcp-server.yaml'))).map((d) => d.toJS());
    const deployment = docs.find((d) => d.kind === 'Deployment');
    const service = docs.find((d) => d.kind === 'Service');
    const pod = { metadata: deployment.spec.template.metadata, spec: deployment.spec.template.spec };
    const plan = planInjection(pod, config.config);
    assert.equal(plan.kind, 'patch');
    if (plan.kind !== 'patch') return;
    const injected = applied(pod, plan.patch as never);
    const spec = injected.spec;
    assert.deepEqual(
      frontProblems(injected, service.spec.ports[0].targetPort),
      [],
      "the unchanged Service's targetPort now names toolgate's port",
    );
    assert.equal(spec.containers[0].readinessProbe.tcpSocket.port, 'mcp-upstream');
  });
});

const bin = findKubectl();
describe(
  'kubectl kustomize renders every directory under deploy/',
  { skip: bin === undefined ? 'no kubectl binary (see test/helpers/helm.ts)' : false },
  () => {
    for (const dir of deployKustomizations()) {
      it(relative(REPO, dir), () => {
        const out = execFileSync(bin as string, ['kustomize', dir], { encoding: 'utf8' });
        const objects = parseAllDocuments(out)
          .map((d) => d.toJS())
          .filter((o) => o !== null);
        assert.ok(objects.length > 0);
        for (const o of objects) assert.ok(o.apiVersion && o.kind && o.metadata?.name, 'every object is named');
        const webhook = objects.find((o) => o.kind === 'MutatingWebhookConfiguration');
        assert.deepEqual(
          webhook.webhooks[0].objectSelector,
          {
            matchExpressions: [
              { key: 'toolgate.dev/inject', operator: 'Exists' },
              { key: 'toolgate.dev/inject', operator: 'NotIn', values: ['false'] },
            ],
          },
          'every opt-in label but "false" reaches the injector, so a misspelt one is refused',
        );
        const injector = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'toolgate-injector');
        const container = injector.spec.template.spec.containers[0];
        assert.deepEqual(
          container.ports.find((p: any) => p.name === 'metrics'),
          { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
          'as the chart has it',
        );
        assert.ok(container.env.some((e: any) => e.name === 'TOOLGATE_INJECT_METRICS_PORT' && e.value === '9090'));
        const policy = objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'toolgate-injector');
        assert.deepEqual(policy.spec.egress, [], 'the injector sends nothing');
        const configMap = objects.find(
          (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('toolgate-injector'),
        );
        assert.equal(
          injector.spec.template.spec.volumes.find((v: any) => v.name === 'config').configMap.name,
          configMap.metadata.name,
        );
        assert.ok(existsSync(dir));
      });
    }
  },
);
