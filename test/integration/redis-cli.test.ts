import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/commands/grants.ts';
import { startRedis, type RedisServer } from '../helpers/redis.ts';

let redis: RedisServer;
let dir: string;

function io(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { env, stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } },
  };
}

before(async () => {
  redis = await startRedis(['--requirepass', 'hunter2-secret']);
  dir = mkdtempSync(join(tmpdir(), 'toolgate-grants-cli-'));
  writeFileSync(join(dir, 'password'), 'hunter2-secret\n');
});

after(async () => {
  await redis?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('toolgate grants', () => {
  it('writes require_approval rows beside the plain allow row, with their rule, and refuses approval flags on other effects', async () => {
    const common = [
      '--redis-url',
      `redis://127.0.0.1:${redis.port}`,
      '--redis-password-file',
      join(dir, 'password'),
      '--domain',
      'cli-approval',
    ];
    const a = io();
    assert.equal(
      await run(
        ['set', ...common, '--principal', '*', '--tool', 'refund', '--effect', 'allow', '--scopes', 'pay'],
        a.io,
      ),
      0,
    );
    assert.equal(
      await run(
        [
          'set',
          ...common,
          '--principal',
          '*',
          '--tool',
          'refund',
          '--effect',
          'require_approval',
          '--scopes',
          'pay',
          '--approver-scope',
          'pay.approve',
          '--expires-in',
          '2m',
          '--self-approval',
        ],
        a.io,
      ),
      0,
      a.err.join(''),
    );
    const l = io();
    assert.equal(await run(['list', ...common, '--tool', 'refund'], l.io), 0);
    const rows = l.out.map((x) => JSON.parse(x) as Record<string, unknown>);
    assert.equal(rows.length, 2, 'the approval row stands beside the allow row');
    assert.deepEqual(rows.find((r) => r.approval !== undefined)?.approval, {
      approverScope: 'pay.approve',
      expiresIn: 120,
      selfApproval: true,
    });
    for (const bad of [
      ['--effect', 'require_approval'],
      ['--effect', 'allow', '--approver-scope', 'pay.approve'],
      ['--effect', 'deny', '--expires-in', '2m'],
    ]) {
      const b = io();
      assert.equal(
        await run(['set', ...common, '--principal', '*', '--tool', 'refund', ...bad], b.io),
        2,
        bad.join(' '),
      );
      assert.match(b.err.join(''), /require_approval/);
    }
    const bounds = io();
    assert.equal(
      await run(
        [
          'set',
          ...common,
          '--principal',
          '*',
          '--tool',
          'refund',
          '--effect',
          'require_approval',
          '--approver-scope',
          'pay.approve',
          '--expires-in',
          '5s',
        ],
        bounds.io,
      ),
      2,
    );
    assert.match(bounds.err.join(''), /invalid row/);
    const d = io();
    assert.equal(
      await run(
        [
          'delete',
          ...common,
          '--principal',
          '*',
          '--tool',
          'refund',
          '--effect',
          'require_approval',
          '--scopes',
          'pay',
          '--approver-scope',
          'pay.approve',
        ],
        d.io,
      ),
      0,
    );
    assert.match(d.out.join(''), /"deleted":true/);
  });

  it('sets, lists as JSON lines, deletes and reports the revision, with the password from a secret file', async () => {
    const common = [
      '--redis-url',
      `redis://127.0.0.1:${redis.port}`,
      '--redis-password-file',
      join(dir, 'password'),
      '--domain',
      'cli',
    ];
    const a = io();
    assert.equal(
      await run(
        ['set', ...common, '--principal', '*', '--tool', 'search', '--effect', 'allow', '--scopes', 'read,beta'],
        a.io,
      ),
      0,
    );
    assert.equal(await run(['set', ...common, '--principal', 'bob', '--tool', 'search', '--effect', 'deny'], a.io), 0);
    assert.deepEqual(a.out, ['{"revision":1}\n', '{"revision":2}\n']);

    const l = io();
    assert.equal(await run(['list', ...common], l.io), 0);
    assert.deepEqual(
      l.out.map((x) => JSON.parse(x)),
      [
        { principal: '*', tool: 'search', scopes: ['beta', 'read'], effect: 'allow', revision: 1 },
        { principal: 'bob', tool: 'search', scopes: [], effect: 'deny', revision: 2 },
      ],
    );
    const filtered = io();
    assert.equal(await run(['list', ...common, '--principal', 'bob', '--tool', 'search'], filtered.io), 0);
    assert.equal(filtered.out.length, 1);

    const d = io();
    assert.equal(
      await run(['delete', ...common, '--principal', 'bob', '--tool', 'search', '--effect', 'deny'], d.io),
      0,
    );
    assert.equal(await run(['revision', ...common], d.io), 0);
    assert.equal(await run(['revision', ...common, '--bump'], d.io), 0);
    assert.deepEqual(d.out, ['{"deleted":true,"revision":3}\n', '{"revision":3}\n', '{"revision":4}\n']);
  });

  it('takes the URL and domain from the environment', async () => {
    const e = io({
      TOOLGATE_REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${redis.port}`,
      TOOLGATE_POLICY_DOMAIN: 'cli',
    });
    assert.equal(await run(['revision'], e.io), 0);
    assert.deepEqual(e.out, ['{"revision":4}\n']);
  });

  it('revision --reset moves the revision past any a replica can have confirmed (after Redis lost data)', async () => {
    const e = io({ TOOLGATE_REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${redis.port}` });
    const before = Date.now();
    assert.equal(await run(['revision', '--domain', 'reset', '--reset'], e.io), 0);
    assert.equal(await run(['revision', '--domain', 'reset', '--reset'], e.io), 0);
    const [first, second] = e.out.map((line) => (JSON.parse(line) as { revision: number }).revision);
    assert.ok(first !== undefined && first >= before);
    assert.ok(second !== undefined && second > first, 'still monotonic when run twice');
    const both = io({ TOOLGATE_REDIS_URL: `redis://:hunter2-secret@127.0.0.1:${redis.port}` });
    assert.equal(await run(['revision', '--domain', 'reset', '--reset', '--bump'], both.io), 2);
  });

  it('every error is one line on stderr, exit 2, and never shows the password', async () => {
    const url = `redis://user:hunter2-secret@127.0.0.1:${redis.port}`;
    const cases: string[][] = [
      [],
      ['grant'],
      ['set', '--redis-url', url, '--domain', 'cli', '--principal', 'bob', '--tool', 't'],
      ['set', '--redis-url', url, '--domain', 'cli', '--principal', 'bob', '--tool', 't', '--effect', 'maybe'],
      [
        'set',
        '--redis-url',
        url,
        '--domain',
        'cli',
        '--principal',
        'bob',
        '--tool',
        't',
        '--effect',
        'allow',
        '--scopes',
        'x',
      ],
      ['list', '--redis-url', url, '--domain', 'no}pe'],
      ['list', '--redis-url', url, '--domain', 'cli', '--effect', 'allow'],
      ['revision', '--redis-url', 'http://user:hunter2-secret@h', '--domain', 'cli'],
      ['revision', '--redis-url', url, '--domain', 'cli'],
      [
        'revision',
        '--redis-url',
        'redis://:hunter2-secret@127.0.0.1:1',
        '--domain',
        'cli',
        '--redis-connect-timeout-ms',
        '200',
      ],
    ];
    for (const argv of cases) {
      const x = io();
      assert.equal(await run(argv, x.io), 2, argv.join(' '));
      assert.equal(x.out.length, 0);
      assert.equal(x.err.length, 1);
      assert.match(x.err[0] as string, /^toolgate grants: [^\n]+\n$/);
      assert.doesNotMatch(x.err[0] as string, /hunter2/);
    }
  });
});
