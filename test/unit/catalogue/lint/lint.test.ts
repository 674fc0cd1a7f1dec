import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../../../../src/commands/contracts.ts';
import { hasHigh, lintTool, RULE_IDS, scanText, summarize } from '../../../../src/catalogue/lint/lint.ts';
import { lintTexts } from '../../../../src/catalogue/lint/texts.ts';
import { HONEST_RESULTS, POISONED_RESULTS } from '../../../fixtures/contracts/honest-results.ts';
import { POISONED } from '../../../fixtures/contracts/poisoned.ts';
import { FRESH_ATTACKS, FRESH_BENIGN } from '../../../fixtures/contracts/fresh-phrasings.ts';
import { TAXONOMY_BENIGN, TAXONOMY_POISONED } from '../../../fixtures/contracts/taxonomy-set.ts';
import { corpus } from '../../../helpers/testdata.ts';

describe('description lint on poisoned descriptions written after public attack write-ups', () => {
  it('has at least 30 of them, every one with a source', () => {
    assert.ok(POISONED.length >= 30);
    for (const p of POISONED) assert.ok(p.source.length > 10, p.id);
  });

  it('catches every hidden-Unicode and instruction-tag one with a high finding', () => {
    const missed = POISONED.filter((p) => (p.kind === 'hidden' || p.kind === 'tag') && !hasHigh(lintTool(p.tool))).map(
      (p) => p.id,
    );
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

describe('description lint on a set written from the attack taxonomies, blind to the rules', () => {
  it('has at least 40 poisoned tools and 10 honest look-alikes, each with a source or a reason', () => {
    assert.ok(TAXONOMY_POISONED.length >= 40);
    assert.ok(TAXONOMY_BENIGN.length >= 10);
    for (const p of TAXONOMY_POISONED) assert.ok(p.source.length > 10, p.id);
    for (const b of TAXONOMY_BENIGN) assert.ok(b.why.length > 10, b.id);
    assert.equal(
      new Set([...TAXONOMY_POISONED, ...TAXONOMY_BENIGN].map((e) => e.id)).size,
      TAXONOMY_POISONED.length + TAXONOMY_BENIGN.length,
    );
  });

  it('catches every poisoned tool with a high finding (51 of 51; 24 before the class rules)', () => {
    const missed = TAXONOMY_POISONED.filter((p) => !hasHigh(lintTool(p.tool))).map((p) => `${p.class}/${p.id}`);
    assert.deepEqual(missed, []);
  });

  it('flags none of the honest look-alikes', () => {
    const flagged = TAXONOMY_BENIGN.filter((b) => hasHigh(lintTool(b.tool))).map(
      (b) => `${b.id}: ${JSON.stringify(lintTool(b.tool))}`,
    );
    assert.deepEqual(flagged, []);
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
    'Deletes the file without confirmation prompts when force=true.',
    'Use list_files before calling read_file.',
    'Overrides the default timeout.',
    'Password reset: sends the user a reset link.',
    'You should never delete files without asking the user first.',
    'Never run destructive commands without confirmation.',
    'Optional system prompt that overrides the default system prompt of the model.',
    'When the create_issue tool is used, labels are applied automatically.',
    "Enter the user's account number in the account_number field.",
    "Returns the user's portfolio holdings and balances.",
    'Sends an email to the given address, e.g. alice@example.com.',
    'Schedules a job to run starting tomorrow at 9:00; after 3 failed runs it is paused.',
    'After 100 requests per hour you must wait before calling again.',
    'This endpoint supersedes the v1 search API.',
    'Takes precedence over the config file settings.',
    'Ignore files matching the .gitignore patterns.',
    'Call get_schema before run_query to learn the table columns.',
    'Pass the id returned by search_items as the item_id parameter.',
    'Merges the pull request. The merge happens without further approval once checks pass.',
    'Stores the full conversation history of the session in memory for later retrieval.',
    'Contact support at help@example.com or +1 555 0100 for account issues.',
    'Fetch https://api.github.com/repos/{owner}/{repo}/issues to list issues.',
    "Transfers funds between the user's own accounts. Requires confirmation.",
  ];
  for (const description of honest) {
    it(`finds nothing high in ${JSON.stringify(description.slice(0, 50))}`, () => {
      assert.equal(
        hasHigh(lintTool({ name: 'tool', description })),
        false,
        JSON.stringify(lintTool({ name: 'tool', description })),
      );
    });
  }

  it('flags an oversize description as medium, never high', () => {
    const findings = lintTool({ name: 'long', description: 'An honest sentence. '.repeat(400) });
    assert.deepEqual(
      findings.map((f) => [f.rule, f.severity]),
      [['oversize-description', 'medium']],
    );
  });
});

describe('description lint on a real catalogue', () => {
  const livemcpbench = corpus('livemcpbench');
  const catalog = join(livemcpbench.path, 'catalog.json');
  it('finds no tool with a high finding among the 527 of LiveMCPBench', { skip: livemcpbench.skip }, () => {
    const tools = JSON.parse(readFileSync(catalog, 'utf8')) as Record<string, unknown>[];
    const summary = summarize(tools.map((t) => lintTool(t)));
    assert.equal(summary.tools, 527);
    assert.equal(summary.high, 0, JSON.stringify(summary));
  });

  it('trips no result rule on any of its strings read as a tool result', { skip: livemcpbench.skip }, () => {
    const tools = JSON.parse(readFileSync(catalog, 'utf8')) as Record<string, unknown>[];
    const strings = tools.flatMap((t) => lintTexts(t).map((x) => x.text));
    assert.ok(strings.length > 5000);
    const hits = strings.flatMap((s) => scanText(s).map((rule) => `${rule}: ${s.slice(0, 80)}`));
    assert.deepEqual(hits, []);
  });

  it(
    '`contracts lint --catalog FILE --format json` prints the summary as its last line',
    { skip: livemcpbench.skip },
    async () => {
      let out = '';
      const code = await run(['lint', '--catalog', catalog, '--format', 'json'], {
        env: {},
        stdout: { write: (s: string) => (out += s) },
        stderr: { write: () => true },
      });
      const last = JSON.parse(out.trim().split('\n').at(-1) as string) as {
        tools: number;
        high: number;
        findings_by_rule: Record<string, number>;
      };
      assert.equal(code, last.high > 0 ? 1 : 0);
      assert.equal(last.tools, 527);
      assert.equal(typeof last.high, 'number');
      assert.deepEqual(Object.keys(last.findings_by_rule).sort(), [...RULE_IDS].sort());
    },
  );
});

describe('the rules read as a result guard (scanText)', () => {
  for (const text of HONEST_RESULTS) {
    it(`trips nothing on ordinary output ${JSON.stringify(text.slice(0, 40))}`, () => {
      assert.deepEqual(scanText(text), []);
    });
  }

  it('still sees attacks placed in a result', () => {
    const missed = POISONED_RESULTS.filter((text) => scanText(text).length === 0);
    assert.deepEqual(missed, []);
  });
});

describe('description lint on the rounds of fresh phrasings it was generalised against', () => {
  it('catches every attack of every round, and flags none of the honest look-alikes', () => {
    assert.ok(FRESH_ATTACKS.length >= 90 && FRESH_BENIGN.length >= 25);
    const missed = FRESH_ATTACKS.filter((c) => !hasHigh(lintTool(c.tool))).map(
      (c) => `round ${c.round}: ${String(c.tool.description).slice(0, 60)}`,
    );
    assert.deepEqual(missed, []);
    const flagged = FRESH_BENIGN.filter((t) => hasHigh(lintTool(t))).map((t) => String(t.description));
    assert.deepEqual(flagged, []);
  });
});

describe('description lint on hostile sizes', () => {
  // A quadratic pattern takes minutes on a megabyte; the timeout is a hang guard, not a speed target.
  const units = [
    'http://',
    'https://x',
    'after the ',
    'send ',
    '[//]: # (',
    'when ',
    '{{',
    '<!--',
    'without ',
    'in the `',
  ];
  for (const unit of units) {
    it(`reads a 1 MB run of ${JSON.stringify(unit)} in one linear pass`, { timeout: 120_000 }, () => {
      const text = unit.repeat(Math.ceil(1_000_000 / unit.length));
      lintTool({ name: 't', description: text });
      assert.ok(Array.isArray(scanText(text)));
    });
  }
});
