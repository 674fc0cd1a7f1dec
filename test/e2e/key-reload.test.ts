import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../helpers/ports.ts';
import { sha256 } from '../helpers/static-keys.ts';
import { waitFor } from '../helpers/wait.ts';
import { AUDIENCE, ISSUER, keyPair, sign, type KeyPair } from '../unit/auth/fixtures.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
/** Generous, for a loaded machine; the watcher is expected far sooner. */
const PICKED_UP_MS = 30_000;

/**
 * A toolgate process whose policy lives in one directory and the key files
 * it names in two others, as outside Kubernetes (a Secret mounted apart from
 * the ConfigMap). Nothing listens upstream: a credential toolgate accepts is
 * answered with upstream_unavailable (a JSON-RPC error at HTTP 200: tools/list is no tool call), one it refuses 401.
 */
const root = mkdtempSync(join(tmpdir(), 'toolgate-key-reload-'));
const dirs = { policy: join(root, 'policy'), keys: join(root, 'keys'), jwks: join(root, 'jwks') };
const files = {
  policy: join(dirs.policy, 'policy.yaml'),
  keys: join(dirs.keys, 'keys.yaml'),
  jwks: join(dirs.jwks, 'jwks.json'),
};
let child: ReturnType<typeof spawn>;
let url: string;
let first: KeyPair;
let second: KeyPair;

const keysFile = (...keys: string[]) =>
  `keys:\n${keys.map((k, i) => `  - { sha256: ${sha256(k)}, principal: p${i} }\n`).join('')}`;
const jwksFile = (...pairs: KeyPair[]) => JSON.stringify({ keys: pairs.map((p) => p.publicJwk) });

before(async () => {
  for (const dir of Object.values(dirs)) mkdirSync(dir);
  [first, second] = [await keyPair('k1'), await keyPair('k2')];
  writeFileSync(files.keys, keysFile('old-key-1234567890'));
  writeFileSync(files.jwks, jwksFile(first));
  writeFileSync(
    files.policy,
    [
      'version: 1',
      'authentication:',
      `  staticKeys: { file: ${files.keys} }`,
      `  jwt: { issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksFile: ${files.jwks} }`,
      'grants:',
      '  - { principal: "*", tool: get_weather, effect: allow }',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  child = spawn(
    process.execPath,
    [
      CLI,
      '--policy-file',
      files.policy,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--admin-port',
      '0',
      '--upstream',
      'http://127.0.0.1:9',
      '--log-level',
      'error',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  await waitFor(
    async () => (await status('old-key-1234567890').catch(() => 0)) === 200,
    'toolgate listening with the first keys',
    PICKED_UP_MS,
  );
});
after(async () => {
  if (child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  rmSync(root, { recursive: true, force: true });
});

async function status(credential: string): Promise<number> {
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await r.arrayBuffer();
  return r.status;
}

test('a static key added to the key file, edited in place, is accepted without touching the policy', async () => {
  assert.equal(await status('new-key-0987654321'), 401);
  writeFileSync(files.keys, keysFile('old-key-1234567890', 'new-key-0987654321'));
  await waitFor(async () => (await status('new-key-0987654321')) === 200, 'the new static key accepted', PICKED_UP_MS);
  writeFileSync(files.keys, keysFile('new-key-0987654321'));
  await waitFor(
    async () => (await status('old-key-1234567890')) === 401,
    'the removed static key refused',
    PICKED_UP_MS,
  );
});

test('a signing key added to the JWKS file, replaced by a rename, is accepted without touching the policy', async () => {
  const token = await sign({ key: second, subject: 'bob' });
  assert.equal(await status(token), 401);
  writeFileSync(`${files.jwks}.tmp`, jwksFile(first, second));
  renameSync(`${files.jwks}.tmp`, files.jwks);
  await waitFor(async () => (await status(token)) === 200, 'a token of the new signing key accepted', PICKED_UP_MS);
});
