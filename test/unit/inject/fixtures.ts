/** Loads the injector fixtures and golden files under test/fixtures/inject. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseInjectorConfig } from '../../../src/inject/config.ts';
import type { InjectorConfig } from '../../../src/inject/config.ts';

export const FIXTURES = join(import.meta.dirname, '../../fixtures/inject');

export function fixtureConfig(): InjectorConfig {
  const parsed = parseInjectorConfig(readFileSync(join(FIXTURES, 'config.yaml'), 'utf8'));
  assert.ok(parsed.ok, 'the fixture config is valid');
  return parsed.config;
}

export function readReview(name: string): Record<string, any> {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.review.json`), 'utf8'));
}

/** Compares with a golden file; TOOLGATE_UPDATE_GOLDEN=1 rewrites it instead (review the diff before committing). */
export function assertGolden(file: string, actual: unknown): void {
  const path = join(FIXTURES, file);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.TOOLGATE_UPDATE_GOLDEN === '1') writeFileSync(path, text);
  assert.equal(
    text,
    readFileSync(path, 'utf8'),
    `${file} drifted; rerun with TOOLGATE_UPDATE_GOLDEN=1 and review the diff`,
  );
}
