import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

/** Polls until `ok` holds; the bound only stops a broken test from hanging. */
export async function waitFor(ok: () => boolean | Promise<boolean>, what: string, boundMs = 5000): Promise<void> {
  const until = performance.now() + boundMs;
  while (!(await ok())) {
    if (performance.now() > until) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
