import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ConfigMapMount } from '../../helpers/configmap-mount.ts';
import { fingerprint } from '../../../src/reload/fingerprint.ts';
import {
  watchPolicy,
  type AppliedVersion,
  type Candidate,
  type PolicyWatchOptions,
  type PolicyWatcher,
  type ReloadOutcome,
} from '../../../src/reload/watch.ts';
import { policyReload, type PolicyReload } from '../../../src/telemetry/channels.ts';
import { sha256 } from '../../helpers/static-keys.ts';

const WAIT_MS = 5000;

/** Loads a text file; text starting with "invalid" fails validation with a fixed rule. */
function textLoader() {
  const calls: { path: string; generation: number }[] = [];
  let active = 0;
  let maxActive = 0;
  let gate: PromiseWithResolvers<void> | undefined;
  let entered: PromiseWithResolvers<void> | undefined;
  const load = async (path: string, generation: number): Promise<Candidate<string>> => {
    calls.push({ path, generation });
    maxActive = Math.max(maxActive, ++active);
    try {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch {
        return { ok: false, errors: [{ path: '', message: 'read: cannot read the policy file' }] };
      }
      entered?.resolve();
      await gate?.promise;
      if (text.startsWith('invalid'))
        return {
          ok: false,
          errors: [{ path: '/grants/0/effect', message: 'enum: must be equal to one of the allowed values' }],
        };
      return { ok: true, value: text, digest: sha256(text) };
    } finally {
      active--;
    }
  };
  return {
    load,
    calls,
    maxActive: () => maxActive,
    /** Holds loads after they read the file; resolves `entered` once one is held. */
    hold() {
      gate = Promise.withResolvers<void>();
      entered = Promise.withResolvers<void>();
      return { entered: entered.promise, release: () => gate?.resolve() };
    },
  };
}

function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Collects policyReload messages; waits for them with a bound, never a fixed sleep. */
function reloads() {
  const seen: PolicyReload[] = [];
  const waiters = new Set<() => void>();
  const on = (m: unknown) => {
    seen.push(m as PolicyReload);
    for (const w of waiters) w();
  };
  policyReload.subscribe(on);
  return {
    seen,
    /**
     * Resolves with the first message at or after index `from` whose outcome
     * is `outcome`; take `from` before the change, the message may beat the
     * change's own promise.
     */
    until(outcome: ReloadOutcome, from = 0): Promise<PolicyReload> {
      return bounded(
        new Promise<PolicyReload>((resolve) => {
          const check = () => {
            const hit = seen.slice(from).find((m) => m.outcome === outcome);
            if (hit === undefined) return;
            waiters.delete(check);
            resolve(hit);
          };
          waiters.add(check);
          check();
        }),
        `a reload ${outcome}`,
      );
    },
    dispose: () => policyReload.unsubscribe(on),
  };
}

function captureLog() {
  const lines: Record<string, unknown>[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n'))
      if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  };
  return {
    lines,
    restore: () => {
      process.stderr.write = original;
    },
  };
}

describe('watchPolicy', () => {
  let root: string;
  let mount: ConfigMapMount;
  let path: string;
  let events: ReturnType<typeof reloads>;
  let logs: ReturnType<typeof captureLog>;
  const open: PolicyWatcher<string>[] = [];

  const start = async (opts: Partial<PolicyWatchOptions<string>> & Pick<PolicyWatchOptions<string>, 'load'>) => {
    const applied: AppliedVersion<string>[] = [];
    const w = watchPolicy<string>({
      path,
      debounceMs: 30,
      pollIntervalMs: 5000,
      onApply: (a) => applied.push(a),
      ...opts,
    });
    open.push(w);
    const first = await w.start();
    return { w, first, applied };
  };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'toolgate-watch-'));
    mount = new ConfigMapMount(join(root, 'policy'));
    path = join(mount.dir, 'policy.yaml');
    await mount.publish({ 'policy.yaml': 'version: 1 # first' });
    events = reloads();
    logs = captureLog();
  });

  afterEach(async () => {
    logs.restore();
    events.dispose();
    for (const w of open.splice(0)) await w.close();
    await rm(root, { recursive: true, force: true });
  });

  it('start() loads generation 0 through the resolved path and applies nothing', async () => {
    const loader = textLoader();
    const { w, first, applied } = await start({ load: loader.load });
    assert.ok(first.ok);
    assert.equal(first.value, 'version: 1 # first');
    assert.deepEqual(loader.calls, [
      { path: join(mount.dir, '..2026_11_30_04_00_00.000000001', 'policy.yaml'), generation: 0 },
    ]);
    assert.deepEqual(w.current(), { value: 'version: 1 # first', digest: sha256('version: 1 # first'), generation: 0 });
    assert.deepEqual(applied, []);
    assert.deepEqual(events.seen, []);
  });

  it('applies a new version published by a ..data swap, as generation 1', async () => {
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load });
    await mount.publish({ 'policy.yaml': 'version: 1 # second' });
    const m = await events.until('applied');
    assert.equal(m.generation, 1);
    assert.ok(m.durationSeconds >= 0);
    assert.deepEqual(
      applied.map((a) => [a.value, a.generation]),
      [['version: 1 # second', 1]],
    );
    assert.equal(w.current()?.value, 'version: 1 # second');
    assert.deepEqual(loader.calls.at(-1), {
      path: join(mount.dir, '..2026_11_30_04_00_00.000000002', 'policy.yaml'),
      generation: 1,
    });
    assert.ok(
      logs.lines.some(
        (l) => l.msg === 'policy reloaded' && l.generation === 1 && l.digest === sha256('version: 1 # second'),
      ),
    );
  });

  it('rejects an invalid version, keeps the last good one, and offers the same generation to the next', async () => {
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load });
    await mount.publish({ 'policy.yaml': 'invalid: canary-4f1e-secret' });
    const m = await events.until('rejected');
    assert.equal(m.generation, 0);
    assert.equal(w.current()?.value, 'version: 1 # first');
    assert.equal(applied.length, 0);
    const line = logs.lines.find((l) => l.level === 'warn');
    assert.deepEqual(
      {
        msg: line?.msg,
        error_path: line?.error_path,
        error_rule: line?.error_rule,
        errors: line?.errors,
        generation: line?.generation,
      },
      {
        msg: 'policy reload rejected; the last good policy stays in force',
        error_path: '/grants/0/effect',
        error_rule: 'enum: must be equal to one of the allowed values',
        errors: 1,
        generation: 0,
      },
    );
    assert.ok(!JSON.stringify(logs.lines).includes('canary-4f1e-secret'));

    const from = events.seen.length;
    await mount.publish({ 'policy.yaml': 'version: 1 # fixed' });
    await events.until('applied', from);
    assert.deepEqual(
      loader.calls.map((c) => c.generation),
      [0, 1, 1],
    );
    assert.deepEqual(
      applied.map((a) => [a.value, a.generation]),
      [['version: 1 # fixed', 1]],
    );
  });

  it('reports a re-save with identical content as unchanged and applies nothing', async () => {
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load });
    await mount.publish({ 'policy.yaml': 'version: 1 # first' });
    const m = await events.until('unchanged');
    assert.equal(m.generation, 0);
    assert.deepEqual(applied, []);
    assert.equal(w.current()?.generation, 0);
    assert.equal(loader.calls.length, 2);
  });

  it('coalesces a burst of swaps into one load of the last version', async () => {
    const loader = textLoader();
    const { applied } = await start({ load: loader.load, debounceMs: 150 });
    for (let i = 1; i <= 5; i++) await mount.publish({ 'policy.yaml': `version: 1 # burst ${i}` });
    await events.until('applied');
    assert.equal(loader.calls.length, 2);
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # burst 5'],
    );
  });

  it('never runs two loads at once, and loads again for a change made during a load', async () => {
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load, pollIntervalMs: 60_000 });
    const held = loader.hold();
    await mount.publish({ 'policy.yaml': 'version: 1 # during-a' });
    await bounded(held.entered, 'the first load');
    await mount.publish({ 'policy.yaml': 'version: 1 # during-b' });
    // Nothing outside the watcher marks its debounce settling, so the load is
    // held for several debounce periods to let this change arrive mid-load.
    await new Promise<void>((resolve) => setTimeout(resolve, 150));
    held.release();
    await events.until('applied');
    const from = events.seen.length;
    if (w.current()?.value !== 'version: 1 # during-b') await events.until('applied', from);
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # during-a', 'version: 1 # during-b'],
    );
    assert.equal(loader.maxActive(), 1);
  });

  it('does not reject a version replaced while it loaded, and loads its replacement instead', async () => {
    const loader = textLoader();
    const entered = Promise.withResolvers<void>();
    const proceed = Promise.withResolvers<void>();
    const { applied } = await start({
      pollIntervalMs: 60_000,
      load: async (p, g) => {
        if (g === 1 && loader.calls.length === 1) {
          entered.resolve();
          await proceed.promise;
        }
        return loader.load(p, g);
      },
    });
    await mount.publish({ 'policy.yaml': 'version: 1 # replaced' });
    await bounded(entered.promise, 'the first load');
    await mount.publish({ 'policy.yaml': 'version: 1 # replacement' });
    proceed.resolve();
    await events.until('applied');
    assert.equal(
      loader.calls[1]?.path,
      join(mount.dir, '..2026_11_30_04_00_00.000000002', 'policy.yaml'),
      'the held load read a directory the swap deleted',
    );
    assert.deepEqual(
      events.seen.map((m) => m.outcome),
      ['applied'],
    );
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # replacement'],
    );
    assert.equal(logs.lines.filter((l) => l.level === 'warn').length, 0);
  });

  it('picks up a plainly replaced file (rename over it, or rewritten in place)', async () => {
    const plain = join(root, 'plain');
    await mkdir(plain);
    path = join(plain, 'policy.yaml');
    await writeFile(path, 'version: 1 # plain');
    const loader = textLoader();
    const { applied } = await start({ load: loader.load });
    await writeFile(join(plain, '.policy.yaml.tmp'), 'version: 1 # renamed');
    await rename(join(plain, '.policy.yaml.tmp'), path);
    await events.until('applied');
    const from = events.seen.length;
    await writeFile(path, 'version: 1 # in place');
    await events.until('applied', from);
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # renamed', 'version: 1 # in place'],
    );
    assert.deepEqual(
      loader.calls.map((c) => c.path),
      [path, path, path],
    );
  });

  it('finds changes by polling alone when fs.watch is off', async () => {
    const loader = textLoader();
    const { applied } = await start({ load: loader.load, fsWatch: false, pollIntervalMs: 20 });
    await mount.publish({ 'policy.yaml': 'version: 1 # polled' });
    await events.until('applied');
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # polled'],
    );
    // Missing twice is the same fingerprint twice: the second must still be noticed.
    for (const version of ['back', 'back again']) {
      let from = events.seen.length;
      await mount.remove();
      await events.until('rejected', from);
      from = events.seen.length;
      await mount.publish({ 'policy.yaml': `version: 1 # ${version}` });
      await events.until('applied', from);
    }
    assert.deepEqual(
      applied.map((a) => a.value),
      ['version: 1 # polled', 'version: 1 # back', 'version: 1 # back again'],
    );
  });

  it('survives the directory disappearing: rejected while missing, applied once it is back, watched again after', async () => {
    const watchesBefore = handles().FSEventWrap;
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load, pollIntervalMs: 25 });
    await mount.remove();
    await events.until('rejected');
    assert.equal(w.current()?.value, 'version: 1 # first');
    const line = logs.lines.find((l) => l.level === 'warn');
    assert.equal(line?.error_rule, 'read: cannot read the policy file');

    let from = events.seen.length;
    await mount.publish({ 'policy.yaml': 'version: 1 # recreated' });
    await events.until('applied', from);
    assert.equal(
      (await handlesSettled({ FSEventWrap: watchesBefore + 1 })).FSEventWrap,
      watchesBefore + 1,
      'the dead watch is replaced by one on the new directory',
    );
    from = events.seen.length;
    await mount.publish({ 'policy.yaml': 'version: 1 # after' });
    await events.until('applied', from);
    assert.deepEqual(
      applied.map((a) => [a.value, a.generation]),
      [
        ['version: 1 # recreated', 1],
        ['version: 1 # after', 2],
      ],
    );
  });

  it('rejects a version whose onApply throws, and one whose loader throws, without the exception text', async () => {
    const loader = textLoader();
    let fail: 'apply' | 'load' | undefined = 'apply';
    const { w } = await start({
      load: async (p, g) => {
        if (fail === 'load') throw new Error('canary-loader-exception');
        return loader.load(p, g);
      },
      onApply: () => {
        if (fail === 'apply') throw new Error('canary-apply-exception');
      },
    });
    await mount.publish({ 'policy.yaml': 'version: 1 # x' });
    await events.until('rejected');
    fail = 'load';
    const from = events.seen.length;
    await mount.publish({ 'policy.yaml': 'version: 1 # y' });
    await events.until('rejected', from);
    assert.equal(w.current()?.generation, 0);
    assert.deepEqual(
      logs.lines.filter((l) => l.level === 'warn').map((l) => l.error_rule),
      ['apply: the onApply listener threw', 'load: the policy loader failed'],
    );
    assert.ok(!JSON.stringify(logs.lines).includes('canary'));
  });

  it('start() that fails closes the watcher and says why; start() twice throws', async () => {
    await mount.publish({ 'policy.yaml': 'invalid' });
    const before = handles();
    const loader = textLoader();
    const { w, first } = await start({ load: loader.load });
    assert.deepEqual(await handlesSettled(before), before);
    assert.deepEqual(first, {
      ok: false,
      errors: [{ path: '/grants/0/effect', message: 'enum: must be equal to one of the allowed values' }],
    });
    assert.equal(w.current(), undefined);
    await assert.rejects(w.start(), /start\(\) may be called once/);
    assert.equal(loader.calls.length, 1);
  });

  it('close() drops a load in flight, and leaves no timer or watch handle behind', async () => {
    const before = handles();
    const loader = textLoader();
    const { w, applied } = await start({ load: loader.load, pollIntervalMs: 20 });
    assert.ok(handles().FSEventWrap > before.FSEventWrap);
    const held = loader.hold();
    await mount.publish({ 'policy.yaml': 'version: 1 # dropped' });
    await bounded(held.entered, 'the load');
    const closing = w.close();
    held.release();
    await closing;
    await w.close();
    assert.deepEqual(applied, []);
    assert.deepEqual(events.seen, []);
    assert.equal(w.current()?.value, 'version: 1 # first');
    assert.deepEqual(await handlesSettled(before), before);
  });

  it('close() during start() leaves nothing running and start() says so', async () => {
    const before = handles();
    const loader = textLoader();
    const w = watchPolicy<string>({ path, load: loader.load, onApply: () => {}, pollIntervalMs: 20 });
    const starting = w.start();
    await w.close();
    assert.deepEqual(await starting, {
      ok: false,
      errors: [{ path: '', message: 'watch: closed before the first load finished' }],
    });
    assert.equal(w.current(), undefined);
    assert.deepEqual(await handlesSettled(before), before);
  });

  it('re-reads when a file the version names, in another directory, changes: by its watch or by the poll', async () => {
    // Each way alone: events with a poll too slow to matter, then the poll with no events at all.
    for (const [fsWatch, pollIntervalMs] of [
      [true, 3_600_000],
      [false, 20],
    ] as const) {
      const keys = join(root, `keys-${fsWatch}`, 'keys.yaml');
      await mkdir(join(root, `keys-${fsWatch}`));
      await writeFile(keys, 'first');
      const load = async (p: string): Promise<Candidate<string>> => {
        const files = [{ path: keys, fingerprint: (await fingerprint(keys)).key }];
        const text = `${await readFile(p, 'utf8')}+${await readFile(keys, 'utf8')}`;
        return { ok: true, value: text, digest: sha256(text), files };
      };
      const { w } = await start({ load, fsWatch, pollIntervalMs });
      const from = events.seen.length;
      await writeFile(keys, 'second');
      await events.until('applied', from);
      assert.equal(w.current()?.value, 'version: 1 # first+second', `fsWatch ${fsWatch}`);
    }
  });

  it('refuses bad options at construction', () => {
    const load = textLoader().load;
    const onApply = () => {};
    for (const o of [{ debounceMs: 0 }, { debounceMs: 1.5 }, { pollIntervalMs: -1 }, { pollIntervalMs: Number.NaN }]) {
      assert.throws(
        () => watchPolicy({ path, load, onApply, ...o }),
        /^TypeError: PolicyWatcher: \w+ must be a positive integer/,
        JSON.stringify(o),
      );
    }
    assert.throws(() => watchPolicy({ path: '', load, onApply }), /path must be a non-empty string/);
  });
});

function handles(): { Timeout: number; FSEventWrap: number } {
  const all = process.getActiveResourcesInfo();
  return {
    Timeout: all.filter((r) => r === 'Timeout').length,
    FSEventWrap: all.filter((r) => r === 'FSEventWrap').length,
  };
}

/** libuv releases a closed handle a loop turn or two later: wait a bounded number of turns for the expected counts. */
async function handlesSettled(expected: Partial<ReturnType<typeof handles>>): Promise<ReturnType<typeof handles>> {
  const matches = (now: ReturnType<typeof handles>) =>
    Object.entries(expected).every(([k, v]) => now[k as keyof typeof now] === v);
  for (let turn = 0; turn < 50; turn++) {
    const now = handles();
    if (matches(now)) return now;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return handles();
}
