import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { targetRouter, underPrefix } from '../../../src/mcp/target.ts';

const route = targetRouter('/mcp');

describe('targetRouter', () => {
  it('takes the MCP path itself, and its query, as the endpoint', () => {
    assert.deepEqual(route('/mcp'), { ok: true, kind: 'mcp', target: '/mcp', path: '/mcp' });
    assert.deepEqual(route('/mcp?session=1'), { ok: true, kind: 'mcp', target: '/mcp?session=1', path: '/mcp' });
  });

  it('routes to the endpoint every spelling a lenient server would, and forwards the plain MCP path', () => {
    const spellings = [
      '/MCP',
      '/Mcp/',
      '/mcp/',
      '/mcp//',
      '//mcp',
      '/./mcp',
      '/x/../mcp',
      '/mcp/.',
      '/a/b/../../mcp',
      '/%6Dcp',
      '/%6dcp',
      '/mcp;jsessionid=1',
      '/mcp;a/',
      'http://evil.example/mcp',
      'HTTPS://evil.example:8443/MCP/',
    ];
    for (const target of spellings) {
      assert.deepEqual(route(target), { ok: true, kind: 'mcp', target: '/mcp', path: '/mcp' }, target);
    }
    assert.deepEqual(route('http://evil.example/mcp?x=1'), { ok: true, kind: 'mcp', target: '/mcp?x=1', path: '/mcp' });
  });

  it('normalises other paths before they are forwarded, the query left as it came', () => {
    const cases: [string, string][] = [
      ['/.well-known/oauth-protected-resource?x=%2F', '/.well-known/oauth-protected-resource?x=%2F'],
      ['/a//b/./c/../d', '/a/b/d'],
      ['/a/b/..', '/a/'],
      ['/%7euser/%3a', '/~user/%3A'],
      ['/mcpx', '/mcpx'],
      ['/mcp/messages', '/mcp/messages'],
      ['/..', '/'],
      ['http://h', '/'],
      ['http://h?q', '/?q'],
    ];
    for (const [target, forwarded] of cases) {
      const r = route(target);
      assert.ok(r.ok && r.kind === 'other', target);
      assert.equal(r.target, forwarded, target);
    }
  });

  it('refuses targets servers disagree on, without throwing', () => {
    for (const target of [
      '/mcp%2F',
      '/mcp%2f',
      '/x%2F..%2Fmcp',
      '/%2e%2e/mcp',
      '/mcp%5C',
      '/mcp\\',
      '/\\mcp',
      '/mcp%',
      '/mcp%4',
      '/mcp%zz',
      '*',
      '',
      'mcp',
      '/mcp#frag',
    ]) {
      assert.deepEqual(route(target), { ok: false, code: 'invalid_path' }, JSON.stringify(target));
    }
  });

  it('compares with an MCP path configured in another case or with a trailing slash', () => {
    const odd = targetRouter('/API/Mcp/');
    assert.deepEqual(odd('/api/mcp'), { ok: true, kind: 'mcp', target: '/API/Mcp/', path: '/API/Mcp/' });
    assert.equal((odd('/api') as { kind: string }).kind, 'other');
  });
});

describe('underPrefix', () => {
  it('a prefix ending in a slash covers what is below it; one without covers itself too, never a longer name', () => {
    assert.ok(underPrefix('/.well-known/oauth-protected-resource', '/.well-known/'));
    assert.ok(!underPrefix('/.well-known', '/.well-known/'));
    assert.ok(underPrefix('/health', '/health'));
    assert.ok(underPrefix('/health/live', '/health'));
    assert.ok(!underPrefix('/healthz', '/health'));
  });
});
