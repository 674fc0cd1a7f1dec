import { errors, type ErrorId } from '../../src/errors.ts';
import { wireFor, type WireRequest } from '../../src/mcp/tool-error.ts';
import { settingDefs } from '../../src/config/settings.ts';
import { createInjectorMetrics } from '../../src/inject/metrics.ts';
import { createMetrics } from '../../src/telemetry/metrics/metrics.ts';
import type { Registry } from 'prom-client';
import { CONDITION_VARIABLES } from '../../src/config/policy/condition-variables.ts';
import { SUBCOMMANDS } from '../../src/commands/policy.ts';

/**
 * The README tables that must match code, rendered from the code. The docs
 * test compares these with the README; `node test/helpers/doc-tables.ts`
 * prints them for pasting after a change.
 */
export function errorTable(): string {
  const rows = Object.values(errors).map(
    (e) =>
      `| \`${e.code}\` | ${e.status} | ${e.rpcCode} | ${e.retryable ? 'yes' : 'no'} | \`${e.hint}\` | ${e.toolResult === true ? 'yes' : 'no'} | ${e.when} |`,
  );
  return [
    '| code | HTTP | JSON-RPC | retryable | hint | tool result | when |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const ERAS: readonly (readonly [string, WireRequest])[] = [
  ['tools/call, 2025-06-18 and older', { method: 'tools/call', era: 'legacy', protocolVersion: '2025-06-18' }],
  ['tools/call, 2025-11-25', { method: 'tools/call', era: 'legacy', protocolVersion: '2025-11-25' }],
  ['tools/call, 2026-07-28', { method: 'tools/call', era: 'modern', protocolVersion: '2026-07-28' }],
  ['other methods', { method: 'tools/list', era: 'legacy', protocolVersion: '2025-11-25' }],
];

/** How each refusal is written in the default `result` mode, from `wireFor` itself (no challenge; a challenge keeps the status). */
export function wireTable(): string {
  const rows = (Object.keys(errors) as ErrorId[])
    .filter((id) => errors[id].outsideMcp !== true)
    .map((id) => {
      const forms = ERAS.map(([, request]) => {
        const w = wireFor(request, id, false, 'result');
        return w.form === 'tool_result' ? 'tool result' : w.status === 200 ? 'JSON-RPC error, 200' : `HTTP ${w.status}`;
      });
      return `| \`${id}\` | ${forms.join(' | ')} |`;
    });
  return [
    `| refusal | ${ERAS.map(([label]) => label).join(' | ')} |`,
    `|---|${ERAS.map(() => '---|').join('')}`,
    ...rows,
  ].join('\n');
}

export function settingsTable(): string {
  const rows = settingDefs.map((d) => `| \`${d.flag}\` | \`${d.env}\` | \`${d.default}\` | ${d.doc} |`);
  return ['| flag | environment | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

export async function metricsTable(): Promise<string> {
  const metrics = createMetrics();
  try {
    return registryTable(metrics.registry);
  } finally {
    metrics.dispose();
  }
}

/** The injector's metrics (`toolgate inject-webhook`, its own metrics port). */
export function injectorMetricsTable(): string {
  return registryTable(createInjectorMetrics().registry);
}

function registryTable(registry: Registry): string {
  const rows = registry
    .getMetricsAsArray()
    .filter((m) => !m.name.startsWith('toolgate_process_'))
    .map((m) => {
      const labels = (m as unknown as { labelNames: readonly string[] }).labelNames;
      return `| \`${m.name}\` | ${m.type} | ${labels.length > 0 ? labels.map((l) => `\`${l}\``).join(', ') : '—'} | ${m.help} |`;
    });
  return ['| metric | type | labels | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** The variables a condition may read, and on which rows. */
export function conditionsTable(): string {
  const rows = CONDITION_VARIABLES.map((v) => `| \`${v.name}\` | ${v.surfaces.join(', ')} | ${v.doc} |`);
  return ['| variable | rows | fields |', '|---|---|---|', ...rows].join('\n');
}

/** The offline policy commands, from the usage and help the CLI prints. */
export function policyCommandsTable(): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const rows = SUBCOMMANDS.map((c) => `| \`${cell(c.usage.map((l) => l.trim()).join(' '))}\` | ${cell(c.does)} |`);
  return ['| command | what it does |', '|---|---|', ...rows].join('\n');
}

export function section(readme: string, name: string): string | undefined {
  const m = new RegExp(`<!-- ${name}:begin -->\\n([\\s\\S]*?)\\n<!-- ${name}:end -->`).exec(readme);
  return m?.[1];
}

/** `node test/helpers/doc-tables.ts --write` refreshes the generated tables of the README and the detector page in place. */
if (import.meta.main) {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const { detectorTable } = await import('../../src/detectors/table.ts');
  const pages: [URL, Record<string, string>][] = [
    [
      new URL('../../README.md', import.meta.url),
      {
        errors: errorTable(),
        wire: wireTable(),
        settings: settingsTable(),
        metrics: await metricsTable(),
        'injector-metrics': injectorMetricsTable(),
        conditions: conditionsTable(),
        'policy-commands': policyCommandsTable(),
      },
    ],
    [new URL('../../docs/result-guard-detectors.md', import.meta.url), { detectors: detectorTable() }],
  ];
  for (const [path, tables] of pages) {
    let text = readFileSync(path, 'utf8');
    for (const [name, table] of Object.entries(tables)) {
      text = text.replace(
        new RegExp(`(<!-- ${name}:begin -->\\n)[\\s\\S]*?(\\n<!-- ${name}:end -->)`),
        (_m, open: string, close: string) => `${open}${table}${close}`,
      );
    }
    if (process.argv.includes('--write')) writeFileSync(path, text);
    else process.stdout.write(text);
  }
}
