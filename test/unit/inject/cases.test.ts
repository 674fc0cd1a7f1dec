/**
 * Table-driven AdmissionReview cases over the fixtures, in both sidecar
 * modes: every malformed opt-in is refused with the field at fault and a
 * message that says how to fix it; every good case patches, and the patched
 * Pod is a valid Pod with toolgate in front of the MCP port.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import type { InjectorConfig } from '../../../src/inject/config.ts';
import { applied, frontProblems, patchOf, podProblems, respond, sidecarOf } from './admission.ts';
import { DENIED, PATCHED } from './cases.ts';
import { readReview } from './fixtures.ts';

function config(extra: string): InjectorConfig {
  const parsed = parseInjectorConfig(`image: ghcr.io/toolgate/toolgate:0.1.0\n${extra}`);
  assert.ok(parsed.ok);
  return parsed.config;
}

const MODES: Readonly<Record<string, InjectorConfig>> = {
  native: config('sidecarMode: native\n'),
  plain: config('sidecarMode: plain\n'),
};

for (const [mode, cfg] of Object.entries(MODES)) {
  describe(`${mode} sidecars: malformed opt-ins are refused with the field and the fix`, () => {
    for (const [what, fixture, edit, field, message] of DENIED) {
      it(what, () => {
        const body = readReview(fixture);
        edit(body.request.object, body.request);
        const response = respond(body, cfg);
        assert.equal(response.uid, body.request.uid);
        assert.equal(response.allowed, false);
        assert.equal(response.patch, undefined);
        assert.equal(response.status?.status, 'Failure');
        assert.equal(response.status?.reason, 'Invalid');
        assert.equal(response.status?.code, 422);
        assert.equal(response.status?.details.causes[0].field, field);
        assert.match(response.status?.message ?? '', /^toolgate: /);
        assert.match(response.status?.message ?? '', message);
        assert.doesNotMatch(
          response.status?.message ?? '',
          /rm -rf|Tickets_Policy|UPPER|MCP_PORT|lots/,
          'annotation values are never echoed',
        );
      });
    }
  });

  describe(`${mode} sidecars: good opt-ins are patched into valid Pods with toolgate in front`, () => {
    for (const [what, fixture, edit, portName] of PATCHED) {
      it(what, () => {
        const body = readReview(fixture);
        edit(body.request.object, body.request);
        const pod = applied(body.request.object, patchOf(respond(body, cfg)));
        assert.deepEqual(podProblems(pod), []);
        assert.deepEqual(frontProblems(pod, portName), []);
        const sidecar = sidecarOf(pod);
        if (mode === 'native') {
          assert.equal(
            pod.spec.initContainers.at(-1),
            sidecar,
            'toolgate starts last among the init containers, right before the app',
          );
          assert.equal(sidecar.restartPolicy, 'Always');
          assert.equal(
            sidecar.startupProbe.httpGet.path,
            '/healthz',
            'the startup probe cannot wait for the app, which starts after it',
          );
          assert.ok(!pod.spec.containers.some((c: any) => c.name === 'toolgate'));
        } else {
          assert.equal(pod.spec.containers.at(-1), sidecar);
          assert.equal(sidecar.restartPolicy, undefined);
          assert.equal(sidecar.startupProbe, undefined);
        }
        assert.equal(pod.metadata.labels['toolgate.dev/injected'], 'true');
        const again = readReview(fixture);
        again.request.object = pod;
        const second = respond(again, cfg);
        assert.equal(second.allowed, true);
        assert.equal(second.patch, undefined, 'a second review (reinvocation) changes nothing');
      });
    }
  });
}

describe('the optional iptables redirect', () => {
  const cfg = config('redirect: { image: registry.example.com/iptables:1.8 }\n');
  it('adds an init container, before toolgate, that sends the app port to toolgate and alone holds NET_ADMIN', () => {
    const pod = applied(
      readReview('deployment-pod').request.object,
      patchOf(respond(readReview('deployment-pod'), cfg)),
    );
    assert.deepEqual(podProblems(pod), []);
    assert.deepEqual(
      pod.spec.initContainers.map((c: any) => c.name),
      ['toolgate-redirect', 'toolgate'],
    );
    const redirect = pod.spec.initContainers[0];
    assert.equal(redirect.restartPolicy, undefined, 'it runs once and exits');
    assert.deepEqual(redirect.args, [
      '-t',
      'nat',
      '-A',
      'PREROUTING',
      '-p',
      'tcp',
      '--dport',
      '3000',
      '-j',
      'REDIRECT',
      '--to-ports',
      '8080',
    ]);
    assert.deepEqual(redirect.securityContext.capabilities, { drop: ['ALL'], add: ['NET_ADMIN'] });
    assert.equal(redirect.securityContext.privileged, false);
    for (const c of [...pod.spec.containers, sidecarOf(pod)])
      assert.equal(c.securityContext?.capabilities?.add, undefined, c.name);
  });
  it('is an init container in plain mode too, with toolgate a regular container', () => {
    const plain = config('sidecarMode: plain\nredirect: { image: registry.example.com/iptables:1.8 }\n');
    const pod = applied(
      readReview('deployment-pod').request.object,
      patchOf(respond(readReview('deployment-pod'), plain)),
    );
    assert.deepEqual(
      pod.spec.initContainers.map((c: any) => c.name),
      ['toolgate-redirect'],
    );
    assert.deepEqual(frontProblems(pod, 'mcp'), []);
  });
});
