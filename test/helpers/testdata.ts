import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The one way to reach the external corpora (docs/testing.md): the folder
 * named by TOOLGATE_TESTDATA, else ../shared/testdata beside the checkout.
 * They are public data sets under their own licences and never copied into
 * the repository, so a plain clone has none: tests that need an absent corpus
 * skip, saying which variable to set. CI must run them all, so there an
 * absent corpus fails instead of skipping.
 */
export const TESTDATA_ENV = 'TOOLGATE_TESTDATA';

/** Every corpus the suite reads, by its path under the testdata folder. */
export const CORPORA = {
  'json-parsing': 'json-parsing/test_parsing',
  'json-schema-test-suite': 'json-schema-test-suite',
  redos: 'redos/regexlib-attacks.json',
  metatool: 'tool-retrieval/metatool',
  livemcpbench: 'tool-retrieval/livemcpbench',
} as const;
export type CorpusName = keyof typeof CORPORA;

export interface Corpus {
  /** Where the corpus is (or would be). */
  readonly path: string;
  /** For node:test's `skip` option: false when present, else why the tests skip. */
  readonly skip: false | string;
}

export function testdataRoot(env: NodeJS.ProcessEnv = process.env): string {
  const set = env[TESTDATA_ENV];
  if (set !== undefined && set !== '') return isAbsolute(set) ? set : resolve(set);
  return resolve(import.meta.dirname, '../../../shared/testdata');
}

export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

function missing(name: CorpusName, path: string): string {
  return `corpus ${name} not found at ${path}; set ${TESTDATA_ENV} to the testdata folder (docs/testing.md)`;
}

/** Throws in CI when the corpus is absent, so a skip can never hide there. */
export function corpus(name: CorpusName, env: NodeJS.ProcessEnv = process.env): Corpus {
  const path = join(testdataRoot(env), CORPORA[name]);
  if (existsSync(path)) return { path, skip: false };
  if (inCi(env)) throw new Error(`${missing(name, path)}; CI runs every corpus test`);
  return { path, skip: missing(name, path) };
}

/** `node test/helpers/testdata.ts` lists absent corpora and exits 1 if there are any (.ci/run). */
if (import.meta.main) {
  const absent = Object.keys(CORPORA).flatMap((name) => {
    const path = join(testdataRoot(), CORPORA[name as CorpusName]);
    return existsSync(path) ? [] : [missing(name as CorpusName, path)];
  });
  for (const line of absent) process.stderr.write(`${line}\n`);
  if (absent.length === 0) process.stdout.write(`every corpus found under ${testdataRoot()}\n`);
  process.exitCode = absent.length === 0 ? 0 : 1;
}
