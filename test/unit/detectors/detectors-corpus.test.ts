import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { DETECTOR_IDS, DETECTORS } from '../../../src/detectors/detectors.ts';
import { es256Jwt, privateKeys, SampleMaker } from '../../helpers/detector-samples.ts';
import { corpus } from '../../helpers/testdata.ts';

/**
 * Precision and recall of every detector: generated true positives in the
 * real formats, embedded in the shapes tool results take, against ordinary
 * tool output from real corpora (every string of the LiveMCPBench catalogue,
 * each tool as JSON text, and every string of the JSON Schema Test Suite).
 * The table is written to test-output/detectors-corpus.md.
 */

const livemcpbench = corpus('livemcpbench');
const schemaSuite = corpus('json-schema-test-suite');
const skip = livemcpbench.skip || schemaSuite.skip;

interface Case {
  readonly text: string;
  /** What should be found: detector id and the exact substrings. */
  readonly expect: readonly { readonly id: string; readonly value: string }[];
}

const TEMPLATES: readonly ((v: string) => string)[] = [
  (v) => v,
  (v) => `value: ${v}`,
  (v) => `Found ${v}.`,
  (v) => `| owner | ${v} | active |`,
  (v) => `{"result": ${JSON.stringify(v)}, "ok": true}`,
  (v) => `<td>${v}</td>`,
];

function positives(): Case[] {
  const make = new SampleMaker(20_370_001);
  const kinds: readonly [string, number, () => string][] = [
    ['aws_access_key', 20, () => make.awsKey()],
    ['gcp_api_key', 10, () => make.gcpKey()],
    ['github_token', 20, () => make.githubClassic()],
    ['github_token', 5, () => make.githubFineGrained()],
    ['gitlab_token', 10, () => make.gitlabPat()],
    ['slack_token', 10, () => make.slackBot()],
    ['slack_webhook', 10, () => make.slackWebhook()],
    ['npm_token', 10, () => make.npmToken()],
    ['jwt', 20, () => make.jwt()],
    ['jwt', 3, () => es256Jwt({ sub: make.chars('abcdef', 8), scope: 'read write' })],
    ['payment_card', 40, () => make.card()],
    ['iban', 30, () => make.iban()],
    ['email', 30, () => make.email()],
    ['phone', 30, () => make.phone()],
  ];
  const cases: Case[] = kinds.flatMap(([id, n, value]) =>
    Array.from({ length: n }, () => {
      const v = value();
      return { text: make.pick(TEMPLATES)(v), expect: [{ id, value: v }] };
    }),
  );
  for (let i = 0; i < 2; i++) {
    for (const pem of privateKeys())
      cases.push({ text: `key:\n${pem}`, expect: [{ id: 'private_key', value: pem.trimEnd() }] });
  }
  return cases;
}

/**
 * Corpus strings that do contain a match, each inspected by hand: the JSON
 * Schema Test Suite's format tests hold e-mail addresses and a tel: URI.
 * Reserved (example.com) or fictional domains are still addresses to a
 * scanner of tool output, so these count as true positives, not as noise.
 */
const LABELLED: readonly (Case & { readonly reason: string })[] = [
  ...[
    'joe.bloggs@example.com',
    'te~st@example.com',
    '~test@example.com',
    'test~@example.com',
    'te.s.t@example.com',
    `${'a'.repeat(64)}@example.com`,
  ].map((text) => ({ text, expect: [{ id: 'email', value: text }], reason: 'format tests: a valid address' })),
  {
    text: 'user1@oceania.org, user2@oceania.org',
    expect: [
      { id: 'email', value: 'user1@oceania.org' },
      { id: 'email', value: 'user2@oceania.org' },
    ],
    reason: 'format/email: a list of two addresses',
  },
  {
    text: '"Winston Smith" <winston.smith@recdep.minitrue> (Records Department)',
    expect: [{ id: 'email', value: 'winston.smith@recdep.minitrue' }],
    reason: 'format/email: the address inside a display name form',
  },
  {
    text: 'joe bloggs@example.com',
    expect: [{ id: 'email', value: 'bloggs@example.com' }],
    reason: 'format/email: invalid as a whole, but the text contains an address',
  },
  {
    text: 'a valid idn e-mail (example@example.test in Hangul)',
    expect: [{ id: 'email', value: 'example@example.test' }],
    reason: 'format/idn-email: a description quoting an address',
  },
  {
    text: '//a@b@example.com/',
    expect: [{ id: 'email', value: 'b@example.com' }],
    reason: 'format/uri-reference: contains an address',
  },
  {
    text: 'mailto:John.Doe@example.com',
    expect: [{ id: 'email', value: 'John.Doe@example.com' }],
    reason: 'format/uri: a mailto URI carries an address',
  },
  {
    text: 'tel:+1-816-555-1212',
    expect: [{ id: 'phone', value: '+1-816-555-1212' }],
    reason: 'format/uri: a tel URI carries a phone number',
  },
];

function strings(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') out.add(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      strings(v, out);
    }
  }
}

function corpusStrings(): Set<string> {
  const out = new Set<string>();
  const catalogue: unknown = JSON.parse(readFileSync(join(livemcpbench.path, 'catalog.json'), 'utf8'));
  strings(catalogue, out);
  // A tool as JSON text is what a listing tool returns.
  if (Array.isArray(catalogue)) for (const tool of catalogue) out.add(JSON.stringify(tool, null, 2));
  for (const draft of ['draft2020-12', 'draft7']) {
    const dir = join(schemaSuite.path, 'tests', draft);
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'))) {
      strings(JSON.parse(readFileSync(join(dir, file), 'utf8')), out);
    }
  }
  return out;
}

interface Tally {
  tp: number;
  fp: number;
  fn: number;
}

function score(cases: readonly Case[], tally: Map<string, Tally>, falsePositives: string[]): void {
  for (const c of cases) {
    for (const id of DETECTOR_IDS) {
      const t = tally.get(id)!;
      const found = DETECTORS.get(id)!
        .find(c.text)
        .map(([s, e]) => c.text.slice(s, e));
      const wanted = c.expect.filter((x) => x.id === id).map((x) => x.value);
      for (const w of wanted) {
        const i = found.indexOf(w);
        if (i === -1) t.fn++;
        else {
          t.tp++;
          found.splice(i, 1);
        }
      }
      t.fp += found.length;
      for (const f of found)
        falsePositives.push(`${id}: ${JSON.stringify(f)} in ${JSON.stringify(c.text.slice(0, 120))}`);
    }
  }
}

function table(tally: Map<string, Tally>, positiveCount: number, negatives: number): string {
  const ratio = (n: number, d: number) => (d === 0 ? '—' : (n / d).toFixed(3));
  const rows = DETECTOR_IDS.map((id) => {
    const { tp, fp, fn } = tally.get(id)!;
    return `| \`${id}\` | ${tp} | ${fp} | ${fn} | ${ratio(tp, tp + fp)} | ${ratio(tp, tp + fn)} |`;
  });
  return [
    '# Result-guard detectors on the corpus',
    '',
    `${positiveCount} generated positive texts, ${LABELLED.length} hand-labelled corpus strings, ${negatives} corpus negatives.`,
    '',
    '| detector | TP | FP | FN | precision | recall |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

it('every detector keeps precision ≥ 0.98 on generated positives and real tool-output negatives', { skip }, () => {
  const generated = positives();
  const labelledTexts = new Set(LABELLED.map((l) => l.text));
  const all = corpusStrings();
  for (const text of labelledTexts) assert.ok(all.has(text), `labelled string no longer in the corpus: ${text}`);
  const negatives: Case[] = [...all].filter((text) => !labelledTexts.has(text)).map((text) => ({ text, expect: [] }));
  assert.ok(generated.length >= 200, `${generated.length} positives`);
  assert.ok(negatives.length >= 1000, `${negatives.length} negatives`);

  const tally = new Map(DETECTOR_IDS.map((id) => [id, { tp: 0, fp: 0, fn: 0 }]));
  const falsePositives: string[] = [];
  score([...generated, ...LABELLED, ...negatives], tally, falsePositives);

  const report = table(tally, generated.length, negatives.length);
  const out = join(import.meta.dirname, '../../../test-output');
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, 'detectors-corpus.md'),
    `${report}${falsePositives.length > 0 ? `\nFalse positives:\n\n${falsePositives.map((f) => `- ${f}`).join('\n')}\n` : ''}`,
  );

  for (const [id, { tp, fp }] of tally) {
    assert.ok(tp > 0, `${id} found nothing`);
    assert.ok(tp / (tp + fp) >= 0.98, `${id}: precision ${tp / (tp + fp)}\n${falsePositives.join('\n')}`);
  }
});
