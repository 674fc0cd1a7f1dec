import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../../../../src/commands/contracts.ts';
import { hasHigh, lintTool, RULE_IDS, summarize } from '../../../../src/catalogue/lint/lint.ts';
import { POISONED } from '../../../fixtures/contracts/poisoned.ts';
import { corpus } from '../../../helpers/testdata.ts';


describe('description lint on poisoned descriptions written after public attack write-ups', () => {
  it('has at least 30 of them, every one with a source', () => {
    assert.ok(POISONED.length >= 30);
    for (const p of POISONED) assert.ok(p.source.length > 10, p.id);
  });

  it('catches every hidden-Unicode and instruction-tag one with a high finding', () => {
    const missed = POISONED.filter((p) => (p.kind === 'hidden' || p.kind === 'tag') && !hasHigh(lintTool(p.tool))).map((p) => p.id);
    assert.deepEqual(missed, []);
  });

  it('catches at least 80% overall', () => {
    const caught = POISONED.filter((p) => hasHigh(lintTool(p.tool))).length;
    assert.ok(caught / POISONED.length >= 0.8, `${caught} of ${POISONED.length}`);
  });

  it('names rules and pointers, never the text', () => {
    const findings = lintTool((POISONED[0] as (typeof POISONED)[number]).tool);
    assert.ok(findings.length > 0);
    for (const f of findings) {
      assert.ok(RULE_IDS.includes(f.rule));
      assert.match(f.pointer, /^\/(description|title|name|inputSchema|outputSchema|annotations)/);
      assert.deepEqual(Object.keys(f).sort(), ['pointer', 'rule', 'severity']);
    }
  });
});

describe('description lint on honest text', () => {
  const honest = [
    'IMPORTANT: Always use absolute paths for reliability.',
    "You MUST call 'resolve-library-id' before 'get-library-docs' to obtain a valid library ID.",
    "Use this instead of 'execute_command' with grep/find for searching code content.",
    'Provide your API key via the api_key parameter, or set the SERVICE_API_KEY environment variable.',
    'Reads the complete contents of a file and returns it as text.',
    'Sends an email. The recipient is given as an address, e.g. user@example.com.',
    'Renders HTML such as <b>bold</b> and <br> line breaks; fails silently on unknown tags.',
    'Ignore robots.txt when crawling (default false).',
    'مرحبا\u200f بالعالم: translate the Arabic greeting. 👩\u200d💻 is one emoji.',
    'x'.repeat(5000),
  ];
  for (const description of honest) {
    it(`finds nothing high in ${JSON.stringify(description.slice(0, 50))}`, () => {
      assert.equal(hasHigh(lintTool({ name: 'tool', description })), false, JSON.stringify(lintTool({ name: 'tool', description })));
    });
  }

  it('flags an oversize description as medium, never high', () => {
    const findings = lintTool({ name: 'long', description: 'An honest sentence. '.repeat(400) });
    assert.deepEqual(findings.map((f) => [f.rule, f.severity]), [['oversize-description', 'medium']]);
  });
});

describe('description lint on a real catalogue', () => {
  const livemcpbench = corpus('livemcpbench');
  const catalog = join(livemcpbench.path, 'catalog.json');
  it('finds at most 5 tools with a high finding among the 527 of LiveMCPBench', { skip: livemcpbench.skip }, () => {
    const tools = JSON.parse(readFileSync(catalog, 'utf8')) as Record<string, unknown>[];
    const summary = summarize(tools.map((t) => lintTool(t)));
    assert.equal(summary.tools, 527);
    assert.ok(summary.high <= 5, JSON.stringify(summary));
  });

  it('`contracts lint --catalog FILE --format json` prints the summary as its last line', { skip: livemcpbench.skip }, async () => {
    let out = '';
    const code = await run(['lint', '--catalog', catalog, '--format', 'json'], { env: {}, stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true } });
    const last = JSON.parse(out.trim().split('\n').at(-1) as string) as { tools: number; high: number; findings_by_rule: Record<string, number> };
    assert.equal(code, last.high > 0 ? 1 : 0);
    assert.equal(last.tools, 527);
    assert.equal(typeof last.high, 'number');
    assert.deepEqual(Object.keys(last.findings_by_rule).sort(), [...RULE_IDS].sort());
  });
});
