import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * External test material (never copied into the repository): the directory
 * named by TOOLGATE_TESTDATA, else ../shared/testdata beside the repository.
 */
export function testdataDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.TOOLGATE_TESTDATA;
  return fromEnv !== undefined && fromEnv !== '' ? resolve(fromEnv) : resolve(import.meta.dirname, '../../../shared/testdata');
}

/** The path of one corpus file, or a skip message naming the variable when it is absent. */
export function testdataFile(relative: string): { path: string } | { skip: string } {
  const path = join(testdataDir(), relative);
  return existsSync(path) ? { path } : { skip: `${relative} not found; set TOOLGATE_TESTDATA to the shared test data directory` };
}
