import type { ServerResponse } from 'node:http';
import { isRecord } from '../../json/record.ts';
import type { Classified } from '../../mcp/classify.ts';
import { writeWhole } from '../../upstream/buffered.ts';
import { resultBody } from '../../mcp/answer-body.ts';
import { sendError, type Refusal } from '../../mcp/jsonrpc.ts';
import { toolErrorResult, wireFor } from '../../mcp/tool-error.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import type { KeyedEnd } from '../../execution/keyed-call.ts';
import type { StoredResponse } from '../../upstream/capture.ts';
import type { AnswerGuard } from '../../upstream/forward.ts';
import type { Outcome } from '../outcome.ts';
import { judgeWhole } from './result-guard.ts';

/** Sends an upstream response toolgate buffered (and maybe rewrote), with its headers and a length for the new body. */
export function sendBuffered(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): Outcome {
  writeWhole(res, status, headers, body);
  return 'forwarded';
}

/** Answers a request with a result toolgate made itself (discovery, an interceptor's respond). */
export function answer(res: ServerResponse, message: Classified, result: unknown): Outcome {
  const text = resultBody(message, result);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  return 'answered';
}

/**
 * Refuses a request as `wireFor` decides (mcp/tool-error.ts): a tool result
 * with `isError: true`, which clients hand to the model, or a JSON-RPC
 * error, at HTTP 200 unless the client must act at the HTTP layer. The
 * outcome is the refusal either way, so metrics and audit count it as one.
 * `structured` is false when the tool declares an outputSchema the error
 * data would not satisfy.
 */
export function refuse(
  res: ServerResponse,
  message: Classified,
  refusal: Refusal,
  toolErrors: ToolErrors,
  structured = true,
): Outcome {
  const wire = wireFor(message, refusal.error, refusal.headers?.['www-authenticate'] !== undefined, toolErrors);
  if (wire.form === 'tool_result') {
    answer(res, message, toolErrorResult(refusal.error, refusal.data, structured));
    return refusal.error;
  }
  sendError(res, message.id, refusal.error, refusal.data, refusal.headers, wire.status);
  return refusal.error;
}

/** `refuse` for a tools/call: the machine data goes in `structuredContent` only when the tool declares no outputSchema it would have to satisfy. */
export function refuseCall(ex: Exchange, res: ServerResponse, refusal: Refusal, toolErrors: ToolErrors): Outcome {
  const name = ex.message.name;
  const outputSchema = name === undefined ? undefined : ex.catalogue.get(name)?.tool.outputSchema;
  return refuse(res, ex.message, refusal, toolErrors, outputSchema === undefined);
}

/** Answers a tools/call as execution ended it: sent already, a refusal to write, or the stored answer of its key. */
export function concludeCall(
  ex: Exchange,
  res: ServerResponse,
  end: KeyedEnd,
  guard: AnswerGuard | undefined,
  toolErrors: ToolErrors,
): Outcome {
  switch (end.kind) {
    case 'sent':
      return end.outcome;
    case 'unsent':
      return refuseCall(ex, res, end.refusal, toolErrors);
    case 'replay':
      return replay(res, ex.message, end.response, guard);
  }
}

const REPLAYED_META = 'io.toolgate/replayed';

/**
 * The stored answer again, said to be a replay in the header payment APIs
 * use and in `_meta`. The record holds what the upstream sent, so the result
 * guard judges it again, under the policy in force now.
 */
function replay(
  res: ServerResponse,
  message: Classified,
  stored: StoredResponse,
  guard: AnswerGuard | undefined,
): Outcome {
  const replayed: Record<string, unknown> = { ...stored.message, id: message.id };
  const result = replayed.result;
  if (isRecord(result))
    replayed.result = { ...result, _meta: { ...(isRecord(result._meta) ? result._meta : {}), [REPLAYED_META]: true } };
  const text = JSON.stringify(replayed);
  const judged = stored.status === 200 && guard !== undefined ? judgeWhole(guard, text) : undefined;
  const out = judged?.body ?? text;
  res
    .writeHead(judged?.status ?? stored.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(out),
      'idempotent-replayed': 'true',
    })
    .end(out);
  return 'answered';
}
