import type { ServerResponse } from 'node:http';
import { isRecord } from '../../json/record.ts';
import type { Classified } from '../../mcp/classify.ts';
import { sendError, type Refusal } from '../../mcp/jsonrpc.ts';
import { answersAsToolResult, toolErrorResult } from '../../mcp/tool-error.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Outcome } from '../outcome.ts';

/** Answers a request with a result toolgate made itself (discovery, an interceptor's respond). */
export function answer(res: ServerResponse, message: Classified, result: unknown): Outcome {
  // 2026-07-28 results carry resultType, and its clients refuse one without it.
  const stamped = message.era === 'modern' && isRecord(result) && !Object.hasOwn(result, 'resultType') ? { ...result, resultType: 'complete' } : result;
  const text = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: stamped });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  return 'answered';
}

/** Answers a request with a registry error and its challenges. */
export function refuse(res: ServerResponse, message: Classified, refusal: Refusal): Outcome {
  sendError(res, message.id, refusal.error, refusal.data, refusal.headers as Record<string, string> | undefined);
  return refusal.error;
}

/**
 * Refuses a tools/call. A refusal the model can fix by changing its call is,
 * from 2025-11-25 on and unless the operator chose `protocol`, a tool result
 * with `isError: true` (clients hand those to the model; protocol errors they
 * raise to the application). The outcome is the refusal either way, so
 * metrics and audit count it as one. `structured` is false when the tool
 * declares an outputSchema the error data would not satisfy.
 */
export function refuseCall(res: ServerResponse, message: Classified, refusal: Refusal, toolErrors: ToolErrors, structured: boolean): Outcome {
  if (toolErrors === 'result' && answersAsToolResult(message, refusal.error)) {
    answer(res, message, toolErrorResult(refusal.error, refusal.data, structured));
    return refusal.error;
  }
  return refuse(res, message, refusal);
}
