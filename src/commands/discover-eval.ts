/**
 * `toolgate discover-eval --catalog FILE --queries FILE [--k 1,5,10,16]`:
 * measures the production discovery engine against a labelled query set and
 * prints one JSON line of recall@k (percent) and per-query latency.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { buildIndex, DEFAULT_PARAMS, type RankParams, type ToolDoc } from '../discovery/engine/engine.ts';
import { isRecord } from '../json/record.ts';
import { readCatalogFile } from './catalog-file.ts';

export interface LabelledQuery {
  readonly query: string;
  readonly gold: readonly string[];
}

export interface EvalReport {
  readonly queries: number;
  readonly recall: ReadonlyMap<number, number>;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export const USAGE = 'usage: toolgate discover-eval --catalog FILE --queries FILE [--k 1,5,10,16]';
/** Joins a repeated tool name to its copy number; cannot occur in a JSON-decoded name's visible text. */
const COPY_MARK = '\u0000';

interface Args {
  readonly catalog: string;
  readonly queries: string;
  readonly ks: readonly number[];
}

function parseArgs(argv: readonly string[]): Parsed<Args> {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    if (!['--catalog', '--queries', '--k'].includes(flag))
      return { ok: false, reason: `unknown argument ${JSON.stringify(flag)}` };
    if (value === undefined) return { ok: false, reason: `${flag} needs a value` };
    values.set(flag, value);
  }
  const catalog = values.get('--catalog');
  const queries = values.get('--queries');
  if (catalog === undefined || queries === undefined)
    return { ok: false, reason: '--catalog and --queries are required' };
  const kText = values.get('--k') ?? '1,5,10,16';
  const ks = kText.split(',').map((s) => Number(s.trim()));
  if (ks.length === 0 || ks.some((k) => !Number.isInteger(k) || k < 1 || k > 10_000)) {
    return { ok: false, reason: '--k must be a comma-separated list of whole numbers from 1 to 10000' };
  }
  return { ok: true, value: { catalog, queries, ks } };
}

function readQueriesText(path: string): Parsed<string> {
  try {
    return { ok: true, value: readFileSync(path, 'utf8') };
  } catch (err) {
    return {
      ok: false,
      reason: `--queries ${path}: cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    };
  }
}

/** Every entry needs a name to be ranked and found. */
async function readCatalog(path: string): Promise<Parsed<ToolDoc[]>> {
  const read = await readCatalogFile(path);
  if (!read.ok) return { ok: false, reason: `--catalog ${path}: ${read.problem}` };
  const tools: ToolDoc[] = [];
  for (const t of read.tools) {
    if (!isRecord(t) || typeof t.name !== 'string')
      return { ok: false, reason: `--catalog ${path}: every tool needs a string name` };
    tools.push(t as unknown as ToolDoc);
  }
  return { ok: true, value: tools };
}

function parseQueries(text: string): Parsed<LabelledQuery[]> {
  const out: LabelledQuery[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let q: unknown;
    try {
      q = JSON.parse(line);
    } catch {
      return { ok: false, reason: `queries line ${i + 1} is not valid JSON` };
    }
    const rec = q as { query?: unknown; gold?: unknown };
    if (
      typeof q !== 'object' ||
      q === null ||
      typeof rec.query !== 'string' ||
      !Array.isArray(rec.gold) ||
      rec.gold.length === 0 ||
      !rec.gold.every((g) => typeof g === 'string')
    ) {
      return { ok: false, reason: `queries line ${i + 1} needs a string query and a non-empty string array gold` };
    }
    out.push({ query: rec.query, gold: rec.gold });
  }
  if (out.length === 0) return { ok: false, reason: 'queries file holds no queries' };
  return { ok: true, value: out };
}

/**
 * Public catalogues repeat a name across servers. Each copy stays its own
 * document (as it is in the data) under a private key, and results are mapped
 * back to plain names, first occurrence kept.
 */
function keyCopies(tools: readonly ToolDoc[]): { tools: ToolDoc[]; extra: number } {
  const seen = new Map<string, number>();
  let extra = 0;
  const out = tools.map((t) => {
    const n = (seen.get(t.name) ?? 0) + 1;
    seen.set(t.name, n);
    if (n === 1) return t;
    extra++;
    return { ...t, name: `${t.name}${COPY_MARK}${n}` };
  });
  return { tools: out, extra };
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Runs the engine with every tool allowed; recall is the share of gold names in the first k. */
export function evaluate(
  catalog: readonly ToolDoc[],
  queries: readonly LabelledQuery[],
  ks: readonly number[],
  params: RankParams = DEFAULT_PARAMS,
): EvalReport {
  const { tools, extra } = keyCopies(catalog);
  const index = buildIndex(tools, params);
  const maxK = Math.max(...ks);
  const sums = new Map<number, number>(ks.map((k) => [k, 0]));
  const times: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    const { results } = index.search(q.query, { limit: maxK + extra });
    times.push(performance.now() - t0);
    const ranked: string[] = [];
    for (const r of results) {
      const name = r.name.split(COPY_MARK)[0] as string;
      if (!ranked.includes(name)) ranked.push(name);
    }
    const gold = new Set(q.gold);
    for (const k of ks) {
      const found = ranked.slice(0, k).filter((n) => gold.has(n)).length;
      sums.set(k, (sums.get(k) as number) + found / gold.size);
    }
  }
  times.sort((a, b) => a - b);
  return {
    queries: queries.length,
    recall: new Map(ks.map((k) => [k, (100 * (sums.get(k) as number)) / queries.length])),
    p50Ms: percentile(times, 50),
    p99Ms: percentile(times, 99),
  };
}

export async function loadEvalFiles(
  catalogPath: string,
  queriesPath: string,
): Promise<Parsed<{ catalog: ToolDoc[]; queries: LabelledQuery[] }>> {
  const catalog = await readCatalog(catalogPath);
  if (!catalog.ok) return catalog;
  const queriesText = readQueriesText(queriesPath);
  if (!queriesText.ok) return queriesText;
  const queries = parseQueries(queriesText.value);
  if (!queries.ok) return queries;
  return { ok: true, value: { catalog: catalog.value, queries: queries.value } };
}

export async function run(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (!args.ok) {
    process.stderr.write(`discover-eval: ${args.reason}; ${USAGE}\n`);
    return 2;
  }
  const files = await loadEvalFiles(args.value.catalog, args.value.queries);
  if (!files.ok) {
    process.stderr.write(`discover-eval: ${files.reason}\n`);
    return 2;
  }
  const report = evaluate(files.value.catalog, files.value.queries, args.value.ks);
  const line: Record<string, number> = { queries: report.queries };
  for (const [k, r] of report.recall) line[`recall@${k}`] = round(r, 1);
  line['p50_ms'] = round(report.p50Ms, 3);
  line['p99_ms'] = round(report.p99Ms, 3);
  process.stdout.write(`${JSON.stringify(line)}\n`);
  return 0;
}
