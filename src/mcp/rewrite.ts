import type { JsonRpcId } from './jsonrpc.ts';
import { isRecord, parseRecord } from '../json/record.ts';

/** Edits a JSON-RPC result object; returns the replacement. */
export type ResultEdit = (result: Record<string, unknown>) => Record<string, unknown>;

/**
 * Applies `edit` to the result of the response that answers `id`, whether
 * the upstream sent it as one JSON body or as an event on an SSE stream
 * (other events pass unchanged). Undefined when no such result is found or
 * the body cannot be read: the caller must fail closed, not pass it on.
 */
export function rewriteResult(
  contentType: string | undefined,
  body: Buffer,
  id: JsonRpcId,
  edit: ResultEdit,
): Buffer | undefined {
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('application/json')) {
    const edited = editMessage(body.toString('utf8'), id, edit);
    return edited === undefined ? undefined : Buffer.from(edited);
  }
  if (type.startsWith('text/event-stream')) return rewriteSse(body.toString('utf8'), id, edit);
  return undefined;
}

function editMessage(text: string, id: JsonRpcId, edit: ResultEdit): string | undefined {
  const msg = parseRecord(text);
  if (msg === undefined || msg.id !== id) return undefined;
  if (isRecord(msg.error)) return text;
  if (!isRecord(msg.result)) return undefined;
  return JSON.stringify({ ...msg, result: edit(msg.result) });
}

function rewriteSse(text: string, id: JsonRpcId, edit: ResultEdit): Buffer | undefined {
  const events = text.split(/\r\n\r\n|\n\n|\r\r/);
  let found = false;
  const out = events.map((event) => {
    if (found) return event;
    const lines = event.split(/\r\n|\n|\r/);
    const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
    if (data.length === 0) return event;
    const edited = editMessage(data.join('\n'), id, edit);
    if (edited === undefined) return event;
    found = true;
    const kept = lines.filter((l) => !l.startsWith('data:'));
    return [...kept, `data: ${edited}`].join('\n');
  });
  return found ? Buffer.from(out.join('\n\n')) : undefined;
}
