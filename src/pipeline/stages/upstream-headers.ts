import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../auth/types.ts';
import type { Settings } from '../../config/settings.ts';
import type { Classified } from '../../mcp/classify.ts';
import { encodeHeaderValue } from '../../mcp/header-value.ts';
import { CREDENTIAL_HEADERS, paramFields, upstreamRequestHeaders } from '../../mcp/headers.ts';

/** The request headers the upstream is sent, for each kind of request. */
export interface UpstreamHeaders {
  /** A classified MCP message. */
  message(req: IncomingMessage, message: Classified, principal: Principal | undefined): string[];
  /** A session operation (GET, DELETE, HEAD, OPTIONS). */
  plain(req: IncomingMessage, principal: Principal | undefined): string[];
  /**
   * A path other than the MCP endpoint: nobody was authenticated there, so
   * the request goes as it came (OAuth metadata and the like), less the
   * identity field.
   */
  unverified(req: IncomingMessage): string[];
}

/**
 * What must never reach the server: the identity field, which only toolgate
 * may set (a client's copy is dropped on every path); in policy mode the
 * credentials toolgate verified; and Mcp-Method, Mcp-Name and Mcp-Param-*
 * that toolgate ignored (no 2026-07-28 version), which a server might act on.
 */
export function upstreamHeaders(
  settings: Pick<Settings, 'principalHeader'>,
  stripCredentials: boolean,
): UpstreamHeaders {
  const identity = settings.principalHeader;
  const spoofable: ReadonlySet<string> | undefined = identity === undefined ? undefined : new Set([identity]);
  const dropped = stripCredentials ? new Set([...CREDENTIAL_HEADERS, ...(spoofable ?? [])]) : spoofable;
  const droppedIgnored = new Set([...(dropped ?? []), 'mcp-method', 'mcp-name']);
  const ignoredFields = (req: IncomingMessage): ReadonlySet<string> => {
    const params = paramFields(req.rawHeaders);
    return params.length === 0 ? droppedIgnored : new Set([...droppedIgnored, ...params]);
  };
  const withIdentity = (headers: string[], principal: Principal | undefined): string[] => {
    if (identity !== undefined && principal !== undefined) headers.push(identity, encodeHeaderValue(principal.id));
    return headers;
  };
  return {
    message: (req, message, principal) =>
      withIdentity(upstreamRequestHeaders(req, message.era === 'legacy' ? ignoredFields(req) : dropped), principal),
    plain: (req, principal) => withIdentity(upstreamRequestHeaders(req, dropped), principal),
    unverified: (req) => upstreamRequestHeaders(req, spoofable),
  };
}
