import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStaticKeyVerifier, loadStaticKeys, parseStaticKeys } from '../../../src/auth/static-keys.ts';
import type { StaticKeyTable } from '../../../src/auth/static-keys.ts';
import { bearer } from './fixtures.ts';

const KEY_A = 'tg_live_4f9a1c2e8b7d6a5f3e2d1c0b9a8f7e6d';
const KEY_B = 'tg_live_0000aaaabbbbccccddddeeeeffff1111';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

const FILE = `
keys:
  - sha256: ${sha(KEY_A)}
    principal: agent-billing
    scopes: [invoices.read, invoices.write]
    description: billing agent, rotated quarterly
  - sha256: ${sha(KEY_B)}
    principal: agent-reports
`;

function table(): StaticKeyTable {
  const r = parseStaticKeys(FILE);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  return r.table;
}

test('the documented hash command matches the lookup hash', () => {
  const out = execFileSync('sh', ['-c', 'printf %s "$KEY" | sha256sum'], {
    env: { KEY: KEY_A, PATH: process.env.PATH },
  }).toString();
  assert.equal(out.split(' ')[0], sha(KEY_A));
});

test('a listed key becomes its principal with static strength', async () => {
  const r = await createStaticKeyVerifier(table()).verify(bearer(KEY_A));
  assert.ok(r.ok);
  assert.equal(r.principal.id, 'agent-billing');
  assert.deepEqual([...r.principal.scopes].sort(), ['invoices.read', 'invoices.write']);
  assert.equal(r.principal.credentialStrength, 'static');
  const b = await createStaticKeyVerifier(table()).verify(bearer(KEY_B));
  assert.ok(b.ok);
  assert.equal(b.principal.id, 'agent-reports');
  assert.equal(b.principal.scopes.size, 0);
});

test('a key verified before answers the same from memory, and never lets a near miss through', async () => {
  const v = createStaticKeyVerifier(table());
  const first = await v.verify(bearer(KEY_A));
  const again = await v.verify(bearer(KEY_A));
  assert.ok(first.ok && again.ok);
  assert.equal(again.principal, first.principal);
  assert.deepEqual(await v.verify(bearer(`${KEY_A}x`)), { ok: false, code: 'bad_credential' });
  assert.deepEqual(await v.verify(bearer(KEY_A.slice(0, -1))), { ok: false, code: 'bad_credential' });
  for (let i = 0; i < 1100; i++) await v.verify(bearer(`tg_live_guess_${i}`));
  assert.ok((await v.verify(bearer(KEY_B))).ok, 'guesses do not crowd out real keys');
});

test('scheme is case-insensitive and extra spaces are tolerated', async () => {
  const v = createStaticKeyVerifier(table());
  assert.equal((await v.verify({ headers: { authorization: `bearer  ${KEY_A}` } })).ok, true);
  assert.equal((await v.verify({ authorization: `BEARER ${KEY_A}`, headers: {} })).ok, true);
});

test('once a key has verified, every other spelling and field of the request is still read as before', async () => {
  const v = createStaticKeyVerifier(table(), { apiKeyHeader: true });
  assert.ok((await v.verify({ headers: { authorization: `bearer   ${KEY_A}` } })).ok);
  assert.ok((await v.verify(bearer(KEY_A))).ok, 'the canonical spelling, from memory');
  // Both fields at once is malformed, however well the Authorization header is known.
  assert.deepEqual(await v.verify({ headers: { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_B } }), {
    ok: false,
    code: 'no_credential',
  });
  assert.deepEqual(await v.verify({ authorization: `Bearer ${KEY_A}`, headers: { 'x-api-key': KEY_A } }), {
    ok: false,
    code: 'no_credential',
  });
  assert.deepEqual(
    await v.verify(bearer(`${KEY_A} `)),
    await createStaticKeyVerifier(table()).verify(bearer(`${KEY_A} `)),
  );
  assert.deepEqual(await v.verify({ headers: { authorization: `Bearer  ${KEY_A}x` } }), {
    ok: false,
    code: 'bad_credential',
  });
  assert.deepEqual(await v.verify({ headers: { authorization: [`Bearer ${KEY_A}`] } }), {
    ok: false,
    code: 'no_credential',
  });
});

const cases: [string, Parameters<ReturnType<typeof createStaticKeyVerifier>['verify']>[0], string][] = [
  ['unknown key', bearer('tg_live_not_a_real_key'), 'bad_credential'],
  ['key with a changed last character', bearer(`${KEY_A.slice(0, -1)}e`), 'bad_credential'],
  ['JWT-shaped bearer is left to the JWT verifier', bearer('aaa.bbb.ccc'), 'no_credential'],
  ['no credential', { headers: {} }, 'no_credential'],
  ['X-Api-Key while the header is off', { headers: { 'x-api-key': KEY_A } }, 'no_credential'],
  [
    'Basic scheme',
    { headers: { authorization: `Basic ${Buffer.from(`u:${KEY_A}`).toString('base64')}` } },
    'no_credential',
  ],
  [
    'both Authorization and X-Api-Key',
    { headers: { authorization: `Bearer ${KEY_A}`, 'x-api-key': KEY_A } },
    'no_credential',
  ],
];
for (const [name, req, code] of cases) {
  test(`static key: ${name} → ${code}`, async () => {
    assert.deepEqual(await createStaticKeyVerifier(table()).verify(req), { ok: false, code });
  });
}

test('X-Api-Key is accepted only when enabled', async () => {
  const v = createStaticKeyVerifier(table(), { apiKeyHeader: true });
  const ok = await v.verify({ headers: { 'x-api-key': KEY_B } });
  assert.ok(ok.ok);
  assert.equal(ok.principal.id, 'agent-reports');
  assert.deepEqual(await v.verify({ headers: { 'x-api-key': 'nope' } }), { ok: false, code: 'bad_credential' });
  assert.deepEqual(await v.verify({ headers: { 'x-api-key': [KEY_B, KEY_B] } }), { ok: false, code: 'no_credential' });
});

const badFiles: [string, string, string][] = [
  ['upper-case hash', `keys: [{sha256: "${sha(KEY_A).toUpperCase()}", principal: a}]`, '/keys/0/sha256'],
  ['raw key instead of hash', `keys: [{sha256: "${KEY_A}", principal: a}]`, '/keys/0/sha256'],
  ['missing principal', `keys: [{sha256: "${sha(KEY_A)}"}]`, '/keys/0/principal'],
  ['wildcard principal', `keys: [{sha256: "${sha(KEY_A)}", principal: "*"}]`, '/keys/0/principal'],
  ['unknown field', `keys: [{sha256: "${sha(KEY_A)}", principal: a, key: x}]`, '/keys/0/key'],
  ['bad scope', `keys: [{sha256: "${sha(KEY_A)}", principal: a, scopes: ["a b"]}]`, '/keys/0/scopes/0'],
  [
    'duplicate hash',
    `keys: [{sha256: "${sha(KEY_A)}", principal: a}, {sha256: "${sha(KEY_A)}", principal: b}]`,
    '/keys/1/sha256',
  ],
  ['no keys list', 'entries: []', '/keys'],
];
for (const [name, text, path] of badFiles) {
  test(`key file rejected: ${name}, at ${path}, without echoing values`, () => {
    const r = parseStaticKeys(text);
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.errors.some((e) => e.path === path), JSON.stringify(!r.ok && r.errors));
    assert.ok(!JSON.stringify(r).includes(KEY_A));
  });
}

test('a YAML syntax error reports line and column, never the source text', () => {
  const r = parseStaticKeys(`keys:\n  - sha256: "${KEY_A}\n    principal: [a\n`);
  assert.equal(r.ok, false);
  const text = JSON.stringify(r);
  assert.ok(!text.includes(KEY_A) && !text.includes('tg_live'));
  assert.match(text, /line \d+, column \d+/);
});

test('loadStaticKeys reads JSON files and reports unreadable ones by path and errno', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tg-keys-'));
  const file = join(dir, 'keys.json');
  await writeFile(file, JSON.stringify({ keys: [{ sha256: sha(KEY_A), principal: 'agent-json' }] }));
  const r = await loadStaticKeys(file);
  assert.ok(r.ok);
  assert.equal(r.table.get(sha(KEY_A))?.principal.id, 'agent-json');
  const missing = await loadStaticKeys(join(dir, 'absent.yaml'));
  assert.deepEqual(missing, {
    ok: false,
    errors: [{ path: '', message: `read: cannot read the static key file ${join(dir, 'absent.yaml')} (ENOENT)` }],
  });
});
