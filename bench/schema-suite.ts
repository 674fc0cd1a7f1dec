import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileToolSchema, type UnsupportedReason } from '../src/validation/index.ts';

/**
 * Runs toolgate's real validation path over the JSON Schema Test Suite
 * (required tests only) and classifies every test against the suite's verdict.
 * A refusal is safe (the tool's calls are refused as unenforceable); a wrong
 * accept is the one outcome that must never happen.
 */

export const SUITE_DIR = join(import.meta.dirname, '..', '..', 'shared', 'testdata', 'json-schema-test-suite', 'tests');
export const DRAFTS = ['draft2020-12', 'draft7'] as const;
export type Draft = (typeof DRAFTS)[number];

export type Outcome = 'agree' | 'refused' | 'wrong_accept' | 'wrong_reject';

export interface SuiteCounts {
  total: number;
  agree: number;
  refused: number;
  wrong_accept: number;
  wrong_reject: number;
}

export interface SuiteCase {
  readonly file: string;
  readonly group: string;
  readonly test: string;
  readonly outcome: Outcome;
  /** Why the schema was refused, for refused cases. */
  readonly reason?: UnsupportedReason;
}

interface SuiteGroup {
  readonly description: string;
  readonly schema: unknown;
  readonly tests: readonly { readonly description: string; readonly data: unknown; readonly valid: boolean }[];
}

export function classifyDraft(draft: Draft, dir: string = SUITE_DIR): { counts: SuiteCounts; cases: SuiteCase[] } {
  const counts: SuiteCounts = { total: 0, agree: 0, refused: 0, wrong_accept: 0, wrong_reject: 0 };
  const cases: SuiteCase[] = [];
  const folder = join(dir, draft);
  const files = readdirSync(folder).filter((f) => f.endsWith('.json')).sort();
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(folder, file), 'utf8')) as SuiteGroup[];
    for (const group of groups) {
      const compiled = compileToolSchema(declareDialect(draft, group.schema));
      for (const test of group.tests) {
        let outcome: Outcome;
        if (!compiled.ok) outcome = 'refused';
        else {
          const forwarded = compiled.validate(test.data).ok;
          if (forwarded === test.valid) outcome = 'agree';
          else outcome = forwarded ? 'wrong_accept' : 'wrong_reject';
        }
        counts.total += 1;
        counts[outcome] += 1;
        cases.push({ file, group: group.description, test: test.description, outcome, ...(compiled.ok ? {} : { reason: compiled.reason }) });
      }
    }
  }
  return { counts, cases };
}

const DIALECT_URI: Readonly<Record<Draft, string>> = {
  'draft2020-12': 'https://json-schema.org/draft/2020-12/schema',
  draft7: 'http://json-schema.org/draft-07/schema#',
};

/**
 * The suite leaves the dialect implicit (the folder says it); a tool states it
 * with `$schema`, so each root schema gets the one its folder means.
 */
function declareDialect(draft: Draft, schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || Object.hasOwn(schema, '$schema')) return schema;
  return { $schema: DIALECT_URI[draft], ...schema };
}

export function classifySuite(dir: string = SUITE_DIR): Record<Draft, SuiteCounts> {
  return {
    'draft2020-12': classifyDraft('draft2020-12', dir).counts,
    draft7: classifyDraft('draft7', dir).counts,
  };
}

function main(): void {
  const verbose = process.argv.includes('--verbose');
  const summary: Partial<Record<Draft, SuiteCounts>> = {};
  for (const draft of DRAFTS) {
    const { counts, cases } = classifyDraft(draft);
    summary[draft] = counts;
    const share = ((counts.agree / counts.total) * 100).toFixed(1);
    const reasons = new Map<string, number>();
    for (const c of cases) if (c.reason !== undefined) reasons.set(c.reason, (reasons.get(c.reason) ?? 0) + 1);
    const remote = reasons.get('remote_ref') ?? 0;
    const local = ((counts.agree / (counts.total - remote)) * 100).toFixed(1);
    console.log(`${draft}: ${counts.agree}/${counts.total} agree (${share}%; ${local}% of the ${counts.total - remote} tests that need no remote schema), ${counts.refused} refused, ${counts.wrong_accept} wrong accepts, ${counts.wrong_reject} wrong rejects`);
    console.log(`  refused by reason: ${JSON.stringify(Object.fromEntries([...reasons].sort()))}`);
    for (const c of cases) {
      if (c.outcome === 'wrong_accept' || c.outcome === 'wrong_reject' || (verbose && c.outcome === 'refused')) {
        console.log(`  ${c.outcome}: ${c.file} | ${c.group} | ${c.test}`);
      }
    }
  }
  console.log(JSON.stringify(summary));
}

if (import.meta.main) main();
