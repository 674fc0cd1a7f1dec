/**
 * `toolgate policy test`: policy unit tests in YAML. Each case names a
 * principal, a tool, resource or prompt, arguments and the decision it expects; the decision
 * comes from the same checks the proxy runs (see policy-offline.ts). Reports
 * are TAP 14 or JUnit XML.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { ConfigError } from '../config/policy/policy.ts';
import { stringifyExact } from '../json/exact.ts';
import { compileSchema, parseYaml, validateWith } from '../config/policy/validate.ts';
import { PRINCIPAL_PATTERN, SCOPE_PATTERN, TOOL_PATTERN } from '../config/policy/grant-row.ts';
import type { DecisionDeps } from '../grpc/deps.ts';
import type { ExplainResponse } from '../grpc/generated/toolgate/v1/ExplainResponse.ts';
import { readCatalogFile } from './catalog-file.ts';
import { decideOffline, offlineDeps, STRENGTHS, type Loaded, type Subject, type Target } from './policy-offline.ts';
import { MAX_URI_LENGTH } from '../mcp/resource-uri.ts';
import type { PolicyInForce } from '../auth/policy-in-force.ts';
import { guardedOutcome, RESULT_EXPECTATION_SCHEMA, type ResultExpectation } from './policy-result-case.ts';

export type Expectation = 'allow' | 'audit_deny' | 'approval_required' | { readonly deny: string };

interface RawCase {
  name: string;
  principal: { id: string; scopes?: string[]; strength?: Subject['strength']; claims?: Record<string, unknown> };
  tool?: string;
  resource?: string;
  prompt?: string;
  arguments?: Record<string, unknown>;
  catalog?: string;
  expect: Expectation;
  /** A result the tool returns, and what the result guard must make of it. */
  result?: Record<string, unknown>;
  expectResult?: ResultExpectation;
}

interface RawSuite {
  catalog?: string;
  tests: RawCase[];
}

const MAX_TEST_FILE_BYTES = 4 * 1024 * 1024;

const catalogPath = { type: 'string', minLength: 1, maxLength: 4096 };
const validateSuite = compileSchema({
  type: 'object',
  additionalProperties: false,
  required: ['tests'],
  properties: {
    catalog: catalogPath,
    tests: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'principal', 'expect'],
        dependencies: { result: ['expectResult', 'tool'], expectResult: ['result'] },
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 500, pattern: '^[^\\u0000-\\u001f\\u007f]+$' },
          principal: {
            type: 'object',
            additionalProperties: false,
            required: ['id'],
            properties: {
              id: { type: 'string', pattern: PRINCIPAL_PATTERN },
              scopes: { type: 'array', items: { type: 'string', pattern: SCOPE_PATTERN } },
              strength: { enum: STRENGTHS },
              claims: { type: 'object' },
            },
          },
          tool: { type: 'string', pattern: TOOL_PATTERN },
          resource: { type: 'string', minLength: 1, maxLength: MAX_URI_LENGTH },
          prompt: { type: 'string', pattern: TOOL_PATTERN },
          arguments: { type: 'object' },
          catalog: catalogPath,
          result: { type: 'object' },
          expectResult: RESULT_EXPECTATION_SCHEMA,
          expect: {
            oneOf: [
              { enum: ['allow', 'audit_deny', 'approval_required'] },
              {
                type: 'object',
                additionalProperties: false,
                required: ['deny'],
                properties: { deny: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' } },
              },
            ],
          },
        },
      },
    },
  },
});

export interface CaseResult {
  readonly file: string;
  readonly name: string;
  readonly ok: boolean;
  readonly expected: string;
  readonly actual: string;
  /** Per-stage outcomes and the deciding rows, for the failure report. */
  readonly detail: string;
}

/** Runs every case of one test file; a file that cannot be read or validated is reported as errors. */
export async function runTestFile(inForce: PolicyInForce, path: string): Promise<Loaded<CaseResult[]>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return {
      ok: false,
      errors: [
        { path: '', message: `read: cannot read the test file (${(err as NodeJS.ErrnoException).code ?? 'error'})` },
      ],
    };
  }
  const parsed = parseYaml(text, MAX_TEST_FILE_BYTES, { exactIntegers: true });
  if (!parsed.ok) return parsed;
  const suite = validateWith<RawSuite>(validateSuite, parsed.value);
  if (!suite.ok) return suite;
  const base = dirname(resolve(path));
  const catalogues = new Map<string, DecisionDeps>();
  const depsFor = async (catalog: string | undefined): Promise<Loaded<DecisionDeps>> => {
    const key = catalog ?? '';
    const hit = catalogues.get(key);
    if (hit !== undefined) return { ok: true, value: hit };
    let tools: readonly unknown[] | undefined;
    if (catalog !== undefined) {
      const read = await readCatalogFile(resolve(base, catalog));
      if (!read.ok) return { ok: false, errors: [{ path: '', message: `catalogue ${catalog}: ${read.problem}` }] };
      tools = read.tools;
    }
    const deps = offlineDeps(inForce, tools);
    catalogues.set(key, deps);
    return { ok: true, value: deps };
  };
  const results: CaseResult[] = [];
  const errors: ConfigError[] = [];
  for (const [i, c] of suite.value.tests.entries()) {
    const deps = await depsFor(c.catalog ?? suite.value.catalog);
    if (!deps.ok) {
      errors.push(...deps.errors.map((e) => ({ path: `/tests/${i}/catalog`, message: e.message })));
      continue;
    }
    const named = [c.tool, c.resource, c.prompt].filter((v) => v !== undefined);
    if (named.length !== 1) {
      errors.push({ path: `/tests/${i}`, message: 'case: name exactly one of tool, resource or prompt' });
      continue;
    }
    const target: Target =
      c.tool !== undefined
        ? { tool: c.tool }
        : c.resource !== undefined
          ? { resource: c.resource }
          : { prompt: c.prompt as string };
    const subject: Subject = {
      id: c.principal.id,
      scopes: c.principal.scopes ?? [],
      strength: c.principal.strength ?? 'static',
      ...(c.principal.claims !== undefined && { claims: c.principal.claims }),
    };
    const response = await decideOffline(deps.value, subject, target, stringifyExact(c.arguments ?? {}));
    let actual = outcome(response);
    let expected = describe(c.expect);
    if (c.result !== undefined && c.expectResult !== undefined && c.tool !== undefined) {
      // A refused call never reaches the tool, so its result is not judged: the case then fails on `expect`.
      const forwarded = response.decision === 'allow' || response.decision === 'audit_deny';
      const guarded = guardedOutcome(inForce.policy, deps.value.catalogue, c.tool, c.result, c.expectResult);
      actual += `; result ${forwarded ? guarded.actual : 'not forwarded'}`;
      expected += `; result ${guarded.expected}`;
    }
    results.push({ file: path, name: c.name, ok: actual === expected, expected, actual, detail: detail(response) });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: results };
}

function describe(e: Expectation): string {
  return typeof e === 'string' ? e : `deny ${e.deny}`;
}

function outcome(r: ExplainResponse): string {
  if (r.decision === 'deny') return `deny ${r.reasonCodes?.[0] ?? ''}`.trim();
  return r.decision ?? 'allow';
}

function detail(r: ExplainResponse): string {
  const stages = (r.stages ?? []).map((s) => `${s.name}=${s.outcome}${s.code ? `(${s.code})` : ''}`).join(' ');
  const rows = (r.rows ?? [])
    .map((row) => row.name)
    .filter((n) => n !== undefined && n !== '')
    .join(',');
  return `stages: ${stages}${rows === '' ? '' : `; rows: ${rows}`}`;
}

/** TAP version 14: one line per case; a failure carries a YAML block saying what was expected and why. */
export function tapReport(results: readonly CaseResult[]): string {
  const lines = ['TAP version 14', `1..${results.length}`];
  results.forEach((r, i) => {
    const title = `${r.file}: ${r.name}`.replaceAll('#', '\\#').replaceAll('\n', ' ');
    if (r.ok) {
      lines.push(`ok ${i + 1} - ${title}`);
      return;
    }
    lines.push(`not ok ${i + 1} - ${title}: expected ${r.expected}, got ${r.actual}`);
    lines.push(
      '  ---',
      `  expected: ${JSON.stringify(r.expected)}`,
      `  actual: ${JSON.stringify(r.actual)}`,
      `  detail: ${JSON.stringify(r.detail)}`,
      '  ...',
    );
  });
  return `${lines.join('\n')}\n`;
}

/** JUnit XML, one testsuite per test file, as CI systems read it. */
export function junitReport(results: readonly CaseResult[]): string {
  const byFile = new Map<string, CaseResult[]>();
  for (const r of results) byFile.set(r.file, [...(byFile.get(r.file) ?? []), r]);
  const failures = results.filter((r) => !r.ok).length;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="toolgate policy test" tests="${results.length}" failures="${failures}">`,
  ];
  for (const [file, cases] of byFile) {
    out.push(
      `  <testsuite name="${xml(file)}" tests="${cases.length}" failures="${cases.filter((c) => !c.ok).length}">`,
    );
    for (const c of cases) {
      if (c.ok) {
        out.push(`    <testcase classname="${xml(file)}" name="${xml(c.name)}"/>`);
        continue;
      }
      out.push(`    <testcase classname="${xml(file)}" name="${xml(c.name)}">`);
      out.push(`      <failure message="${xml(`expected ${c.expected}, got ${c.actual}`)}">${xml(c.detail)}</failure>`);
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}

function xml(s: string): string {
  return s
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}
