import type { IncomingMessage, ServerResponse } from 'node:http';
import { repeatsMcpField } from '../../mcp/headers.ts';
import { sendError } from '../../mcp/jsonrpc.ts';

/**
 * An MCP header given twice is refused: Node joins the copies, and a server
 * may read either one. True when the request was refused.
 */
export function refusedRepeatedFields(req: IncomingMessage, res: ServerResponse): boolean {
  if (!repeatsMcpField(req.rawHeaders)) return false;
  sendError(res, null, 'header_mismatch');
  return true;
}
