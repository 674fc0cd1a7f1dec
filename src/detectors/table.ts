import { DETECTORS } from './detectors.ts';

/** Pipes escaped: a table row splits on them even inside a code span. */
function cell(s: string): string {
  return s.replaceAll('|', '\\|');
}

/** The docs table of docs/result-guard-detectors.md, rendered from the detectors themselves. */
export function detectorTable(): string {
  const rows = [...DETECTORS.values()].map(
    (d) => `| \`${d.id}\` | ${cell(d.summary)} | \`\` ${cell(d.pattern)} \`\` | ${cell(d.source)} |`,
  );
  return ['| id | finds | pattern | source |', '|---|---|---|---|', ...rows].join('\n');
}
