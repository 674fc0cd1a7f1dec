import type { IncomingMessage } from 'node:http';
import type { SessionBindings } from '../../auth/session-bindings.ts';
import type { Principal } from '../../auth/types.ts';
import { declaresUrlElicitation, initializeCapabilities, requestCapabilities } from '../../mcp/capabilities.ts';
import type { Classified } from '../../mcp/classify.ts';
import { publishDecision } from '../../telemetry/channels.ts';
import type { ResponseHeadHook } from '../../upstream/forward.ts';

const SESSION_HEADER = 'mcp-session-id';

/**
 * A 2025 session id is not a credential: it is usable only by the principal
 * whose initialize opened it through toolgate.
 */
export interface SessionGuard {
  /** Whether the request's Mcp-Session-Id, if it has one, was opened by this principal. */
  owns(req: IncomingMessage, principal: Principal): boolean;
  /** What makes the id an initialize answer carries this principal's alone, remembering what its client declared. */
  bindOnInitialize(principal: Principal, message: Classified): ResponseHeadHook;
  /**
   * Whether the client can take a URL elicitation: declared in the request
   * (2026-07-28) or in its session's initialize (2025 revisions).
   */
  urlElicitation(req: IncomingMessage, message: Classified): boolean;
  /** For a DELETE: what forgets the binding once the upstream has ended the session. */
  endOnDelete(req: IncomingMessage): ResponseHeadHook | undefined;
}

export function sessionGuard(sessions: SessionBindings): SessionGuard {
  return {
    owns(req, principal) {
      const id = req.headers[SESSION_HEADER];
      if (id === undefined) return true;
      const owned = sessions.owns(id as string, principal.id);
      publishDecision({
        request: req,
        stage: 'session',
        allowed: owned,
        principal,
        ...(!owned && { error: 'session_not_found' }),
      });
      return owned;
    },
    bindOnInitialize(principal, message) {
      const url = declaresUrlElicitation(initializeCapabilities(message.params));
      return (status, head) => {
        const id = head[SESSION_HEADER];
        if (status >= 200 && status < 300 && typeof id === 'string') sessions.bind(id, principal.id, url);
      };
    },
    urlElicitation(req, message) {
      if (message.era === 'modern') return declaresUrlElicitation(requestCapabilities(message.params));
      const id = req.headers[SESSION_HEADER];
      return typeof id === 'string' && sessions.urlElicitation(id);
    },
    endOnDelete(req) {
      const id = req.headers[SESSION_HEADER];
      if (req.method !== 'DELETE' || id === undefined) return undefined;
      return (status) => {
        if (status >= 200 && status < 300) sessions.end(id as string);
      };
    },
  };
}
