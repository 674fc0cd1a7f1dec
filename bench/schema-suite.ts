import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { corpus } from '../test/helpers/testdata.ts';
import { type UnsupportedReason } from '../src/validation/types.ts';
import { createSchemaRegistry, type SchemaRegistry } from '../src/validation/registry.ts';
import { compileToolSchema } from '../src/validation/compile.ts';

/**
 * Runs toolgate's real validation path over the JSON Schema Test Suite
 * (required tests only) and classifies every test against the suite's verdict.
 * A refusal is safe (the tool's calls are refused as unenforceable); a wrong
 * accept is the one outcome that must never happen. As every suite harness
 * does, the suite's `remotes/` are made available, here as registered schemas.
 */

const SUITE_ROOT = corpus('json-schema-test-suite').path;
export const SUITE_DIR = join(SUITE_ROOT, 'tests');
export const REMOTES_DIR = join(SUITE_ROOT, 'remotes');
/** Where the suite says its remotes are served. */
export const REMOTES_BASE = 'http://localhost:1234/';

/** Every file under remotes/, keyed by the URI the suite serves it at. */
export function loadRemotes(dir: string = REMOTES_DIR): Map<string, unknown> {
  const remotes = new Map<string, unknown>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
    const path = join(entry.parentPath, entry.name);
    remotes.set(REMOTES_BASE + relative(dir, path).split(sep).join('/'), JSON.parse(readFileSync(path, 'utf8')));
  }
  return remotes;
}

export interface SuiteRegistry {
  readonly registry: SchemaRegistry;
  /** Remotes the registry refuses (other dialects, custom vocabularies, shapes), by reason. */
  readonly refused: Record<string, number>;
}

/**
 * The registry refuses what it cannot enforce, as it would an operator's
 * ConfigMap; a harness registers the rest, so a test reaching a refused remote
 * is refused in turn, exactly as a tool would be.
 */
export function suiteRegistry(dir: string = REMOTES_DIR): SuiteRegistry {
  const remotes = loadRemotes(dir);
  const refused: Record<string, number> = {};
  for (;;) {
    const built = createSchemaRegistry(remotes);
    if (built.ok) return { registry: built.registry, refused };
    for (const { uri, reason } of built.errors) {
      remotes.delete(uri);
      refused[reason] = (refused[reason] ?? 0) + 1;
    }
  }
}
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

export function classifyDraft(
  draft: Draft,
  dir: string = SUITE_DIR,
  registry: SchemaRegistry = suiteRegistry().registry,
): { counts: SuiteCounts; cases: SuiteCase[] } {
  const counts: SuiteCounts = { total: 0, agree: 0, refused: 0, wrong_accept: 0, wrong_reject: 0 };
  const cases: SuiteCase[] = [];
  const folder = join(dir, draft);
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .sort();
  for (const file of files) {
    const groups = JSON.parse(readFileSync(join(folder, file), 'utf8')) as SuiteGroup[];
    for (const group of groups) {
      const compiled = compileToolSchema(declareDialect(draft, group.schema), { registry });
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
        cases.push({
          file,
          group: group.description,
          test: test.description,
          outcome,
          ...(compiled.ok ? {} : { reason: compiled.reason }),
        });
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
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || Object.hasOwn(schema, '$schema'))
    return schema;
  return { $schema: DIALECT_URI[draft], ...schema };
}

export function classifySuite(dir: string = SUITE_DIR): Record<Draft, SuiteCounts> {
  const { registry } = suiteRegistry();
  return {
    'draft2020-12': classifyDraft('draft2020-12', dir, registry).counts,
    draft7: classifyDraft('draft7', dir, registry).counts,
  };
}

function main(): void {
  const verbose = process.argv.includes('--verbose');
  const { registry, refused } = suiteRegistry();
  console.log(`remotes: ${registry.size} registered, refused by reason ${JSON.stringify(refused)}`);
  const summary: Partial<Record<Draft, SuiteCounts>> = {};
  for (const draft of DRAFTS) {
    const { counts, cases } = classifyDraft(draft, SUITE_DIR, registry);
    summary[draft] = counts;
    const share = ((counts.agree / counts.total) * 100).toFixed(1);
    const reasons = new Map<string, number>();
    for (const c of cases) if (c.reason !== undefined) reasons.set(c.reason, (reasons.get(c.reason) ?? 0) + 1);
    console.log(
      `${draft}: ${counts.agree}/${counts.total} agree (${share}% of all required tests), ${counts.refused} refused, ${counts.wrong_accept} wrong accepts, ${counts.wrong_reject} wrong rejects`,
    );
    console.log(
      `  refused by reason: ${JSON.stringify(Object.fromEntries([...reasons].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))))}`,
    );
    for (const c of cases) {
      if (c.outcome === 'wrong_accept' || c.outcome === 'wrong_reject' || (verbose && c.outcome === 'refused')) {
        console.log(`  ${c.outcome}: ${c.file} | ${c.group} | ${c.test}`);
      }
    }
  }
  console.log(JSON.stringify(summary));
}

if (import.meta.main) main();
