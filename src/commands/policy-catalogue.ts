import type { ConfigError, Policy } from '../config/policy/policy.ts';
import { pointer } from '../config/policy/validate.ts';
import { isRecord } from '../json/record.ts';

/**
 * Where a policy and a server's catalogue disagree: grant rows and tool
 * metadata naming tools the catalogue lacks (a typo, or a tool the server
 * dropped), and catalogue tools no row allows (nobody can call them).
 * Warnings, not errors: a policy may well be ahead of or behind one server.
 */
export function catalogueFindings(policy: Policy, tools: readonly unknown[]): ConfigError[] {
  const names = new Set<string>();
  for (const t of tools) if (isRecord(t) && typeof t.name === 'string') names.add(t.name);
  const out: ConfigError[] = [];
  for (const row of policy.grants) {
    if (names.has(row.tool)) continue;
    const at = row.name?.startsWith('/') === true ? `${row.name}/tool` : pointer('grants');
    out.push({
      path: at,
      message: `tool ${JSON.stringify(row.tool)} is not in the catalogue${row.name?.startsWith('/') === false ? ` (row ${JSON.stringify(row.name)})` : ''}`,
    });
  }
  for (const name of Object.keys(policy.tools)) {
    if (!names.has(name)) out.push({ path: pointer('tools', name), message: 'this tool is not in the catalogue' });
  }
  const granted = new Set(policy.grants.filter((r) => r.effect === 'allow').map((r) => r.tool));
  for (const name of names) {
    if (!granted.has(name))
      out.push({ path: pointer('grants'), message: `no row allows catalogue tool ${JSON.stringify(name)}` });
  }
  return out;
}
