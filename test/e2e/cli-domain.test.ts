import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadSettings } from '../../src/config/settings.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

const CLI = join(import.meta.dirname, '../../src/cli.ts');
/** No TOOLGATE_* variable from the outer environment may choose a domain. */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLGATE_')));
const toolgate = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: ENV });

let redis: RedisServer;
let dir: string;
before(async () => {
  redis = await startRedis();
  dir = mkdtempSync(join(tmpdir(), 'toolgate-domain-'));
});
after(async () => {
  await redis.close();
  rmSync(dir, { recursive: true, force: true });
});

test("grants, approvals and contracts without --domain work in the sidecar's default domain", () => {
  const sidecar = loadSettings([], {}).policyDomain;
  const set = toolgate(
    'grants',
    'set',
    '--redis-url',
    redis.url,
    '--principal',
    'alice',
    '--tool',
    'get_weather',
    '--effect',
    'allow',
  );
  assert.equal(set.status, 0, set.stderr);
  const listed = toolgate('grants', 'list', '--redis-url', redis.url, '--domain', sidecar);
  assert.equal(listed.status, 0, listed.stderr);
  assert.match(listed.stdout, /"principal":"alice","tool":"get_weather",.*"effect":"allow"/);

  const approvals = toolgate('approvals', 'list', '--redis-url', redis.url);
  assert.equal(approvals.status, 0, approvals.stderr);
  assert.equal(approvals.stdout, '');

  const catalog = join(dir, 'tools.json');
  writeFileSync(catalog, JSON.stringify({ tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }] }));
  const approve = toolgate('contracts', 'approve', 'get_weather', '--catalog', catalog, '--redis-url', redis.url);
  assert.equal(approve.status, 0, approve.stderr);
  const pins = toolgate('contracts', 'list', '--catalog', catalog, '--redis-url', redis.url, '--domain', sidecar);
  assert.equal(pins.status, 0, pins.stderr);
  assert.match(pins.stdout, /"tool":"get_weather".*"pinnedBy":"operator"/);
});
