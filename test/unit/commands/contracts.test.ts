import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../../src/commands/contracts.ts';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await run(argv, {
    env: {},
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
  });
  return { code, out, err };
}

describe('toolgate contracts refuses bad invocations with one line and status 2', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolgate-contracts-cli-'));
    await writeFile(
      join(dir, 'tools.json'),
      JSON.stringify({ tools: [{ name: 'weather', description: 'Forecast', inputSchema: { type: 'object' } }] }),
    );
    await writeFile(join(dir, 'broken.json'), '{"tools": [');
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const cases: [string, string[], RegExp][] = [
    ['no action', [], /^toolgate contracts: usage:/],
    ['an unknown action', ['pin'], /usage:/],
    ['diff without a tool', ['diff', '--catalog', 'x'], /usage:/],
    ['an unknown flag', ['list', '--catalogue', 'x'], /unknown argument "--catalogue"/],
    ['--format outside lint', ['list', '--format', 'json'], /--format does not apply/],
    ['no catalogue source', ['list'], /give --catalog FILE or --upstream ORIGIN \(or TOOLGATE_UPSTREAM\)/],
    [
      'both catalogue sources',
      ['lint', '--catalog', 'a', '--upstream', 'http://127.0.0.1:1'],
      /one of --catalog FILE or --upstream ORIGIN, not both/,
    ],
    [
      'a non-http upstream',
      ['lint', '--upstream', 'file:///etc/passwd'],
      /invalid setting --upstream: expected an http:\/\/ or https:\/\/ URL/,
    ],
    [
      'a path given twice',
      ['list', '--upstream', 'http://127.0.0.1:1/mcp', '--mcp-path', '/mcp'],
      /give its path with --mcp-path only/,
    ],
    [
      'a bad MCP path',
      ['list', '--upstream', 'http://127.0.0.1:1', '--mcp-path', 'mcp'],
      /invalid setting --mcp-path: expected an absolute path/,
    ],
    ['an unknown format', ['lint', '--catalog', 'x', '--format', 'yaml'], /--format must be text or json/],
    [
      'approve without Redis',
      ['approve', 'weather', 'a'.repeat(64)],
      /approve writes the shared pins and needs --redis-url/,
    ],
  ];
  for (const [what, argv, message] of cases) {
    it(`refuses ${what}`, async () => {
      const r = await cli(...argv);
      assert.equal(r.code, 2);
      assert.equal(r.out, '');
      assert.match(r.err, message);
      assert.equal(r.err.trim().split('\n').length, 1);
    });
  }

  it('refuses a catalogue file that is not JSON, without echoing it', async () => {
    const r = await cli('lint', '--catalog', join(dir, 'broken.json'));
    assert.equal(r.code, 2);
    assert.equal(r.err, `toolgate contracts: --catalog ${join(dir, 'broken.json')}: not valid JSON\n`);
  });

  it('refuses a digest that is not 64 hex digits', async () => {
    const r = await cli(
      'approve',
      'weather',
      'XYZ',
      '--catalog',
      join(dir, 'tools.json'),
      '--redis-url',
      'redis://127.0.0.1:1',
      '--domain',
      'd',
      '--redis-connect-timeout-ms',
      '200',
    );
    assert.equal(r.code, 2);
    assert.match(r.err, /DIGEST must be 64 lower-case hex digits/);
    assert.ok(!r.err.includes('XYZ'));
  });

  it('lists a saved catalogue without Redis: every tool unknown, with its digest', async () => {
    const r = await cli('list', '--catalog', join(dir, 'tools.json'));
    assert.equal(r.code, 0, r.err);
    const row = JSON.parse(r.out) as { tool: string; digest: string; status: string };
    assert.equal(row.tool, 'weather');
    assert.match(row.digest, /^[0-9a-f]{64}$/);
    assert.equal(row.status, 'unknown');
  });
});
