import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadSettings } from '../../../src/config/settings.ts';
import { SettingError } from '../../../src/errors.ts';

describe('settings', () => {
  it('has working defaults and is frozen', () => {
    const s = loadSettings([], {});
    assert.equal(s.port, 8080);
    assert.equal(s.adminPort, 9090);
    assert.equal(s.mcpPath, '/mcp');
    assert.equal(s.maxBodyBytes, 4 * 1024 * 1024);
    assert.equal(s.upstream.origin, 'http://127.0.0.1:3000');
    assert.ok(Object.isFrozen(s));
  });

  it('takes flags over environment over defaults; empty env counts as unset', () => {
    const env = { TOOLGATE_PORT: '7000', TOOLGATE_ADMIN_PORT: '', TOOLGATE_MCP_PATH: '/x' };
    const s = loadSettings(['--port=7100', '--upstream', 'https://mcp.internal:8443'], env);
    assert.equal(s.port, 7100);
    assert.equal(s.adminPort, 9090);
    assert.equal(s.mcpPath, '/x');
    assert.equal(s.upstream.origin, 'https://mcp.internal:8443');
  });

  it('takes a principal header field name, lower-cased, and none by default', () => {
    assert.equal(loadSettings([], {}).principalHeader, undefined);
    assert.equal(
      loadSettings(['--principal-header', 'X-Toolgate-Principal'], {}).principalHeader,
      'x-toolgate-principal',
    );
  });

  it('waits for replicas on one-time token records: auto by default, or a number', () => {
    assert.equal(loadSettings([], {}).redisReplayWaitReplicas, undefined);
    assert.equal(loadSettings(['--redis-replay-wait-replicas', '2'], {}).redisReplayWaitReplicas, 2);
    assert.equal(loadSettings([], { TOOLGATE_REDIS_REPLAY_WAIT_REPLICAS: '0' }).redisReplayWaitReplicas, 0);
  });

  it('bounds clients and upstream bodies by default; the connection cap is off', () => {
    const s = loadSettings([], {});
    assert.equal(s.clientHeadersTimeoutMs, 10_000);
    assert.equal(s.upstreamBodyIdleMs, 30_000);
    assert.equal(s.maxConnections, 0);
  });

  it('trims an idle heap after 5 s by default; 0 turns it off', () => {
    assert.equal(loadSettings([], {}).heapTrimIdleMs, 5000);
    assert.equal(loadSettings(['--heap-trim-idle-ms', '0'], {}).heapTrimIdleMs, 0);
    assert.equal(loadSettings([], { TOOLGATE_HEAP_TRIM_IDLE_MS: '60000' }).heapTrimIdleMs, 60_000);
  });

  const invalid: [string[], Record<string, string>, string][] = [
    [['--heap-trim-idle-ms', '500'], {}, '--heap-trim-idle-ms'],
    [[], { TOOLGATE_HEAP_TRIM_IDLE_MS: '-1' }, 'TOOLGATE_HEAP_TRIM_IDLE_MS'],
    [['--redis-replay-wait-replicas', 'some'], {}, '--redis-replay-wait-replicas'],
    [['--redis-replay-wait-replicas', '17'], {}, '--redis-replay-wait-replicas'],
    [[], { TOOLGATE_CLIENT_HEADERS_TIMEOUT_MS: '10' }, 'TOOLGATE_CLIENT_HEADERS_TIMEOUT_MS'],
    [[], { TOOLGATE_MAX_CONNECTIONS: '-1' }, 'TOOLGATE_MAX_CONNECTIONS'],
    [['--port', '70000'], {}, '--port'],
    [['--port', '12abc'], {}, '--port'],
    [[], { TOOLGATE_MAX_BODY_BYTES: '-1' }, 'TOOLGATE_MAX_BODY_BYTES'],
    [[], { TOOLGATE_UPSTREAM: 'ftp://x' }, 'TOOLGATE_UPSTREAM'],
    [['--upstream', 'http://user:pw@host:1'], {}, '--upstream'],
    [['--upstream', 'http://host:1/path'], {}, '--upstream'],
    [['--mcp-path', 'mcp'], {}, '--mcp-path'],
    [['--log-level', 'loud'], {}, '--log-level'],
    [['--nope', '1'], {}, '--nope'],
    [['--port'], {}, '--port'],
    [['serve'], {}, 'serve'],
    [['--principal-header', 'Authorization'], {}, '--principal-header'],
    [['--principal-header', 'mcp-name'], {}, '--principal-header'],
    [[], { TOOLGATE_PRINCIPAL_HEADER: 'x-forwarded-for' }, 'TOOLGATE_PRINCIPAL_HEADER'],
    [[], { TOOLGATE_PRINCIPAL_HEADER: 'Connection' }, 'TOOLGATE_PRINCIPAL_HEADER'],
    [[], { TOOLGATE_PRINCIPAL_HEADER: 'x user' }, 'TOOLGATE_PRINCIPAL_HEADER'],
    [[], { TOOLGATE_PRINCIPAL_HEADER: 'x-user:' }, 'TOOLGATE_PRINCIPAL_HEADER'],
  ];
  for (const [argv, env, setting] of invalid) {
    it(`names ${setting} when ${JSON.stringify([...argv, ...Object.values(env)])} is invalid`, () => {
      assert.throws(
        () => loadSettings(argv, env),
        (err: unknown) => {
          assert.ok(err instanceof SettingError);
          assert.equal(err.setting, setting);
          assert.ok(!err.message.includes('\n'));
          assert.ok(!err.message.includes('pw@'), 'never echoes credentials');
          return true;
        },
      );
    });
  }
});
