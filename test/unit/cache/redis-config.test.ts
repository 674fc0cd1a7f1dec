import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisConfig, redisOptions, REDIS_SETTINGS } from '../../../src/cache/redis.ts';

const noFiles = (): string => {
  throw new Error('no such file');
};

describe('parseRedisConfig', () => {
  it('reads a standalone URL with ACL user, password and database', () => {
    const r = parseRedisConfig({ url: 'redis://app:s%40cret@cache.example:6380/3' }, noFiles);
    assert.ok(r.ok);
    assert.equal(r.config.mode, 'standalone');
    assert.deepEqual(r.config.nodes, [{ host: 'cache.example', port: 6380 }]);
    assert.equal(r.config.username, 'app');
    assert.equal(r.config.password, 's@cret');
    assert.equal(r.config.db, 3);
    assert.equal(r.config.tls, false);
    assert.ok(Object.isFrozen(r.config));
  });

  it('reads sentinel and cluster host lists, TLS schemes and IPv6 literals', () => {
    const s = parseRedisConfig({ url: 'rediss+sentinel://10.0.0.1,10.0.0.2:26380/mymaster' }, noFiles);
    assert.ok(s.ok);
    assert.equal(s.config.mode, 'sentinel');
    assert.equal(s.config.tls, true);
    assert.equal(s.config.masterName, 'mymaster');
    assert.deepEqual(s.config.nodes, [
      { host: '10.0.0.1', port: 26379 },
      { host: '10.0.0.2', port: 26380 },
    ]);
    const c = parseRedisConfig({ url: 'redis+cluster://[::1]:7000,node-b:7001' }, noFiles);
    assert.ok(c.ok);
    assert.equal(c.config.mode, 'cluster');
    assert.deepEqual(c.config.nodes, [
      { host: '::1', port: 7000 },
      { host: 'node-b', port: 7001 },
    ]);
  });

  it('takes the password from a secret file over the URL, trimming one newline', () => {
    const r = parseRedisConfig(
      { url: 'redis://:fromurl@h', passwordFile: '/secret', username: 'svc' },
      () => 'fromfile\n',
    );
    assert.ok(r.ok);
    assert.equal(r.config.password, 'fromfile');
    assert.equal(r.config.username, 'svc');
  });

  it('names the setting and never echoes the URL or a password', () => {
    const cases: [Parameters<typeof parseRedisConfig>[0], string][] = [
      [{ url: 'http://user:hunter2@h' }, REDIS_SETTINGS.url],
      [{ url: 'redis://user:hunter2@a,b' }, REDIS_SETTINGS.url],
      [{ url: 'redis+sentinel://user:hunter2@a' }, REDIS_SETTINGS.url],
      [{ url: 'redis+cluster://user:hunter2@a/1' }, REDIS_SETTINGS.url],
      [{ url: 'redis://user:hunter2@h:99999' }, REDIS_SETTINGS.url],
      [{ url: 'redis://user:%zz@h' }, REDIS_SETTINGS.url],
      [{ url: 'redis://h', passwordFile: '/missing' }, REDIS_SETTINGS.passwordFile],
      [{ url: 'redis://h', tlsCaFile: '/ca.pem' }, REDIS_SETTINGS.tlsCaFile],
      [{ url: 'redis://h', commandTimeoutMs: 0 }, REDIS_SETTINGS.commandTimeoutMs],
      [{ url: 'redis://h', connectTimeoutMs: 1.5 }, REDIS_SETTINGS.connectTimeoutMs],
    ];
    for (const [input, setting] of cases) {
      const r = parseRedisConfig(input, noFiles);
      assert.ok(!r.ok, input.url);
      assert.equal(r.setting, setting, input.url);
      assert.doesNotMatch(r.problem, /hunter2|user/);
    }
  });

  it('refuses a multi-line password file and a CA file without a certificate', () => {
    const p = parseRedisConfig({ url: 'redis://h', passwordFile: '/s' }, () => 'a\nb\n');
    assert.ok(!p.ok);
    assert.doesNotMatch(p.problem, /a\nb/);
    const ca = parseRedisConfig({ url: 'rediss://h', tlsCaFile: '/ca' }, () => 'not pem');
    assert.ok(!ca.ok);
    assert.equal(ca.setting, REDIS_SETTINGS.tlsCaFile);
  });
});

describe('redisOptions', () => {
  it('fails fast: no offline queue, one retry, command and connect deadlines, TLS when asked', () => {
    const r = parseRedisConfig(
      { url: 'rediss://h', commandTimeoutMs: 250, connectTimeoutMs: 900, tlsCaFile: '/ca' },
      () => '-----BEGIN CERTIFICATE-----\nx\n',
    );
    assert.ok(r.ok);
    const o = redisOptions(r.config);
    assert.equal(o.enableOfflineQueue, false);
    assert.equal(o.maxRetriesPerRequest, 1);
    assert.equal(o.commandTimeout, 250);
    assert.equal(o.connectTimeout, 900);
    assert.ok(o.tls);
    assert.match(String(o.tls.ca), /BEGIN CERTIFICATE/);
    assert.ok(typeof o.retryStrategy === 'function' && (o.retryStrategy(100) as number) <= 1000);
  });
});
