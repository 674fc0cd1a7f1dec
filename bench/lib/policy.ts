import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPORT_TOOL_NAME, SSE_TOOL_NAME, TOOLS } from './request.ts';

/** The bench agent's static key; the policy case sends it as a bearer token. */
export const BENCH_KEY = 'bench-agent-5d0c7e1f9a3b8c2d4e6f';

/**
 * A policy that makes every request of the policy case pass all checks:
 * static-key authentication, a wildcard grant by scope, validation of the
 * stub's realistic inputSchema, and the execution stages of a read-only tool. Written to a fresh temporary directory.
 */
export function writeBenchPolicy(): string {
  const [search] = TOOLS;
  return writePolicy(
    [],
    [
      `  - { principal: "*", tool: ${search?.name}, scopes: [issues.read], effect: allow }`,
      `  - { principal: "*", tool: ${SSE_TOOL_NAME}, scopes: [ci.run], effect: allow }`,
      `  - { principal: "*", tool: ${REPORT_TOOL_NAME}, scopes: [issues.read], effect: allow }`,
    ],
  );
}

/**
 * The bench policy (`writeBenchPolicy`) with `count` static keys instead of
 * one, each its own principal (`bench-agent-<i>`) with the bench agent's
 * scopes: many principals under the one wildcard grant. Returns the policy
 * file and the keys, in the order the load should use them.
 */
export function writeManyKeysPolicy(count: number): { readonly policyFile: string; readonly keys: readonly string[] } {
  const keys = Array.from({ length: count }, (_, i) => `bench-agent-${String(i).padStart(5, '0')}-5d0c7e1f9a3b8c2d`);
  const entries = keys.map((key, i) => ({ key, principal: `bench-agent-${i}` }));
  const [search] = TOOLS;
  const policyFile = writePolicy(
    [],
    [
      `  - { principal: "*", tool: ${search?.name}, scopes: [issues.read], effect: allow }`,
      `  - { principal: "*", tool: ${SSE_TOOL_NAME}, scopes: [ci.run], effect: allow }`,
      `  - { principal: "*", tool: ${REPORT_TOOL_NAME}, scopes: [issues.read], effect: allow }`,
    ],
    undefined,
    [],
    entries,
  );
  return { policyFile, keys };
}

/**
 * The bench policy with the result guard on the report tool: the detectors a
 * platform team would turn on for a tool that returns tickets and logs.
 */
export function writeGuardedPolicy(): string {
  return writePolicy(
    [],
    [`  - { principal: "*", tool: ${REPORT_TOOL_NAME}, scopes: [issues.read], effect: allow }`],
    undefined,
    [
      `  ${REPORT_TOOL_NAME}: { sideEffect: read_only, results: { redact: [aws_access_key, github_token, private_key, jwt, email, payment_card] } }`,
    ],
  );
}

/**
 * The gateway comparison's rule: the agent may call `search_issues` and is
 * denied the report tool, as ContextForge's virtual server and scoped token
 * allow one tool and not the other.
 */
export function writeGatewayPolicy(): string {
  const [search] = TOOLS;
  return writePolicy(
    [],
    [
      `  - { principal: "*", tool: ${search?.name}, scopes: [issues.read], effect: allow }`,
      `  - { principal: "*", tool: ${REPORT_TOOL_NAME}, scopes: [issues.read], effect: deny }`,
    ],
  );
}

/**
 * Twenty conditions, all true for the bench's search call, over the argument
 * kinds real policies test: string prefixes and suffixes, membership, sizes,
 * numbers, lists and the caller.
 */
const BENCH_CONDITIONS: readonly string[] = [
  'args.repository.startsWith("acme/")',
  'args.state in ["open", "closed", "all"]',
  'args.limit <= 50',
  'size(args.query) < 500',
  'args.labels.size() <= 10',
  '!args.repository.contains("..")',
  'args.sort == "updated" || args.sort == "created"',
  'args.labels.all(l, size(l) < 32)',
  'principal.id == "bench-agent"',
  '"issues.read" in principal.scopes',
  'args.repository.endsWith("-service")',
  'args.limit > 0 && args.limit % 1 == 0',
  'args.updatedSince.startsWith("2025-")',
  'args.query.lowerAscii().contains("checkout")',
  '!("wontfix" in args.labels)',
  'args.repository.matches("^[a-z0-9-]+/[a-z0-9-]+$")',
  'has(args.state)',
  'tool.name == "search_issues"',
  'principal.strength != "anonymous"',
  'request.protocolVersion != "2024-11-05"',
];

/**
 * Twenty rows for the bench call's tool, each applying by its own scope (so
 * none is a duplicate): `plain`, twenty allow rows; `conditions`, the same
 * rows each with a condition (a decision stops at the first allow row that
 * holds); `every`, the worst case, where all twenty conditions must be
 * evaluated on every call: twenty deny rows whose conditions are all false,
 * beside one unconditional allow row.
 */
export function writeRowsPolicy(kind: 'plain' | 'conditions' | 'every'): string {
  const [search] = TOOLS;
  const scopes = BENCH_CONDITIONS.map((_, i) => `rows.${i}`);
  const rows = BENCH_CONDITIONS.map((when, i) => {
    const base = `principal: "*", tool: ${search?.name}, scopes: [${scopes[i]}]`;
    if (kind === 'plain') return `  - { ${base}, effect: allow }`;
    if (kind === 'conditions') return `  - { ${base}, effect: allow, when: ${JSON.stringify(when)} }`;
    return `  - { ${base}, effect: deny, when: ${JSON.stringify(`!(${when})`)} }`;
  });
  if (kind === 'every')
    rows.push(`  - { principal: "*", tool: ${search?.name}, scopes: [issues.read], effect: allow }`);
  return writePolicy(scopes, rows);
}

/**
 * The policy case with the agent authenticated by its ServiceAccount token
 * (`authentication`, the lines under it) instead of the static key: the same
 * tools and the same one wildcard row, granted to the agent's namespace.
 */
export function writeServiceAccountPolicy(authentication: readonly string[], namespace: string): string {
  const [search] = TOOLS;
  return writePolicy(
    [],
    [`  - { principal: "*", tool: ${search?.name}, scopes: ["system:serviceaccounts:${namespace}"], effect: allow }`],
    authentication,
  );
}

function writePolicy(
  extraScopes: readonly string[],
  grantRows: readonly string[],
  authentication: readonly string[] = ['  staticKeys: { file: keys.yaml }'],
  toolLines: readonly string[] = [],
  keys: readonly { readonly key: string; readonly principal: string }[] = [
    { key: BENCH_KEY, principal: 'bench-agent' },
  ],
): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-'));
  const scopes = ['issues.read', 'ci.run', ...extraScopes].join(', ');
  const lines = keys.map(
    ({ key, principal }) =>
      `  - { sha256: ${createHash('sha256').update(key).digest('hex')}, principal: ${principal}, scopes: [${scopes}] }\n`,
  );
  writeFileSync(join(dir, 'keys.yaml'), `keys:\n${lines.join('')}`);
  const [search] = TOOLS;
  // The execution stages on: a deadline, retries (read-only), the breaker and a concurrency slot per call.
  const document = (execution: string) =>
    [
      'version: 1',
      'authentication:',
      ...authentication,
      'tools:',
      `  ${search?.name}: { sideEffect: read_only, maxRetries: 2, timeoutMs: 10000${execution} }`,
      ...toolLines,
      'grants:',
      ...grantRows,
      '',
    ].join('\n');
  writeFileSync(join(dir, 'policy.yaml'), document(', maxConcurrent: 100000'));
  // For a BENCH_BASELINE build that refuses maxConcurrent (before issue 21): the same policy without it.
  writeFileSync(join(dir, 'baseline-policy.yaml'), document(''));
  return join(dir, 'policy.yaml');
}
