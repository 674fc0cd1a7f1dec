import type { ServerResponse } from 'node:http';
import { isRecord } from '../../json/record.ts';
import type { Classified } from '../../mcp/classify.ts';
import { sendError, type Refusal } from '../../mcp/jsonrpc.ts';
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
