import { isRecord } from '../json/record.ts';
import type { Classified } from './classify.ts';
import { errorBody, type Refusal } from './jsonrpc.ts';
import { toolErrorResult, wireFor } from './tool-error.ts';

/** A JSON-RPC answer carrying `result`, as the request's era writes one. */
export function resultBody(message: Classified, result: unknown): string {
  // 2026-07-28 results carry resultType, and its clients refuse one without it.
  const stamped =
    message.era === 'modern' && isRecord(result) && !Object.hasOwn(result, 'resultType')
      ? { ...result, resultType: 'complete' }
      : result;
  return JSON.stringify({ jsonrpc: '2.0', id: message.id, result: stamped });
}

/**
 * A refusal as a status and a body, in the form `wireFor` decides, for a
 * place that writes it itself: an upstream answer replaced mid-stream,
 * where only the body can still change.
 */
export function refusalBody(
  message: Classified,
  refusal: Refusal,
  toolErrors: 'result' | 'protocol',
  structured: boolean,
): { readonly status: number; readonly body: string } {
  const wire = wireFor(message, refusal.error, false, toolErrors);
  if (wire.form === 'tool_result')
    return { status: 200, body: resultBody(message, toolErrorResult(refusal.error, refusal.data, structured)) };
  return { status: wire.status, body: errorBody(message.id, refusal.error, refusal.data) };
}
