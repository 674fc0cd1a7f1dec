import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';
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

function finalStageCopies(): Copy[] {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const finalFrom = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  return lines
    .slice(finalFrom)
    .filter((l) => /^COPY\s/i.test(l))
    .map((l) => {
      const words = l.trim().split(/\s+/).slice(1);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, sources: paths.slice(0, -1), dest: paths.at(-1) as string };
    });
}

/** Where this checkout keeps what a COPY takes from another stage. */
const STAGE_OUTPUTS: Readonly<Record<string, string>> = {
  'build /app/dist': 'dist',
  'deps /app/node_modules': 'node_modules',
};

/**
 * The image's /app, laid out from this checkout as the final stage's COPY
 * lines say, without a container engine. The build is copied, not linked:
 * compiled modules find proto/ and package.json relative to where they are.
 */
function imageApp(): string {
  const app = join(mkdtempSync(join(tmpdir(), 'toolgate-image-')), 'app');
  mkdirSync(app);
  for (const copy of finalStageCopies()) {
    for (const source of copy.sources) {
      // As Docker reads it: a destination ending in / (or taking several sources) is a directory.
      const intoDir = copy.dest.endsWith('/') || copy.sources.length > 1;
      const dest = join(app, copy.dest, intoDir ? basename(source) : '');
      if (copy.from === undefined) {
        cpSync(join(ROOT, source), dest, { recursive: true });
        continue;
      }
      const local = STAGE_OUTPUTS[`${copy.from} ${source}`];
      assert.ok(local !== undefined, `no local stand-in for COPY --from=${copy.from} ${source}: add one here`);
      if (local === 'node_modules') symlinkSync(join(ROOT, local), dest);
      else cpSync(join(ROOT, local), dest, { recursive: true });
    }
  }
  return app;
}

// The sidecar reads proto/ beside dist/ for its gRPC API and external validators: an image
// without it crashes at start with --grpc, and fails every validator call closed.
test(
  'the image holds what the build reads at run time: gRPC and a validator work from it',
  { timeout: 120_000 },
  async () => {
    const app = imageApp();
    const [upstream, validator] = await Promise.all([startPolicyServer(), startValidator({ quiet: true })]);
    const key = 'image-key-5f0c9e2b7d4a1e8c3b6f';
    writeFileSync(join(app, 'keys.yaml'), `keys:\n  - { sha256: ${sha256(key)}, principal: alice, scopes: [docs] }\n`);
    writeFileSync(
      join(app, 'policy.yaml'),
      'version: 1\nauthentication:\n  staticKeys: { file: keys.yaml }\n' +
        'grants:\n  - { principal: "*", tool: search_docs, scopes: [docs], effect: allow }\n' +
        `validators:\n  - { name: pii, target: "${validator.target}", hooks: [{ event: tools/call, phase: request }], timeoutMs: 2000 }\n`,
    );
    let gate: ToolgateProcess | undefined;
    try {
      gate = await startToolgateProcess(
        upstream.origin,
        ['--policy-file', join(app, 'policy.yaml'), '--grpc', 'true', '--grpc-port', String(await freePort())],
        { cli: join(app, 'dist/cli.js') },
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
    } finally {
      await gate?.close();
      await Promise.all([upstream.close(), validator.close()]);
      rmSync(join(app, '..'), { recursive: true, force: true });
    }
  },
);
