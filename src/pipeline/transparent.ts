import type { Pool } from 'undici';
import type { Settings } from '../config/settings.ts';
import { idOfBody, methodFromHeaders } from '../mcp/classify.ts';
import { methodLabel } from '../mcp/methods.ts';
import { requestClassified } from '../telemetry/channels.ts';
import { forward } from '../upstream/forward.ts';
import type { RequestPath } from './request-path.ts';
import { passThrough } from './stages/pass-through.ts';
import { mcpHeaders, readBodyWithin, readMessage } from './stages/read-message.ts';
import { refusedRepeatedFields } from './stages/repeated-fields.ts';
import { upstreamHeaders } from './stages/upstream-headers.ts';

/**
 * No policy: nobody is authenticated, and every path is forwarded. A message
 * is read and classified (so malformed or ambiguous requests are still
 * refused) unless its 2026-07-28 headers name its method and nobody listens
 * for the classified message (tracing, audit): then it goes on unparsed,
 * counted by its Mcp-Method, and the server that reads it checks the body
 * against those headers, as that revision requires of it.
 */
export function transparentPath(settings: Pick<Settings, 'maxBodyBytes' | 'principalHeader'>, pool: Pool): RequestPath {
  const headers = upstreamHeaders(settings, false);
  const pass = passThrough(pool, settings.maxBodyBytes);
  return {
    async message(req, res) {
      if (refusedRepeatedFields(req, res)) return { label: 'unclassified', outcome: 'header_mismatch' };
      const named = requestClassified.hasSubscribers ? undefined : methodFromHeaders(mcpHeaders(req));
      if (named !== undefined) {
        const label = methodLabel(named);
        const read = await readBodyWithin(req, res, settings.maxBodyBytes);
        if (!read.ok) return { label, outcome: read.outcome };
        const { body } = read;
        // Read only for an error answered in the upstream's place (unreachable, too large).
        const rpcId = () => idOfBody(mcpHeaders(req), body);
        return {
          label,
          outcome: await forward(pool, { req, res, headers: headers.plain(req, undefined), body, rpcId }),
        };
      }
      const read = await readMessage(req, res, settings.maxBodyBytes);
      if (!read.ok) return { label: 'unclassified', outcome: read.outcome };
      const { message, body } = read;
      return {
        label: methodLabel(message.method),
        outcome: await forward(pool, {
          req,
          res,
          headers: headers.message(req, message, undefined),
          body,
          rpcId: message.id,
        }),
      };
    },
    async sessionOperation(req, res) {
      const label = `http_${req.method?.toLowerCase()}`;
      if (refusedRepeatedFields(req, res)) return { label, outcome: 'header_mismatch' };
      return { label, outcome: await pass(req, res, null, headers.plain(req, undefined)) };
    },
    async otherPath(req, res) {
      return { label: 'passthrough', outcome: await pass(req, res, null, headers.unverified(req)) };
    },
  };
}
