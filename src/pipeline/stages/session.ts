import type { IncomingMessage } from 'node:http';
import type { SessionBindings } from '../../auth/session-bindings.ts';
import type { Principal } from '../../auth/types.ts';
import { decision } from '../../telemetry/channels.ts';
import type { ResponseHeadHook } from '../../upstream/forward.ts';

const SESSION_HEADER = 'mcp-session-id';

/**
 * A 2025 session id is not a credential: it is usable only by the principal
 * whose initialize opened it through toolgate.
 */
export interface SessionGuard {
  /** Whether the request's Mcp-Session-Id, if it has one, was opened by this principal. */
  owns(req: IncomingMessage, principal: Principal): boolean;
  /** What makes the id an initialize answer carries this principal's alone. */
  bindOnInitialize(principal: Principal): ResponseHeadHook;
  /** For a DELETE: what forgets the binding once the upstream has ended the session. */
  endOnDelete(req: IncomingMessage): ResponseHeadHook | undefined;
}

export function sessionGuard(sessions: SessionBindings): SessionGuard {
  return {
    owns(req, principal) {
      const id = req.headers[SESSION_HEADER];
      if (id === undefined) return true;
      const owned = sessions.owns(id as string, principal.id);
      if (decision.hasSubscribers) {
        decision.publish({ request: req, stage: 'session', allowed: owned, principal, ...(!owned && { error: 'session_not_found' }), durationSeconds: 0 });
      }
      return owned;
    },
    bindOnInitialize(principal) {
      return (status, head) => {
        const id = head[SESSION_HEADER];
        if (status >= 200 && status < 300 && typeof id === 'string') sessions.bind(id, principal.id);
      };
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
