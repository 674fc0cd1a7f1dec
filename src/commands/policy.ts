/**
 * `toolgate policy validate|test|explain`: the policy as code, offline. Exit
 * status 0 when everything is fine, 1 when there are findings (a policy or
 * test file error, a failing test case), 2 on a usage error. Findings go to
 * stdout, one per line, as `file: pointer: message`; usage errors to stderr.
 */
import { parseArgs } from 'node:util';
import type { ConfigError } from '../config/policy/policy.ts';
import { isPrincipalId, isScope } from '../config/policy/grant-row.ts';
import { parseArguments } from '../grpc/explain.ts';
import { isRecord } from '../json/record.ts';
import {
  decideOffline,
  loadCatalogue,
  loadPolicyInForce,
  offlineDeps,
  STRENGTHS,
  type Target,
} from './policy-offline.ts';
import { junitReport, runTestFile, tapReport, type CaseResult } from './policy-test.ts';
import { catalogueFindings } from './policy-catalogue.ts';
import { unreadFiles, withFileHints } from './policy-files.ts';

/** A subcommand: its usage (continuation lines wrapped as the CLI prints them) and what it does; the README's table is generated from these. */
interface Subcommand {
  readonly usage: readonly string[];
  readonly does: string;
}

export const SUBCOMMANDS: readonly Subcommand[] = [
  {
    usage: ['toolgate policy validate [--catalog tools.json] [--check-files] POLICY…'],
    does:
      'every check the loader makes (schema, semantics, conditions), one line per problem: `file: /json/pointer: message`. ' +
      'The key and JWKS files the policy names get a `note:` line and are read only with `--check-files`; a problem with one then ' +
      'names the file and what to do. `--catalog` (a `tools/list` result) adds warnings for rows and tool entries naming tools the ' +
      'catalogue lacks and catalogue tools no row allows; notes and warnings alone exit 0',
  },
  {
    usage: ['toolgate policy test [--format tap|junit] POLICY TESTS…'],
    does:
      'runs YAML test cases (see `examples/policy.test.yaml`): a principal (`id`, `scopes`, `strength`, `claims`), a `tool`, ' +
      '`arguments`, optionally a `catalog` file, and `expect: allow`, `audit_deny`, `approval_required` (a `require_approval` row ' +
      'asks; `explain` then says `"decision": "approval_required"` and names the row) or `{ deny: <code> }`; prints TAP 14 ' +
      '(default) or JUnit XML. Without a catalogue a tool accepts any object of arguments; a `result` the tool returns with ' +
      '`expectResult` (`error`, `redacted`, `marked`, `content`, `structuredContent`) checks what the result guard makes of it',
  },
  {
    usage: [
      'toolgate policy explain POLICY --principal ID [--scopes a,b] [--strength anonymous|static|short_lived|one_time]',
      '                       [--claims JSON] (--tool NAME | --resource URI | --prompt NAME) [--args JSON] [--catalog tools.json]',
    ],
    does:
      "the decision (`allow`, `deny`, `audit_deny`, `approval_required`), every stage's verdict and the deciding rows, as JSON, " +
      'exactly as the gRPC `PolicyService.Explain` answers; `--resource` and `--prompt` ask about reading a resource or getting ' +
      'a prompt instead of calling a tool; for a tool with a `results` section, `resultGuards` says which guards apply',
  },
];

export const USAGE = SUBCOMMANDS.flatMap((c) => c.usage)
  .map((line, i) => `${i === 0 ? 'usage: ' : '       '}${line}`)
  .join('\n');

export interface PolicyIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

class UsageError extends Error {}

export async function run(argv: readonly string[], io: PolicyIo = process): Promise<number> {
  const [action, ...rest] = argv;
  try {
    switch (action) {
      case 'validate':
        return await validate(rest, io);
      case 'test':
        return await test(rest, io);
      case 'explain':
        return await explain(rest, io);
      case undefined:
        throw new UsageError('name a subcommand');
      default:
        throw new UsageError(`unknown subcommand ${JSON.stringify(action)}`);
    }
  } catch (err) {
    if (
      !(err instanceof UsageError) &&
      !(err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
    )
      throw err;
    io.stderr.write(`toolgate policy: ${err.message}\n${USAGE}\n`);
    return 2;
  }
}

function findings(io: PolicyIo, file: string, errors: readonly ConfigError[], kind = ''): void {
  for (const e of errors) io.stdout.write(`${file}: ${e.path || '/'}: ${kind}${e.message}\n`);
}

/** The tools of the `--catalog` file, if one was named; a file that cannot be read is reported as findings. */
async function catalogueOption(
  path: string | undefined,
  io: PolicyIo,
): Promise<{ ok: true; tools: readonly unknown[] | undefined } | { ok: false }> {
  if (path === undefined) return { ok: true, tools: undefined };
  const loaded = await loadCatalogue(path);
  if (loaded.ok) return { ok: true, tools: loaded.value };
  findings(io, path, loaded.errors);
  return { ok: false };
}

async function validate(argv: readonly string[], io: PolicyIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      catalog: { type: 'string' },
      'check-files': { type: 'boolean', default: false },
      'skip-files': { type: 'boolean', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length === 0) throw new UsageError('name at least one policy file');
  const checkFiles = values['check-files'];
  if (values['skip-files']) {
    if (checkFiles) throw new UsageError('--check-files and --skip-files exclude each other');
    io.stderr.write(
      'toolgate policy: --skip-files is deprecated: validate reads the files a policy names only with --check-files\n',
    );
  }
  const catalogue = await catalogueOption(values.catalog, io);
  if (!catalogue.ok) return 1;
  const tools = catalogue.tools;
  let failed = false;
  for (const file of positionals) {
    const loaded = await loadPolicyInForce(file, false);
    if (!loaded.ok) {
      findings(io, file, loaded.errors);
      failed = true;
      continue;
    }
    const { policy } = loaded.value;
    if (checkFiles) {
      const withFiles = await loadPolicyInForce(file, true);
      if (!withFiles.ok) {
        findings(io, file, withFileHints(withFiles.errors, policy));
        failed = true;
        continue;
      }
    } else {
      findings(io, file, unreadFiles(policy));
    }
    if (tools !== undefined) findings(io, file, catalogueFindings(policy, tools), 'warning: ');
    io.stdout.write(`${file}: ok\n`);
  }
  return failed ? 1 : 0;
}

async function test(argv: readonly string[], io: PolicyIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { format: { type: 'string', default: 'tap' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.format !== 'tap' && values.format !== 'junit') throw new UsageError('--format is tap or junit');
  const [policyFile, ...testFiles] = positionals;
  if (policyFile === undefined || testFiles.length === 0)
    throw new UsageError('name a policy file and at least one test file');
  const loaded = await loadPolicyInForce(policyFile, false);
  if (!loaded.ok) {
    findings(io, policyFile, loaded.errors);
    return 1;
  }
  const results: CaseResult[] = [];
  let broken = false;
  for (const file of testFiles) {
    const r = await runTestFile(loaded.value, file);
    if (!r.ok) {
      findings(io, file, r.errors);
      broken = true;
      continue;
    }
    results.push(...r.value);
  }
  io.stdout.write(values.format === 'junit' ? junitReport(results) : tapReport(results));
  return broken || results.some((r) => !r.ok) ? 1 : 0;
}

async function explain(argv: readonly string[], io: PolicyIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: {
      principal: { type: 'string' },
      scopes: { type: 'string', default: '' },
      strength: { type: 'string', default: 'static' },
      claims: { type: 'string' },
      tool: { type: 'string' },
      resource: { type: 'string' },
      prompt: { type: 'string' },
      args: { type: 'string', default: '{}' },
      catalog: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  const [policyFile, ...extra] = positionals;
  if (policyFile === undefined || extra.length > 0) throw new UsageError('name exactly one policy file');
  if (!isPrincipalId(values.principal)) throw new UsageError('--principal is required: a principal id');
  const named = [values.tool, values.resource, values.prompt].filter((v) => v !== undefined);
  if (named.length !== 1 || named[0] === '')
    throw new UsageError('name what to decide: exactly one of --tool, --resource or --prompt');
  const target: Target =
    values.tool !== undefined
      ? { tool: values.tool }
      : values.resource !== undefined
        ? { resource: values.resource }
        : { prompt: values.prompt as string };
  const scopes = values.scopes === '' ? [] : values.scopes.split(',');
  if (!scopes.every(isScope)) throw new UsageError('--scopes is a comma-separated list of scope tokens');
  const strength = STRENGTHS.find((s) => s === values.strength);
  if (strength === undefined) throw new UsageError(`--strength is one of ${STRENGTHS.join(', ')}`);
  if (parseArguments(values.args) === undefined) throw new UsageError('--args is a JSON object');
  const claims = values.claims === undefined ? undefined : parseArguments(values.claims);
  if (values.claims !== undefined && !isRecord(claims)) throw new UsageError('--claims is a JSON object');

  const loaded = await loadPolicyInForce(policyFile, false);
  if (!loaded.ok) {
    findings(io, policyFile, loaded.errors);
    return 1;
  }
  const catalogue = await catalogueOption(values.catalog, io);
  if (!catalogue.ok) return 1;
  const response = await decideOffline(
    offlineDeps(loaded.value, catalogue.tools),
    { id: values.principal, scopes, strength, ...(claims !== undefined && { claims }) },
    target,
    values.args,
  );
  io.stdout.write(`${JSON.stringify(response, null, 2)}\n`);
  return 0;
}
