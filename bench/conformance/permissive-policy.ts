/**
 * A policy that lets the conformance client do everything the upstream
 * offers, so a comparison through toolgate in policy mode measures what
 * the policy path changes on the wire and nothing it refuses: anonymous
 * callers, an allow row for every tool and prompt the upstream lists, and a
 * prefix row for every URI scheme among its resources and templates.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

/** Every item of a paginated 2025-11-25 list, read statelessly. */
async function listAll(mcpUrl: string, method: string, field: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: page + 1,
      method,
      ...(cursor !== undefined && { params: { cursor } }),
    });
    const res = await fetch(mcpUrl, { method: 'POST', headers: HEADERS, body, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    // A stateless server may answer with one event: its last data line is the message.
    const json = text.trimStart().startsWith('{')
      ? text
      : (text.split('\n').findLast((l) => l.startsWith('data:')) ?? '').slice(5);
    const result = (JSON.parse(json) as { result?: Record<string, unknown> }).result ?? {};
    const items = result[field];
    if (Array.isArray(items)) out.push(...(items as Record<string, unknown>[]));
    cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  return out;
}

/** Writes the policy for what the upstream at `mcpUrl` offers into `dir`; returns its path. */
export async function writePermissivePolicy(mcpUrl: string, dir: string): Promise<string> {
  const [tools, prompts, resources, templates] = await Promise.all([
    listAll(mcpUrl, 'tools/list', 'tools'),
    listAll(mcpUrl, 'prompts/list', 'prompts'),
    listAll(mcpUrl, 'resources/list', 'resources'),
    listAll(mcpUrl, 'resources/templates/list', 'resourceTemplates'),
  ]);
  const schemes = new Set(
    [...resources.map((r) => r.uri), ...templates.map((t) => t.uriTemplate)]
      .filter((u): u is string => typeof u === 'string')
      .map((u) => /^([a-z][a-z0-9+.-]*):\/\//.exec(u)?.[1])
      .filter((s): s is string => s !== undefined),
  );
  const row = (fields: string) => `  - { principal: anonymous, ${fields}, effect: allow }`;
  const lines = [
    'version: 1',
    'authentication:',
    '  anonymous: { enabled: true }',
    'grants:',
    ...(tools.length === 0 ? ['  []'] : tools.map((t) => row(`tool: ${JSON.stringify(t.name)}`))),
    'resources:',
    '  grants:',
    ...(schemes.size === 0
      ? ['    []']
      : [...schemes].map((s) => `  ${row(`uriPrefix: ${JSON.stringify(`${s}://`)}`)}`)),
    'prompts:',
    '  grants:',
    ...(prompts.length === 0 ? ['    []'] : prompts.map((p) => `  ${row(`prompt: ${JSON.stringify(p.name)}`)}`)),
    '',
  ];
  const file = path.join(dir, 'permissive-policy.yaml');
  await writeFile(file, lines.join('\n'));
  return file;
}
