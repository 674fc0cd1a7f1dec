/**
 * Property: over generated Pod specs that carry the opt-in label, in both
 * sidecar modes, the injector never answers `allowed: true` unless toolgate
 * then stands in front of the MCP port, either through the patch it returns
 * or because the pod already had it. Every refusal carries a reason, a field
 * and a message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import { isPortName } from '../../../src/inject/k8s.ts';
import { applied, frontProblems, patchOf, podProblems, respond } from './admission.ts';
import { pod, review } from './generated-pods.ts';

for (const mode of ['native', 'plain'] as const) {
  const parsed = parseInjectorConfig(`image: ghcr.io/toolgate/toolgate:0.1.0\nsidecarMode: ${mode}\n`);
  assert.ok(parsed.ok);
  const config = parsed.config;

  describe(`${mode} sidecars, over generated opted-in pods`, () => {
    it('never allows a pod unless toolgate stands in front of its MCP port', () => {
      let patched = 0;
      let denied = 0;
      fc.assert(
        fc.property(pod, (generated) => {
          const response = respond(review(generated), config);
          if (!response.allowed) {
            denied++;
            assert.equal(response.status?.reason, 'Invalid');
            assert.ok((response.status?.details.causes[0].field ?? '') !== '');
            assert.match(response.status?.message ?? '', /^toolgate: \S/);
            return;
          }
          const named = generated.metadata.annotations['toolgate.dev/port-name'];
          const portName = named !== undefined && isPortName(named) ? named : 'mcp';
          if (response.patch === undefined) {
            assert.deepEqual(
              frontProblems(generated, portName),
              [],
              'admitted unchanged only when toolgate is already in front',
            );
            return;
          }
          patched++;
          const result = applied(generated, patchOf(response));
          assert.deepEqual(frontProblems(result, portName), []);
          if (podProblems(generated).length === 0) assert.deepEqual(podProblems(result), [], 'a valid pod stays valid');
        }),
        { numRuns: 400 },
      );
      assert.ok(
        patched > 40 && denied > 40,
        `the generator reaches both answers (patched ${patched}, denied ${denied})`,
      );
    });
  });
}
