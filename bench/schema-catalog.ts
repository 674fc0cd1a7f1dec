import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileToolSchema } from '../src/validation/compile.ts';
import { corpus } from '../test/helpers/testdata.ts';

/**
 * Real-world checks of the argument validator: how many inputSchemas of real
 * MCP servers it can enforce (and why not the rest), and how it fares on
 * regexes known for catastrophic backtracking. Prints one JSON line last.
 */

export const CATALOG_PATH = join(corpus('livemcpbench').path, 'catalog.json');
export const REDOS_PATH = corpus('redos').path;
/** How many times each attack's pump is repeated. */
export const PUMP_REPEATS = 1_000;

export interface CatalogReport {
  tools: number;
  enforceable: number;
  refused: number;
  byReason: Record<string, number>;
}

export function catalogReport(path: string = CATALOG_PATH): CatalogReport {
  const tools = JSON.parse(readFileSync(path, 'utf8')) as { inputSchema: unknown }[];
  const byReason: Record<string, number> = {};
  let enforceable = 0;
  for (const tool of tools) {
    const compiled = compileToolSchema(tool.inputSchema);
    if (compiled.ok) enforceable += 1;
    else byReason[compiled.reason] = (byReason[compiled.reason] ?? 0) + 1;
  }
  return { tools: tools.length, enforceable, refused: tools.length - enforceable, byReason };
}

export interface RedosAttack {
  readonly id: string;
  readonly pattern: string;
  readonly attack: { readonly prefix: string; readonly pump: string; readonly suffix: string };
}

export function loadAttacks(path: string = REDOS_PATH): RedosAttack[] {
  return JSON.parse(readFileSync(path, 'utf8')) as RedosAttack[];
}

export function attackString(a: RedosAttack, repeats: number = PUMP_REPEATS): string {
  return a.attack.prefix + a.attack.pump.repeat(repeats) + a.attack.suffix;
}

export interface RedosReport {
  patterns: number;
  compiled: number;
  refused: number;
  byReason: Record<string, number>;
  slowestMs: number;
  slowestId: string;
}

export function redosReport(path: string = REDOS_PATH): RedosReport {
  const report: RedosReport = { patterns: 0, compiled: 0, refused: 0, byReason: {}, slowestMs: 0, slowestId: '' };
  for (const a of loadAttacks(path)) {
    report.patterns += 1;
    const compiled = compileToolSchema({ type: 'string', pattern: a.pattern });
    if (!compiled.ok) {
      report.refused += 1;
      report.byReason[compiled.reason] = (report.byReason[compiled.reason] ?? 0) + 1;
      continue;
    }
    report.compiled += 1;
    const input = attackString(a);
    const started = performance.now();
    compiled.validate(input);
    const ms = performance.now() - started;
    if (ms > report.slowestMs) {
      report.slowestMs = ms;
      report.slowestId = a.id;
    }
  }
  return report;
}

function main(): void {
  const catalog = catalogReport();
  console.log(
    `catalogue: ${catalog.enforceable}/${catalog.tools} inputSchemas enforceable; refused by reason ${JSON.stringify(catalog.byReason)}`,
  );
  const redos = redosReport();
  console.log(
    `redos: ${redos.compiled}/${redos.patterns} patterns compiled and validated their attack (pump x${PUMP_REPEATS}), ${redos.refused} refused ${JSON.stringify(redos.byReason)}; slowest ${redos.slowestMs.toFixed(2)} ms (${redos.slowestId})`,
  );
  console.log(JSON.stringify({ catalog, redos: { ...redos, slowestMs: Number(redos.slowestMs.toFixed(2)) } }));
}

if (import.meta.main) main();
