import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Ended } from './outcome.ts';

/**
 * What happens to a request once the server has routed it: transparent mode
 * and policy mode are two implementations (transparent.ts, policy.ts), each
 * a fixed sequence of the stages in stages/. Every method answers the client
 * itself and resolves with how the request ended.
 */
export interface RequestPath {
  /** A POST on the MCP path: one JSON-RPC message. */
  message(req: IncomingMessage, res: ServerResponse): Promise<Ended>;
  /** GET, DELETE, HEAD or OPTIONS on the MCP path: 2025 session operations and CORS. */
  sessionOperation(req: IncomingMessage, res: ServerResponse): Promise<Ended>;
  /** A path other than the MCP endpoint, already normalised. */
  otherPath(req: IncomingMessage, res: ServerResponse, path: string): Promise<Ended>;
}
