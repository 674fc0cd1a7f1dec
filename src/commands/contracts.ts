/**
 * `toolgate contracts list | diff TOOL | approve TOOL [DIGEST] | lint`: the
 * operator's door to contract pinning. The catalogue comes from the
 * upstream's live `tools/list` (`--upstream ORIGIN [--mcp-path PATH]`, as the
 * sidecar takes them) or a saved list (`--catalog FILE`); shared pins from Redis (`--redis-url`, `--domain`);
 * the policy's approved digests from `--policy-file`. Approving writes the
 * pin and bumps the domain's grant revision, so every replica re-reads pins
 * and clients' cached lists and cursors refresh. Output is JSON lines
 * (`diff` prints a readable diff for the operator only); an error is one line
 * on stderr and exit status 2, and `lint` exits 1 when a tool has a
 * high-severity finding.
 */
import { buildCatalogue, type Catalogue } from '../catalogue/catalogue.ts';
import { assess } from '../catalogue/contracts/assess.ts';
import { contractChanges, contractOf } from '../catalogue/contracts/diff.ts';
import { isDigest, RedisPinStore, type Pin } from '../catalogue/contracts/pins.ts';
import { lintTool, summarize, type Finding } from '../catalogue/lint/lint.ts';
import { walkPages } from '../catalogue/paginate.ts';
import { failureCode, openLink } from '../catalogue/upstream.ts';
import { createRedisClient } from '../cache/redis.ts';
import { loadPolicyFile, type ContractsConfig } from '../config/policy/policy.ts';
import { createRedisSource, type RedisGrantSource } from '../grants/sources/redis.ts';
import { isRecord } from '../json/record.ts';
import { readCatalogFile } from './catalog-file.ts';
import { UPSTREAM_FLAGS, upstreamTarget, type UpstreamTarget } from './upstream-flags.ts';
import { parseFlags, REDIS_FLAGS, redisTarget, whenReady, type Parsed, type RedisTarget } from './redis-flags.ts';

export const USAGE =
  'usage: toolgate contracts list | diff TOOL | approve TOOL [DIGEST] | lint [--format text|json]' +
  ' (catalogue: --upstream ORIGIN [--mcp-path PATH, default /mcp] or --catalog FILE; pins: --redis-url URL [--domain D, default default]; approved digests: --policy-file FILE)';

const SOURCE_FLAGS = [...UPSTREAM_FLAGS, '--catalog', '--policy-file', '--timeout-ms'];
const VALUE_FLAGS = new Set([...REDIS_FLAGS, ...SOURCE_FLAGS, '--format']);
const ARITY: Readonly<Record<string, readonly [number, number]>> = {
  list: [0, 0],
  diff: [1, 1],
  approve: [1, 2],
  lint: [0, 0],
};

export interface ContractsIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

interface Invocation {
  readonly action: string;
  readonly args: readonly string[];
  readonly flags: ReadonlyMap<string, string>;
  /** The catalogue file, or else the upstream, or neither. */
  readonly catalog: string | undefined;
  readonly upstream: UpstreamTarget | undefined;
  readonly redis: RedisTarget | undefined;
}

const DEFAULT_CONFIG: ContractsConfig = {
  mode: 'alert',
  pin: 'explicit',
  unknownTools: 'allow',
  lint: 'alert',
  tools: {},
};

export async function run(argv: readonly string[], io: ContractsIo = process): Promise<number> {
  const parsed = parse(argv, io.env);
  if (!parsed.ok) return failure(io, parsed.reason);
  const inv = parsed.value;
  if (inv.upstream?.deprecation !== undefined) io.stderr.write(`toolgate contracts: ${inv.upstream.deprecation}\n`);
  if (inv.action === 'lint') return lint(inv, io);
  const client =
    inv.redis === undefined ? undefined : createRedisClient(inv.redis.redis, { name: 'toolgate-contracts-cli' });
  try {
    if (client !== undefined && !(await whenReady(client, (inv.redis as RedisTarget).redis.connectTimeoutMs)))
      return failure(io, 'cannot reach Redis');
    const pins = client === undefined ? undefined : new RedisPinStore(client, (inv.redis as RedisTarget).domain);
    const out = await execute(
      inv,
      pins,
      client === undefined ? undefined : createRedisSource(client, (inv.redis as RedisTarget).domain),
    );
    if (!out.ok) return failure(io, out.reason);
    for (const line of out.value) io.stdout.write(`${line}\n`);
    return 0;
  } finally {
    client?.disconnect();
  }
}

async function execute(
  inv: Invocation,
  pins: RedisPinStore | undefined,
  grants: RedisGrantSource | undefined,
): Promise<Parsed<string[]>> {
  const [tool, digestArg] = inv.args as [string, string | undefined];
  if (inv.action === 'approve') {
    if (pins === undefined || grants === undefined) {
      return {
        ok: false,
        reason:
          'approve writes the shared pins and needs --redis-url; without Redis, list the digest under contracts.tools in the policy instead',
      };
    }
    const catalogue = digestArg !== undefined && !hasSource(inv) ? undefined : await readCatalogue(inv);
    if (catalogue !== undefined && !catalogue.ok) return catalogue;
    const current = catalogue?.value.tools.get(tool);
    const digest = digestArg ?? current?.digest;
    if (digest === undefined)
      return {
        ok: false,
        reason: 'the catalogue has no tool of that name; give its DIGEST to approve a contract not served yet',
      };
    const contract = current !== undefined && current.digest === digest ? contractOf(current.tool) : undefined;
    if (
      !(await pins.approve(tool, {
        digest,
        by: 'operator',
        at: Date.now(),
        ...(contract !== undefined && { contract }),
      }))
    )
      return { ok: false, reason: 'Redis refused the command or did not answer in time' };
    const bumped = await grants.bump();
    if (!bumped.ok)
      return {
        ok: false,
        reason: 'the pin is written, but the grant revision could not be bumped; run `toolgate grants revision --bump`',
      };
    return { ok: true, value: [JSON.stringify({ tool, approved: digest, revision: bumped.revision })] };
  }
  const catalogue = await readCatalogue(inv);
  if (!catalogue.ok) return catalogue;
  const stored = pins === undefined ? new Map<string, Pin>() : await pins.all();
  if (stored === undefined) return { ok: false, reason: 'Redis refused the command or did not answer in time' };
  const config = await readConfig(inv);
  if (!config.ok) return config;
  const assessed = assess({
    catalogue: catalogue.value,
    config: config.value,
    pins: stored,
    lastApproved: new Map(),
    lint: (t) => lintTool(t.tool),
  });
  if (inv.action === 'list') {
    return {
      ok: true,
      value: [...assessed.values()].map((a) =>
        JSON.stringify({
          tool: a.name,
          digest: a.digest,
          status: a.status,
          approved: a.approved,
          ...(stored.get(a.name) !== undefined && { pinnedBy: stored.get(a.name)?.by }),
          ...(stored.get(a.name)?.at !== undefined && {
            pinnedAt: new Date(stored.get(a.name)?.at as number).toISOString(),
          }),
          ...(Object.hasOwn(config.value.tools, a.name) && { listedInPolicy: true }),
          ...(a.changes !== undefined && { changed: a.changes }),
          ...(a.findings.length > 0 && { findings: a.findings }),
        }),
      ),
    };
  }
  const a = assessed.get(tool);
  const current = catalogue.value.tools.get(tool);
  if (a === undefined || current === undefined) return { ok: false, reason: 'the catalogue has no tool of that name' };
  return { ok: true, value: renderDiff(tool, a.digest, a.approved, stored.get(tool), contractOf(current.tool)) };
}

/** For the operator's eyes only: this shows the texts, which audit and logs never do. */
function renderDiff(
  tool: string,
  digest: string,
  approved: readonly string[],
  pin: Pin | undefined,
  current: Record<string, unknown>,
): string[] {
  const head = `${tool}: current ${digest}`;
  if (approved.includes(digest)) return [head, 'approved: the current contract is approved'];
  if (pin?.contract === undefined) {
    return [
      head,
      approved.length === 0
        ? 'no contract is approved for this tool'
        : `approved digests: ${approved.join(', ')} (no approved contract text is stored to compare with)`,
    ];
  }
  const lines = [head, `approved ${pin.digest} (${pin.by})`];
  for (const c of contractChanges(pin.contract, current)) {
    lines.push(`~ ${c.pointer || '/'}`);
    if (Object.hasOwn(c, 'before')) lines.push(`- ${JSON.stringify(c.before)}`);
    if (Object.hasOwn(c, 'after')) lines.push(`+ ${JSON.stringify(c.after)}`);
  }
  return lines;
}

/**
 * Lints every entry of the catalogue (names repeated across servers
 * included); the summary line is last. A high-severity finding is what
 * `lint: enforce` quarantines, so it is what fails the command (status 1,
 * findings as `policy validate` reports them); medium ones are shown only.
 */
async function lint(inv: Invocation, io: ContractsIo): Promise<number> {
  const format = inv.flags.get('--format') ?? 'text';
  if (format !== 'text' && format !== 'json') return failure(io, '--format must be text or json');
  const entries = await readEntries(inv);
  if (!entries.ok) return failure(io, entries.reason);
  const results: Finding[][] = [];
  for (const entry of entries.value) {
    if (!isRecord(entry) || typeof entry.name !== 'string') continue;
    const findings = lintTool(entry);
    results.push(findings);
    if (findings.length === 0) continue;
    const where = typeof entry.server === 'string' ? `${entry.server}/${entry.name}` : entry.name;
    io.stdout.write(
      format === 'json'
        ? `${JSON.stringify({ tool: where, findings })}\n`
        : `${where}: ${findings.map((f) => `${f.rule} (${f.severity}) at ${f.pointer}`).join('; ')}\n`,
    );
  }
  const summary = summarize(results);
  io.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary.high > 0 ? 1 : 0;
}

function hasSource(inv: Invocation): boolean {
  return inv.catalog !== undefined || inv.upstream !== undefined;
}

async function readCatalogue(inv: Invocation): Promise<Parsed<Catalogue>> {
  const entries = await readEntries(inv);
  return entries.ok ? { ok: true, value: buildCatalogue(entries.value, Date.now()).catalogue } : entries;
}

const ignore = () => {};

async function readEntries(inv: Invocation): Promise<Parsed<readonly unknown[]>> {
  const file = inv.catalog;
  if (file !== undefined) {
    const read = await readCatalogFile(file);
    return read.ok ? { ok: true, value: read.tools } : { ok: false, reason: `--catalog ${file}: ${read.problem}` };
  }
  if (inv.upstream === undefined)
    return { ok: false, reason: 'give --catalog FILE or --upstream ORIGIN (or TOOLGATE_UPSTREAM)' };
  const timeoutMs = Number(inv.flags.get('--timeout-ms') ?? 10_000);
  if (!(Number.isSafeInteger(timeoutMs) && timeoutMs > 0))
    return { ok: false, reason: '--timeout-ms must be a positive whole number' };
  const signal = AbortSignal.timeout(timeoutMs * 4);
  try {
    const link = await openLink({
      url: inv.upstream.endpoint,
      requestTimeoutMs: timeoutMs,
      signal,
      onListChanged: ignore,
      onTrouble: ignore,
      onLost: ignore,
    });
    try {
      const walk = await walkPages((cursor) => link.listPage(cursor));
      return walk.ok
        ? { ok: true, value: walk.entries }
        : {
            ok: false,
            reason: `cannot read the upstream's tools/list (${walk.code === 'request_failed' ? failureCode(walk.error) : walk.code})`,
          };
    } finally {
      await link.close();
    }
  } catch (e) {
    return { ok: false, reason: `cannot connect to the upstream (${failureCode(e)})` };
  }
}

async function readConfig(inv: Invocation): Promise<Parsed<ContractsConfig>> {
  const path = inv.flags.get('--policy-file');
  if (path === undefined) return { ok: true, value: DEFAULT_CONFIG };
  const loaded = await loadPolicyFile(path);
  if (!loaded.ok)
    return {
      ok: false,
      reason: `invalid policy: ${loaded.errors[0]?.path || '/'}: ${loaded.errors[0]?.message ?? 'invalid'}`,
    };
  const c = loaded.policy.contracts;
  return {
    ok: true,
    value: { ...c, mode: c.mode === 'off' ? 'alert' : c.mode, lint: c.lint === 'off' ? 'alert' : c.lint },
  };
}

function parse(argv: readonly string[], env: NodeJS.ProcessEnv): Parsed<Invocation> {
  const [action, ...rest] = argv;
  const arity = action === undefined ? undefined : ARITY[action];
  if (action === undefined || arity === undefined) return { ok: false, reason: USAGE };
  const allowed = (name: string) =>
    action === 'lint' ? name === '--format' || SOURCE_FLAGS.includes(name) : name !== '--format';
  const parsed = parseFlags(rest, VALUE_FLAGS, new Set(), allowed, USAGE);
  if (!parsed.ok) return parsed;
  const { flags, positional } = parsed.value;
  if (positional.length < arity[0] || positional.length > arity[1]) return { ok: false, reason: USAGE };
  const digest = positional[1];
  if (digest !== undefined && !isDigest(digest))
    return { ok: false, reason: 'DIGEST must be 64 lower-case hex digits (as `contracts list` prints it)' };
  const catalog = flags.get('--catalog');
  if (catalog !== undefined && flags.has('--upstream'))
    return { ok: false, reason: 'give one of --catalog FILE or --upstream ORIGIN, not both' };
  // A catalogue file wins over an upstream the environment names.
  const upstream = catalog === undefined ? upstreamTarget(flags, env) : { ok: true as const, value: undefined };
  if (!upstream.ok) return upstream;
  const target = redisTarget(flags, env);
  if (!target.ok) return target;
  return {
    ok: true,
    value: { action, args: positional, flags, catalog, upstream: upstream.value, redis: target.value },
  };
}

function failure(io: ContractsIo, reason: string): number {
  io.stderr.write(`toolgate contracts: ${reason}\n`);
  return 2;
}
