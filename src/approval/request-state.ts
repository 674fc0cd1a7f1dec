/**
 * toolgate's `requestState` on a 2026-07-28 `input_required` result. The
 * client echoes it on its retry; the spec says to treat it as attacker
 * controlled, so it is HMAC-signed and bound to the approval, the call's
 * binding (principal, tool, argument digest, policy revision) and an expiry.
 * It proves nothing by itself: the approval is still looked up and spent
 * once, server-side.
 */
import { createHash } from 'node:crypto';
import { signPayload, verifiedPayload } from '../auth/signed-payload.ts';
import { withoutParamsMembers } from '../json/params-members.ts';

const PREFIX = 'tg-approval.v1.';

export interface ApprovalState {
  readonly approvalId: string;
  readonly binding: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
}

export function signState(secret: Buffer, state: ApprovalState): string {
  return PREFIX + signPayload(secret, { a: state.approvalId, b: state.binding, e: state.expiresAt }, PREFIX);
}

/** Whether a requestState is toolgate's own (anything else belongs to the upstream and is passed on). */
export function isOurState(v: unknown): v is string {
  return typeof v === 'string' && v.startsWith(PREFIX);
}

/** The state when its signature verifies, it has not expired and it names this binding; undefined otherwise. */
export function verifyState(secret: Buffer, text: string, binding: string, now: number): ApprovalState | undefined {
  const parsed = verifiedPayload(secret, text.slice(PREFIX.length), PREFIX);
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { a, b, e } = parsed as Record<string, unknown>;
  if (typeof a !== 'string' || typeof b !== 'string' || typeof e !== 'number') return undefined;
  if (e <= now || b !== binding) return undefined;
  return { approvalId: a, binding: b, expiresAt: e };
}

/** A purpose-specific key from the one approval secret, so a state can never pass as a cookie or a CSRF token. */
export function subkey(secret: Buffer, purpose: 'state' | 'session' | 'csrf'): Buffer {
  return createHash('sha256').update(secret).update(`\u0000toolgate-approval-${purpose}`).digest();
}

/** What toolgate adds to a call when it asks for an approval, and the client sends back when it repeats it. */
const CONTINUATION = new Set(['requestState', 'inputResponses']);

/**
 * The call as the client first sent it: without the continuation of an
 * approval toolgate asked for, since the upstream never saw that round trip.
 * Any other body is returned as it is.
 */
export function withoutContinuation(params: Readonly<Record<string, unknown>> | undefined, body: Buffer): Buffer {
  return isOurState(params?.requestState) ? withoutParamsMembers(body, CONTINUATION) : body;
}
