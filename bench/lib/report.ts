import type { BenchConfig } from './config.ts';
import { placement } from './cpus.ts';
import type { Case, Figures, Outcome } from './runner.ts';

/** The human-readable part of the output: settings, one row per case, then every JSON key. */
export function renderTable(
  cases: readonly Case[],
  outcome: Outcome,
  config: BenchConfig,
  keys: Readonly<Record<string, number | null>>,
): string {
  const lines: string[] = [];
  lines.push(
    `toolgate benchmark: ${config.rounds} round(s) per case, each paired with the floor; per measurement ${config.warmupSeconds} s warm-up, ` +
      `${config.rateSeconds} s at ${config.rate} req/s offered (paced), ${config.seconds} s saturated at ${config.connections} connections ` +
      `(side by side with the floor, then alone for req/s); ` +
      (placement === undefined
        ? 'processes not pinned; '
        : `proxies on CPU ${placement.proxies}, load generator and helpers on ${placement.helpers}; `) +
      `${config.latencySeconds} s serial, ${config.sseSamples} serial SSE requests; medians over rounds` +
      (config.baseline === undefined ? '' : `; baseline ${config.baseline}`),
    '',
  );
  const rows = cases.map((c) => {
    const rounds = outcome.rounds.get(c.id) ?? [];
    const m: Figures = outcome.summary.figures.get(c.id) ?? {};
    const ratio = outcome.summary.cpuRatio.get(c.id);
    const saturated = outcome.summary.cpuRatioSaturated.get(c.id);
    const failure = outcome.failed.get(c.id);
    return [
      c.id,
      c.label,
      rounds.map((r) => (r.cpuUsAtRate === undefined ? '-' : r.cpuUsAtRate.toFixed(0))).join(' / ') || '-',
      num(m.cpuUsAtRate, 1),
      ratio === undefined ? '-' : `${ratio.median.toFixed(3)} ±${ratio.spread.toFixed(3)}`,
      num(m.cpuUsSideBySide, 1),
      saturated === undefined ? '-' : `${saturated.median.toFixed(3)} ±${saturated.spread.toFixed(3)}`,
      num(m.cpuUsPerReq, 1),
      num(m.rps, 0),
      num(m.rssLoadedMb, 1),
      num(m.p50Ms, 3),
      num(m.p99Ms, 3),
      num(m.sseFirstEventMs, 3),
      failure === undefined ? '' : `FAILED: ${failure.split('\n')[0]}`,
    ];
  });
  lines.push(
    ...grid(
      [
        'case',
        'target',
        'CPU µs/req at rate by round',
        'CPU µs/req at rate',
        'ratio to floor (IQR)',
        'CPU µs saturated beside floor',
        'ratio (IQR)',
        'CPU µs saturated alone',
        'req/s',
        'RSS MB',
        'p50 ms',
        'p99 ms',
        'SSE 1st ms',
        '',
      ],
      rows,
    ),
  );
  lines.push('');
  lines.push(
    ...grid(
      ['figure', 'value'],
      Object.entries(keys).map(([k, v]) => [k, v === null ? 'n/a' : String(v)]),
    ),
  );
  for (const w of outcome.warnings) lines.push(`warning: ${w}`);
  for (const [id, why] of outcome.failed) if (why.includes('\n')) lines.push(`${id} failed:\n${why}`);
  return lines.join('\n');
}

function num(v: number | undefined, digits: number): string {
  return v === undefined ? '-' : v.toFixed(digits);
}

function grid(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}
