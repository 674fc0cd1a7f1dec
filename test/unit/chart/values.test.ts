import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { EXAMPLES, readText, readYaml, valuePaths } from './chart-files.ts';

const schema = JSON.parse(readText('values.schema.json'));
const validate = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(schema);
const values = readYaml('values.yaml');

function errorsOf(candidate: unknown): string[] {
  return validate(candidate) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

function withValue(path: string, value: unknown): unknown {
  const copy = structuredClone(values);
  const keys = path.split('.');
  let at = copy;
  for (const k of keys.slice(0, -1)) at = at[k];
  at[keys.at(-1) as string] = value;
  return copy;
}

describe('values.schema.json', () => {
  it('accepts values.yaml and every example values file', () => {
    assert.deepEqual(errorsOf(values), []);
    for (const name of EXAMPLES) {
      const merged = structuredClone(values);
      merge(merged, readYaml(`examples/${name}.yaml`));
      assert.deepEqual(errorsOf(merged), [], name);
    }
  });
  it('closes every object it defines: additionalProperties is false, or a typed map', () => {
    const open: string[] = [];
    const walk = (node: any, at: string) => {
      if (typeof node !== 'object' || node === null) return;
      if (
        node.type === 'object' &&
        node.description === undefined &&
        node.additionalProperties !== false &&
        typeof node.additionalProperties !== 'object'
      )
        open.push(at);
      for (const [k, v] of Object.entries(node)) if (k !== 'allOf') walk(v, `${at}/${k}`);
    };
    walk(schema, '');
    assert.deepEqual(open, []);
  });
  it('refuses an unknown key at every level of values.yaml', () => {
    const objects = valuePaths(values, schema).flatMap((p) =>
      p.split('.').map((_, i, all) => all.slice(0, i).join('.')),
    );
    for (const parent of new Set(objects)) {
      const copy = structuredClone(values);
      let at = copy;
      for (const k of parent === '' ? [] : parent.split('.')) at = at[k];
      if (typeof at !== 'object' || Array.isArray(at) || Object.keys(at).length === 0) continue;
      const node = parent === '' ? schema : parent.split('.').reduce((n: any, k) => n.properties[k], schema);
      if (typeof node.additionalProperties === 'object') continue;
      at.unknownKey = 'x';
      assert.notDeepEqual(errorsOf(copy), [], `unknown key under ${parent || 'the root'}`);
    }
  });
  it('refuses wrong types and values', () => {
    const bad: [string, unknown][] = [
      ['webhook.replicas', '2'],
      ['webhook.failurePolicy', 'Maybe'],
      ['webhook.port', 80],
      ['sidecar.portName', 'MCP_PORT'],
      ['sidecar.proxyPort', 70000],
      ['sidecar.resources', { requests: { cpu: 'lots' } }],
      ['certificates.mode', 'manual'],
      ['redis.mode', 'memcached'],
      ['redis.sentinel.nodes', ['no-port']],
      ['metrics.podMonitor.enabled', 'yes'],
      ['image.digest', 'sha256:short'],
      ['webhook.namespaceSelector', { matchExpressions: [{ key: 'a', operator: 'Like' }] }],
      ['sidecar.extraEnv', [{ value: 'no name' }]],
    ];
    for (const [path, value] of bad) assert.notDeepEqual(errorsOf(withValue(path, value)), [], path);
  });
  it('requires an address for the Redis mode that is enabled', () => {
    const redis = (over: object) => ({ ...values, redis: { ...values.redis, enabled: true, ...over } });
    assert.notDeepEqual(errorsOf(redis({ mode: 'standalone' })), []);
    assert.deepEqual(errorsOf(redis({ mode: 'standalone', standalone: { host: 'redis', port: 6379, db: 0 } })), []);
    assert.notDeepEqual(errorsOf(redis({ mode: 'sentinel' })), []);
    assert.notDeepEqual(errorsOf(redis({ mode: 'cluster' })), []);
  });
});

describe('the chart README', () => {
  it('documents every value in values.yaml', () => {
    const readme = readText('README.md');
    const missing = valuePaths(values, schema).filter((p) => !readme.includes(`| \`${p}\` |`));
    assert.deepEqual(missing, []);
  });
});

function merge(into: any, from: any): void {
  for (const [k, v] of Object.entries(from)) {
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && typeof into[k] === 'object' && into[k] !== null)
      merge(into[k], v);
    else into[k] = v;
  }
}
