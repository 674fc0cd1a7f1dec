import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { authenticate } from '../../src/auth/chain.ts';
import type { PolicyInForce } from '../../src/auth/policy-in-force.ts';
import { policyLoader } from '../../src/reload/policy-loader.ts';
import { createFileGrantStore, type FileGrantStore } from '../../src/grants/file-store.ts';
import { ConfigMapMount } from '../helpers/configmap-mount.ts';
import { watchPolicy, type PolicyLoader, type PolicyWatcher, type ReloadOutcome } from '../../src/reload/watch.ts';
import { policyReload, type PolicyReload } from '../../src/telemetry/channels.ts';
import { sha256 } from '../helpers/static-keys.ts';

const WAIT_MS = 5000;
const FIRST_REVISION = 7000;
const OLD_KEY = 'old-key-5c0e1d7a9b3f';
const NEW_KEY = 'new-key-a81f2c6e4d90';
const CANARY = 'canary-77d2-policy-value';

const keys = (secret: string) =>
  `keys:\n  - { sha256: ${sha256(secret)}, principal: agent-a, scopes: ["docs:read"] }\n`;
const policy = (tools: readonly string[]) => `version: 1
authentication:
  staticKeys: { file: keys.yaml }
grants:
${tools.map((t) => `  - { principal: "*", tool: ${t}, scopes: ["docs:read"], effect: allow }`).join('\n')}
`;
const invalidPolicy = `version: 1
grants:
  - { principal: "${CANARY}", tool: search_docs, effect: perhaps }
`;

function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

describe('policy hot reload through a kubelet-style ConfigMap mount, with the real policy and verifier loader', () => {
  let root: string;
  let mount: ConfigMapMount;
  let watcher: PolicyWatcher<PolicyInForce>;
  let current: PolicyInForce;
  let grants: FileGrantStore;
  let loads: number;
  const seen: PolicyReload[] = [];
  const wakeups = new Set<() => void>();
  const onReload = (m: unknown) => {
    seen.push(m as PolicyReload);
    for (const w of wakeups) w();
  };
  let logLines: Record<string, unknown>[];
  let restoreStderr: () => void;

  /** The first `outcome` at or after index `from` (taken before the change). */
  const until = (outcome: ReloadOutcome, from: number) =>
    bounded(
      new Promise<PolicyReload>((resolve) => {
        const check = () => {
          const hit = seen.slice(from).find((m) => m.outcome === outcome);
          if (hit === undefined) return;
          wakeups.delete(check);
          resolve(hit);
        };
        wakeups.add(check);
        check();
      }),
      `a reload ${outcome}`,
    );

  const principalFor = async (secret: string) => {
    const r = await authenticate(current.verifiers, { headers: { authorization: `Bearer ${secret}` } });
    return r.ok ? r.principal.id : r.code;
  };
  const grantedTools = () => current.policy.grants.map((g) => g.tool);

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolgate-reload-'));
    mount = new ConfigMapMount(join(root, 'etc', 'toolgate'));
    await mount.publish({ 'policy.yaml': policy(['search_docs']), 'keys.yaml': keys(OLD_KEY) });
    seen.length = 0;
    logLines = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = (chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n'))
        if (line !== '') logLines.push(JSON.parse(line) as Record<string, unknown>);
      return true;
    };
    restoreStderr = () => {
      process.stderr.write = original;
    };
    policyReload.subscribe(onReload);

    loads = 0;
    const load = policyLoader();
    const counted: PolicyLoader<PolicyInForce> = (path, generation) => {
      loads++;
      return load(path, generation);
    };
    watcher = watchPolicy({
      path: join(mount.dir, 'policy.yaml'),
      load: counted,
      debounceMs: 100,
      pollIntervalMs: 50,
      // As src/main.ts wires it: grant rows first (a refusal throws,
      // so the watcher rejects the version), then the policy and verifiers.
      onApply: (v) => {
        if (grants.replaceRows(v.value.policy.grants) === undefined) throw new Error('grant rows refused');
        current = v.value;
      },
    });
    const first = await watcher.start();
    assert.ok(first.ok, JSON.stringify(!first.ok && first.errors));
    current = first.value;
    grants = createFileGrantStore({ rows: current.policy.grants, revision: FIRST_REVISION });
  });

  afterEach(async () => {
    await watcher.close();
    await grants.close();
    policyReload.unsubscribe(onReload);
    restoreStderr();
    await rm(root, { recursive: true, force: true });
  });

  it('applies a valid update at the next grant revision, policy and key file from the same version', async () => {
    assert.equal(grants.revision(), FIRST_REVISION);
    assert.equal(await principalFor(OLD_KEY), 'agent-a');
    await mount.publish({ 'policy.yaml': policy(['search_docs', 'delete_repo']), 'keys.yaml': keys(NEW_KEY) });
    const m = await until('applied', 0);
    assert.equal(m.generation, 1);
    assert.equal(grants.revision(), FIRST_REVISION + 1);
    assert.deepEqual(grantedTools(), ['search_docs', 'delete_repo']);
    assert.equal(await principalFor(NEW_KEY), 'agent-a');
    assert.equal(await principalFor(OLD_KEY), 'bad_credential');
    assert.ok(logLines.some((l) => l.msg === 'policy reloaded' && l.level === 'info' && l.generation === 1));
  });

  it('treats a key rotation with the policy text unchanged as a change', async () => {
    await mount.publish({ 'policy.yaml': policy(['search_docs']), 'keys.yaml': keys(NEW_KEY) });
    await until('applied', 0);
    assert.equal(grants.revision(), FIRST_REVISION + 1);
    assert.equal(await principalFor(NEW_KEY), 'agent-a');
    assert.equal(await principalFor(OLD_KEY), 'bad_credential');
  });

  it('rejects an invalid update, keeps the last good version in force, says why without values, then applies the fix', async () => {
    const before = current;
    await mount.publish({ 'policy.yaml': invalidPolicy, 'keys.yaml': keys(NEW_KEY) });
    const m = await until('rejected', 0);
    assert.equal(m.generation, 0);
    assert.equal(current, before);
    assert.equal(grants.revision(), FIRST_REVISION);
    assert.equal(await principalFor(OLD_KEY), 'agent-a');
    const warn = logLines.filter((l) => l.level === 'warn');
    assert.equal(warn.length, 1);
    assert.equal(warn[0]?.msg, 'policy reload rejected; the last good policy stays in force');
    assert.equal(warn[0]?.error_path, '/grants/0/effect');
    assert.match(String(warn[0]?.error_rule), /enum/);
    assert.ok(!JSON.stringify(logLines).includes(CANARY));
    assert.ok(!JSON.stringify(logLines).includes('perhaps'));

    const from = seen.length;
    await mount.publish({ 'policy.yaml': policy(['search_docs', 'fetch_page']), 'keys.yaml': keys(OLD_KEY) });
    await until('applied', from);
    assert.equal(grants.revision(), FIRST_REVISION + 1, 'a rejected version takes no revision');
    assert.deepEqual(grantedTools(), ['search_docs', 'fetch_page']);
  });

  it('reports a re-save with identical content as unchanged, keeping the same PolicyInForce', async () => {
    const before = current;
    await mount.publish({ 'policy.yaml': policy(['search_docs']), 'keys.yaml': keys(OLD_KEY) });
    await until('unchanged', 0);
    assert.equal(current, before);
    assert.equal(grants.revision(), FIRST_REVISION);
    assert.equal(loads, 2);
  });

  it('loads once for a burst of updates, and applies the last', async () => {
    for (let i = 1; i <= 6; i++)
      await mount.publish({ 'policy.yaml': policy([`tool_${i}`]), 'keys.yaml': keys(OLD_KEY) });
    await until('applied', 0);
    assert.equal(loads, 2);
    assert.deepEqual(grantedTools(), ['tool_6']);
    assert.equal(grants.revision(), FIRST_REVISION + 1);
  });

  it('keeps the last good version while the mount is gone, and applies what comes back', async () => {
    const before = current;
    await mount.remove();
    await until('rejected', 0);
    assert.equal(current, before);
    assert.match(
      String(logLines.find((l) => l.level === 'warn')?.error_rule),
      /read: cannot read the policy file \(ENOENT\)/,
    );

    const from = seen.length;
    await mount.publish({ 'policy.yaml': policy(['search_docs', 'after_return']), 'keys.yaml': keys(OLD_KEY) });
    await until('applied', from);
    assert.deepEqual(grantedTools(), ['search_docs', 'after_return']);
  });

  it('stops on close(): later updates are not loaded', async () => {
    await watcher.close();
    await mount.publish({ 'policy.yaml': policy(['ignored']), 'keys.yaml': keys(OLD_KEY) });
    // Twice the poll period with the watcher gone: a poll left running would load.
    await new Promise<void>((resolve) => setTimeout(resolve, 100));
    assert.equal(loads, 1);
    assert.deepEqual(seen, []);
  });
});
