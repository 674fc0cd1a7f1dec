/**
 * The file every `--catalog` flag (and a policy test's `catalog:`) names,
 * read alike wherever it is taken: a saved `tools/list` result
 * (`{"tools": […]}`), the whole JSON-RPC response holding one, or the tools
 * array itself. The entries are returned as they are; each command decides
 * what an entry must hold.
 */
import { readFile } from 'node:fs/promises';
import { isRecord } from '../json/record.ts';

export type CatalogFile =
  | { readonly ok: true; readonly tools: readonly unknown[] }
  | { readonly ok: false; readonly problem: string };

/** Far beyond any real catalogue, small enough to read at once. */
const MAX_CATALOG_BYTES = 64 * 1024 * 1024;

/** The problem does not repeat the path: each caller names the file its own way. */
export async function readCatalogFile(path: string): Promise<CatalogFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    return { ok: false, problem: `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (bytes.length > MAX_CATALOG_BYTES) return { ok: false, problem: `larger than ${MAX_CATALOG_BYTES} bytes` };
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, problem: 'not valid JSON' };
  }
  const tools = toolsOf(doc);
  return tools === undefined
    ? { ok: false, problem: 'holds no tools: expected {"tools": [...]}, a tools/list response or an array of tools' }
    : { ok: true, tools };
}

function toolsOf(doc: unknown): readonly unknown[] | undefined {
  if (Array.isArray(doc)) return doc;
  if (!isRecord(doc)) return undefined;
  if (Array.isArray(doc.tools)) return doc.tools;
  return isRecord(doc.result) && Array.isArray(doc.result.tools) ? doc.result.tools : undefined;
}
