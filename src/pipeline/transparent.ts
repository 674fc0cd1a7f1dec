import type { Pool } from 'undici';
import type { Settings } from '../config/settings.ts';
import { methodLabel } from '../mcp/methods.ts';
import { forward } from '../upstream/forward.ts';
import type { RequestPath } from './request-path.ts';
import { passThrough } from './stages/pass-through.ts';
import { readMessage } from './stages/read-message.ts';
import { refusedRepeatedFields } from './stages/repeated-fields.ts';
import { upstreamHeaders } from './stages/upstream-headers.ts';

/**
 * No policy: every message is read and classified (so malformed or
 * ambiguous requests are still refused) and then forwarded; nobody is
 * authenticated, and every path is forwarded.
 */
export function transparentPath(settings: Pick<Settings, 'maxBodyBytes' | 'principalHeader'>, pool: Pool): RequestPath {
  const headers = upstreamHeaders(settings, false);
  const pass = passThrough(pool, settings.maxBodyBytes);
  return {
    async message(req, res) {
      if (refusedRepeatedFields(req, res)) return { label: 'unclassified', outcome: 'header_mismatch' };
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
