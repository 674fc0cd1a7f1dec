import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SSE_TOOL_NAME, TOOLS } from './request.ts';

/** The bench agent's static key; the policy case sends it as a bearer token. */
export const BENCH_KEY = 'bench-agent-5d0c7e1f9a3b8c2d4e6f';

/**
 * A policy that makes every request of the policy case pass all checks:
 * static-key authentication, a wildcard grant by scope, validation of the
 * stub's realistic inputSchema, and the execution stages of a read-only tool. Written to a fresh temporary directory.
 */
export function writeBenchPolicy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const hash = createHash('sha256').update(BENCH_KEY).digest('hex');
  writeFileSync(join(dir, 'keys.yaml'), `keys:\n  - { sha256: ${hash}, principal: bench-agent, scopes: [issues.read, ci.run] }\n`);
  const [search] = TOOLS;
  writeFileSync(
    join(dir, 'policy.yaml'),
    [
      'version: 1',
      'authentication:',
      '  staticKeys: { file: keys.yaml }',
      // The execution stages on: a deadline, retries (read-only), the breaker and a concurrency slot per call.
      'tools:',
      `  ${search?.name}: { sideEffect: read_only, maxRetries: 2, timeoutMs: 10000, maxConcurrent: 100000 }`,
      'grants:',
      `  - { principal: "*", tool: ${search?.name}, scopes: [issues.read], effect: allow }`,
      `  - { principal: "*", tool: ${SSE_TOOL_NAME}, scopes: [ci.run], effect: allow }`,
      '',
    ].join('\n'),
  );
  return join(dir, 'policy.yaml');
}
