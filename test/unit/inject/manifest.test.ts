import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { injectManifests } from '../../../src/inject/manifest.ts';
import { DEFAULT_CONFIG_FILE } from '../../../src/inject/settings.ts';
import { allProblems } from '../chart/lib/kube-schemas.ts';
import { frontProblems, sidecarOf } from './admission.ts';
import { FIXTURES, fixtureConfig } from './fixtures.ts';

const REPO = join(import.meta.dirname, '../../..');

const template = (name: string, annotations: Record<string, string>, restartPolicy?: string) => ({
  metadata: { labels: { app: name, 'toolgate.dev/inject': 'true' }, annotations },
  spec: {
    ...(restartPolicy === undefined ? {} : { restartPolicy }),
    containers: [
      { name: 'server', image: `registry.example.com/${name}:1`, ports: [{ name: 'mcp', containerPort: 3000 }] },
    ],
  },
});

const SERVICE = `# The Service is not touched: its targetPort names the port toolgate takes over.
apiVersion: v1
kind: Service
metadata: { name: tickets }
spec:
  selector: { app: tickets }
  ports: [{ port: 80, targetPort: mcp }]
`;

function stream(...docs: (object | string)[]): string {
  return docs.map((d) => (typeof d === 'string' ? d : JSON.stringify(d))).join('\n---\n');
}

const deployment = (annotations: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'tickets' },
  spec: { selector: { matchLabels: { app: 'tickets' } }, template: template('tickets', annotations) },
});
const cronJob = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'nightly-index' },
  spec: {
    schedule: '0 3 * * *',
    jobTemplate: {
      spec: { template: template('indexer', { 'toolgate.dev/policy-configmap': 'indexer-policy' }, 'OnFailure') },
    },
  },
};
const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'tickets-policy' },
  data: { 'policy.yaml': 'version: 1\n' },
};

function objects(text: string): any[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .filter((o) => o !== null);
}

describe('toolgate inject, offline, on a stream of manifests', () => {
  const config = fixtureConfig();

  it('injects every opted-in pod template by the webhook rules and leaves other documents as they were', () => {
    const input = stream(
      deployment({ 'toolgate.dev/policy-configmap': 'tickets-policy' }),
      SERVICE,
      cronJob,
      configMap,
    );
    const result = injectManifests(input, config);
    assert.ok(result.ok);
    assert.equal(result.injected, 2);
    const [dep, service, cron, cm] = objects(result.text);
    assert.deepEqual(allProblems([dep, service, cron, cm]), []);
    assert.deepEqual(frontProblems(dep.spec.template, 'mcp'), []);
    assert.equal(dep.spec.template.metadata.labels['toolgate.dev/injected'], 'true');
    const job = cron.spec.jobTemplate.spec.template;
    assert.deepEqual(frontProblems(job, 'mcp'), []);
    assert.equal(sidecarOf(job).restartPolicy, 'Always', 'a native sidecar does not keep the Job from completing');
    assert.deepEqual(
      job.spec.containers.map((c: any) => c.name),
      ['server'],
    );
    assert.ok(result.text.includes(SERVICE.trim()), 'untouched documents keep their text and comments');
    assert.deepEqual(cm, configMap);
  });

  it('injects Pods and the items of a List, and is idempotent', () => {
    const { metadata, spec } = template('p', { 'toolgate.dev/mode': 'transparent' });
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ...metadata }, spec };
    const first = injectManifests(
      stream({ apiVersion: 'v1', kind: 'List', items: [pod, deployment({ 'toolgate.dev/policy-configmap': 'x' })] }),
      config,
    );
    assert.ok(first.ok);
    assert.equal(first.injected, 2);
    const [list] = objects(first.text);
    assert.deepEqual(frontProblems(list.items[0], 'mcp'), []);
    const second = injectManifests(first.text, config);
    assert.ok(second.ok);
    assert.equal(second.injected, 0);
    assert.equal(second.text, first.text);
  });

  it('refuses the whole stream when one opted-in template cannot be injected, naming the object and the field', () => {
    const result = injectManifests(
      stream(
        configMap,
        deployment({ 'toolgate.dev/proxy-port': 'abc', 'toolgate.dev/policy-configmap': 'x' }),
        deployment({}),
      ),
      config,
    );
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.errors.length, 2);
    assert.match(
      result.errors[0] as string,
      /^Deployment\/tickets: spec\.template\.metadata\.annotations\[toolgate\.dev\/proxy-port\]: annotation toolgate\.dev\/proxy-port must be a port number/,
    );
    assert.match(
      result.errors[1] as string,
      /^Deployment\/tickets: spec\.template\.metadata\.annotations\[toolgate\.dev\/policy-configmap\]: .*names no policy/,
    );
    assert.doesNotMatch(result.errors.join('\n'), /abc/);
  });

  it('refuses a CronJob with plain sidecars', () => {
    const plain = parseInjectorConfig('image: ghcr.io/toolgate/toolgate:0.1.0\nsidecarMode: plain\n');
    assert.ok(plain.ok);
    const result = injectManifests(stream(cronJob), plain.config);
    assert.equal(result.ok, false);
    if (!result.ok)
      assert.match(
        result.errors[0] as string,
        /^CronJob\/nightly-index: spec\.jobTemplate\.spec\.template\.spec\.restartPolicy: the pod runs to completion/,
      );
  });

  it('refuses YAML that does not parse', () => {
    assert.deepEqual(injectManifests('a: [\n', config), { ok: false, errors: ['document 1 is not valid YAML'] });
  });
});

/** Runs the command in this process for the cases that print nothing on stdout, capturing stderr. */
async function runInProcess(args: string[]): Promise<{ status: number; stderr: string }> {
  const { run } = await import('../../../src/commands/inject.ts');
  let stderr = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk: string) => {
    stderr += chunk;
    return true;
  };
  try {
    return { status: await run(args), stderr };
  } finally {
    process.stderr.write = write;
  }
}

describe('toolgate inject, the command', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-inject-cli-'));
  const ok = join(dir, 'ok.yaml');
  writeFileSync(ok, stream(deployment({ 'toolgate.dev/policy-configmap': 'tickets-policy' }), SERVICE));
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, stream(deployment({})));
  const cli = (args: string[], input?: string) =>
    spawnSync(process.execPath, [join(REPO, 'src/cli.ts'), 'inject', ...args], { encoding: 'utf8', input });

  it('as a process: reads stdin, prints the injected manifests and exits 0', () => {
    const r = cli(
      ['-f', '-', '--image', 'registry.example.com/toolgate:1'],
      stream(deployment({ 'toolgate.dev/mode': 'transparent' })),
    );
    assert.equal(r.status, 0, r.stderr);
    const [dep] = objects(r.stdout);
    assert.deepEqual(frontProblems(dep.spec.template, 'mcp'), []);
    assert.equal(sidecarOf(dep.spec.template).image, 'registry.example.com/toolgate:1');
  });
  it('as a process: exits 1 with the reasons on stderr and nothing on stdout when a template is refused', () => {
    const r = cli(['-f', bad, '--image', 'x:1']);
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^toolgate inject: Deployment\/tickets: .*names no policy/);
  });
  it('as a process: reads a file with the injector config the chart renders', () => {
    const r = cli(['-f', ok, '--config', join(FIXTURES, 'config.yaml')]);
    assert.equal(r.status, 0, r.stderr);
    const [dep, service] = objects(r.stdout);
    assert.deepEqual(frontProblems(dep.spec.template, 'mcp'), []);
    assert.equal(service.kind, 'Service');
  });
  it('exits 2 on bad usage, an unreadable file or an invalid config', async () => {
    assert.equal((await runInProcess([])).status, 2);
    assert.equal((await runInProcess(['-f', ok, '--image', 'x:1', '--config', 'y'])).status, 2);
    assert.equal((await runInProcess(['-f', ok, '--bogus', 'y'])).status, 2);
    assert.equal((await runInProcess(['-f', join(dir, 'missing.yaml'), '--image', 'x:1'])).status, 2);
    const badConfig = await runInProcess(['-f', ok, '--config', join(FIXTURES, 'deployment-pod.review.json')]);
    assert.equal(badConfig.status, 2);
    assert.match(
      badConfig.stderr,
      /^toolgate inject: injector config \S+deployment-pod\.review\.json: \/image: required/,
    );
  });
  it('as a process: each usage or file problem names the flag or the file', () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'TOOLGATE_INJECT_CONFIG'));
    const missing = join(dir, 'missing.yaml');
    for (const [args, line] of [
      [
        ['-f', ok],
        `toolgate inject: injector config ${DEFAULT_CONFIG_FILE}: cannot read the file (ENOENT) (the default; give --config FILE, --image REF or TOOLGATE_INJECT_CONFIG)\n`,
      ],
      [['-f', ok, '--config', missing], `toolgate inject: injector config ${missing}: cannot read the file (ENOENT)\n`],
      [['-f', missing, '--image', 'x:1'], `toolgate inject: cannot read the manifests file ${missing} (ENOENT)\n`],
      [['--image', 'x:1'], 'toolgate inject: -f is required: the manifests file, or - for stdin\n'],
      [['-f', ok, '--config'], 'toolgate inject: --config needs a value\n'],
      [['-f', ok, '--image', 'x:1', '--config', 'y'], 'toolgate inject: --config and --image exclude each other\n'],
    ] as const) {
      const r = spawnSync(process.execPath, [join(REPO, 'src/cli.ts'), 'inject', ...args], { encoding: 'utf8', env });
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.split('\n')[0] + '\n', line, args.join(' '));
    }
  });
});
