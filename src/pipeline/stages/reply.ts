import type { ServerResponse } from 'node:http';
import { isRecord } from '../../json/record.ts';
import type { Classified } from '../../mcp/classify.ts';
import { writeWhole } from '../../upstream/buffered.ts';
import { errorBody, sendError, type Refusal } from '../../mcp/jsonrpc.ts';
import { toolErrorResult, wireFor } from '../../mcp/tool-error.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import type { Outcome } from '../outcome.ts';

/** Sends an upstream response toolgate buffered (and maybe rewrote), with its headers and a length for the new body. */
export function sendBuffered(res: ServerResponse, status: number, headers: Record<string, string | string[] | undefined>, body: Buffer): Outcome {
  writeWhole(res, status, headers, body);
  return 'forwarded';
}

/** Answers a request with a result toolgate made itself (discovery, an interceptor's respond). */
export function answer(res: ServerResponse, message: Classified, result: unknown): Outcome {
  const text = resultBody(message, result);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  return 'answered';
}

function resultBody(message: Classified, result: unknown): string {
  // 2026-07-28 results carry resultType, and its clients refuse one without it.
  const stamped = message.era === 'modern' && isRecord(result) && !Object.hasOwn(result, 'resultType') ? { ...result, resultType: 'complete' } : result;
  return JSON.stringify({ jsonrpc: '2.0', id: message.id, result: stamped });
}

/**
 * The refusal `refuse` would write, as a status and a body, for a place that
 * writes it itself: an upstream answer replaced mid-stream, where only the
 * body can still change.
 */
export function refusalBody(message: Classified, refusal: Refusal, toolErrors: ToolErrors, structured: boolean): { readonly status: number; readonly body: string } {
  const wire = wireFor(message, refusal.error, false, toolErrors);
  if (wire.form === 'tool_result') return { status: 200, body: resultBody(message, toolErrorResult(refusal.error, refusal.data, structured)) };
  return { status: wire.status, body: errorBody(message.id, refusal.error, refusal.data) };
}

/**
 * Refuses a request as `wireFor` decides (mcp/tool-error.ts): a tool result
 * with `isError: true`, which clients hand to the model, or a JSON-RPC
 * error, at HTTP 200 unless the client must act at the HTTP layer. The
 * outcome is the refusal either way, so metrics and audit count it as one.
 * `structured` is false when the tool declares an outputSchema the error
 * data would not satisfy.
 */
export function refuse(res: ServerResponse, message: Classified, refusal: Refusal, toolErrors: ToolErrors, structured = true): Outcome {
  const wire = wireFor(message, refusal.error, refusal.headers?.['www-authenticate'] !== undefined, toolErrors);
  if (wire.form === 'tool_result') {
    answer(res, message, toolErrorResult(refusal.error, refusal.data, structured));
    return refusal.error;
  }
  sendError(res, message.id, refusal.error, refusal.data, refusal.headers as Record<string, string> | undefined, wire.status);
  return refusal.error;
}

/** `refuse` for a tools/call: the machine data goes in `structuredContent` only when the tool declares no outputSchema it would have to satisfy. */
export function refuseCall(ex: Exchange, res: ServerResponse, refusal: Refusal, toolErrors: ToolErrors): Outcome {
  const name = ex.message.name;
  const outputSchema = name === undefined ? undefined : ex.catalogue.get(name)?.tool.outputSchema;
  return refuse(res, ex.message, refusal, toolErrors, outputSchema === undefined);
}
