import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { listenOnLoopback, readAll } from '../helpers/http-server.ts';
import { startPolicyServer } from '../helpers/mcp-policy-server.ts';
import { freePort } from '../helpers/ports.ts';
import { passed, post, refusalOf } from '../helpers/raw.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { startToolgateProcess, type ToolgateProcess } from '../helpers/toolgate-process.ts';
import { startValidator } from '../helpers/validator-process.ts';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'dist/cli.js');

test('npm run build leaves an executable bin that runs by its shebang', { timeout: 300_000 }, () => {
  rmSync(join(ROOT, 'dist'), { recursive: true, force: true });
  // The npm that runs this test when it runs under `npm test`, else the one on PATH.
  const npm = process.env.npm_execpath;
  const built =
    npm === undefined
      ? spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' })
      : spawnSync(process.execPath, [npm, 'run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(built.status, 0, built.stderr);
  assert.equal(readFileSync(BIN, 'utf8').split('\n')[0], '#!/usr/bin/env node');
  assert.equal(statSync(BIN).mode & 0o111, 0o111, 'executable by user, group and others');
  // Executed as a program, not handed to node: the kernel reads the shebang.
  const ran = spawnSync(BIN, ['--version'], { encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  assert.match(ran.stdout, /^toolgate \d+\.\d+\.\d+\n$/);
});

/** One COPY of the Dockerfile's final stage: sources (in a stage, or in the build context) to a path under /app. */
interface Copy {
  readonly from: string | undefined;
  readonly sources: readonly string[];
  readonly dest: string;
}

/** The final stage's COPY lines and ENV settings, in order. */
function finalStage(): { copies: Copy[]; env: Record<string, string> } {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const stage = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)));
  const copies = stage
    .filter((l) => /^COPY\s/i.test(l))
    .map((l) => {
      const words = l.trim().split(/\s+/).slice(1);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1) as string };
    });
  const env = Object.fromEntries(
    stage
      .filter((l) => /^ENV\s/i.test(l))
      .map((l) => /^ENV\s+([A-Z_]+)=(\S+)$/i.exec(l.trim()))
      .map((m, i) => {
        assert.ok(m !== null, `ENV line ${i + 1} of the final stage is not NAME=value`);
        return [m[1] as string, m[2] as string];
      }),
  );
  return { copies, env };
}

/** How this checkout stands in for what a COPY takes from another stage: lays it out at `dest`, inside `app`. */
const STAGE_OUTPUTS: Readonly<Record<string, (dest: string, app: string) => void>> = {
  'build /app/dist': (dest) => cpSync(join(ROOT, 'dist'), dest, { recursive: true }),
  'deps /app/node_modules': (dest) => symlinkSync(join(ROOT, 'node_modules'), dest),
  // The stage's RUN, with the same files at the same paths (the cache is keyed by them).
  'compile-cache /tmp/compile-cache': (dest, app) => {
    const warmed = spawnSync(process.execPath, [join(app, 'dist/warm-compile-cache.js')], {
      encoding: 'utf8',
      env: { ...process.env, NODE_COMPILE_CACHE: dest },
    });
    assert.equal(warmed.status, 0, warmed.stderr);
  },
};

/**
 * The image's /app, laid out from this checkout as the final stage's COPY
 * lines say, without a container engine, and the stage's ENV with /app read
 * as that directory. The build is copied, not linked: compiled modules find
 * proto/ and package.json relative to where they are.
 */
function imageApp(): { app: string; env: Record<string, string> } {
  const app = join(mkdtempSync(join(tmpdir(), 'toolgate-image-')), 'app');
  mkdirSync(app);
  const stage = finalStage();
  for (const copy of stage.copies) {
    for (const source of copy.sources) {
      // As Docker reads it: a destination ending in / (or taking several sources) is a directory.
      const intoDir = copy.dest.endsWith('/') || copy.sources.length > 1;
      const dest = join(app, copy.dest, intoDir ? basename(source) : '');
      if (copy.from === undefined) {
        cpSync(join(ROOT, source), dest, { recursive: true });
        continue;
      }
      const layOut = STAGE_OUTPUTS[`${copy.from} ${source}`];
      assert.ok(layOut !== undefined, `no local stand-in for COPY --from=${copy.from} ${source}: add one here`);
      layOut(dest, app);
    }
  }
  const env = Object.fromEntries(
    Object.entries(stage.env).map(([name, value]) => [name, value.replace(/^\/app(?=\/|$)/, app)]),
  );
  return { app, env };
}

/** Every file under `dir`, with its size and modification time. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => {
      const st = statSync(join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    })
    .sort();
}

// The sidecar reads proto/ beside dist/ for its gRPC API and external validators: an image
// without it crashes at start with --grpc, and fails every validator call closed. The compile
// cache is only worth its bytes if it holds what a sidecar loads.
test(
  'the image holds what the build reads at run time: gRPC, a validator, tracing, and every module compiled',
  { timeout: 120_000 },
  async () => {
    const { app, env } = imageApp();
    const cache = env.NODE_COMPILE_CACHE;
    assert.ok(cache !== undefined, 'the image points Node at its compile cache');
    const warmed = listing(cache);
    assert.ok(warmed.length > 100, `the compile cache holds the modules' code (${warmed.length} files)`);
    const [upstream, validator] = await Promise.all([startPolicyServer(), startValidator({ quiet: true })]);
    // Tracing on, so that the SDK and its exporter are among what the sidecar loads.
    let exports = 0;
    const receiver = await listenOnLoopback(async (req, res) => {
      exports++;
      await readAll(req);
      res.writeHead(200).end();
    });
    const tracing = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin };
    const key = 'image-key-5f0c9e2b7d4a1e8c3b6f';
    writeFileSync(join(app, 'keys.yaml'), `keys:\n  - { sha256: ${sha256(key)}, principal: alice, scopes: [docs] }\n`);
    writeFileSync(
      join(app, 'policy.yaml'),
      'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\n' +
        'grants:\n  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow, when: "size(args) >= 0" }\n' +
        `validators:\n  - { name: pii, target: "${validator.target}", hooks: [{ event: tools/call, phase: request }], timeoutMs: 2000 }\n`,
    );
    let gate: ToolgateProcess | undefined;
    try {
      gate = await startToolgateProcess(
        upstream.origin,
        ['--policy-file', join(app, 'policy.yaml'), '--grpc', 'true', '--grpc-port', String(await freePort())],
        { cli: join(app, 'dist/cli.js'), env: { ...env, ...tracing } },
      );
      const url = gate.url;
      const call = (query: string) =>
        post(
          url,
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'search_docs', arguments: { query } },
          }),
          { authorization: `Bearer ${key}` },
        );
      const allowed = await call('quarterly report');
      assert.ok(passed(allowed), allowed.text);
      // Refused for what the validator said, not because it could not be asked.
      assert.equal(refusalOf(await call('BLOCK this'))?.code, 'validator_denied');
      await gate.close();
      assert.ok(exports > 0, 'the sidecar exported its spans');
      // Node writes at exit what it had to compile: nothing, when the build step left nothing out.
      assert.deepEqual(listing(cache), warmed, 'the sidecar found every module it loaded in the cache');
    } finally {
      await gate?.close();
      await Promise.all([upstream.close(), validator.close()]);
      await receiver.close();
      rmSync(join(app, '..'), { recursive: true, force: true });
    }
  },
);
