/**
 * One approval: a person's yes or no to one exact call, bound to who called,
 * which tool, the RFC 8785 digest of its arguments and the policy revision it
 * was asked under. It is pending until decided, lives until `expiresAt`, and
 * an approved one is spent by the one call it allows.
 */
import { createHash, randomBytes } from 'node:crypto';

type ApprovalState = 'pending' | 'approved' | 'denied';

export interface ApprovalRecord {
  /** 128 random bits, base64url: the elicitation id and the page's address. */
  readonly id: string;
  /** SHA-256 hex over principal, tool, argument digest and policy revision (see `bindingOf`). */
  readonly binding: string;
  readonly principal: string;
  readonly tool: string;
  readonly argumentsDigest: string;
  /** The control revision and the policy source digest the call was decided under. */
  readonly policyRevision: string;
  readonly approverScope: string;
  readonly selfApproval: boolean;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly state: ApprovalState;
  readonly decidedBy?: string;
  readonly decidedAt?: number;
  /**
   * Where it was decided. A decision made outside a toolgate replica (the
   * CLI) is recorded in audit and metrics by the replica that spends it or
   * tells the caller it was denied: that happens exactly once.
   */
  readonly decidedVia?: 'page' | 'cli' | 'grpc';
  /**
   * The arguments as JSON text, kept only so the approver page can show what
   * is being approved; nothing else (logs, audit, CLI, gRPC) ever reads it.
   */
  readonly arguments: string;
}

/** What a call's approval needs to be identified. */
export interface BindingParts {
  readonly principal: string;
  readonly tool: string;
  readonly argumentsDigest: string;
  readonly policyRevision: string;
}

export function bindingOf(parts: BindingParts): string {
  // JSON keeps the parts apart whatever characters they hold.
  return createHash('sha256')
    .update(JSON.stringify([parts.principal, parts.tool, parts.argumentsDigest, parts.policyRevision]))
    .digest('hex');
}

export function newApprovalId(): string {
  return randomBytes(16).toString('base64url');
}

/** Approval ids as `newApprovalId` makes them; anything else is refused before a store is asked. */
export function isApprovalId(v: unknown): v is string {
  return typeof v === 'string' && /^[A-Za-z0-9_-]{22}$/.test(v);
}

/**
 * How long a record outlives its expiry: a repeat arriving in this window is
 * told `approval_expired` rather than silently asked again.
 */
export const EXPIRED_NOTICE_MS = 60 * 60 * 1000;

/**
 * What a repeat of the call finds, atomically: nothing, still pending, a
 * decided record consumed, or (`unsettled`) an approved record whose spend
 * was applied but neither confirmed nor taken back, so its call may have run.
 */
export type SpendResult =
  | { readonly kind: 'none' }
  | { readonly kind: 'pending'; readonly record: ApprovalRecord }
  | { readonly kind: 'spent' | 'denied' | 'expired' | 'unsettled'; readonly record: ApprovalRecord };

/** What a decision found. */
export type DecideResult =
  | { readonly kind: 'decided'; readonly record: ApprovalRecord }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_pending'; readonly record: ApprovalRecord };

/**
 * What a repeat does with the record it found: a pending one inside its time
 * stays; anything else is consumed (spent, denied told once, or expired).
 */
export function spendOutcome(record: ApprovalRecord, now: number): SpendResult['kind'] {
  if (record.expiresAt <= now) return 'expired';
  if (record.state === 'pending') return 'pending';
  return record.state === 'approved' ? 'spent' : 'denied';
}

/** The decided record, or why it cannot be decided: only a pending record inside its time can. */
export function decided(
  record: ApprovalRecord,
  state: 'approved' | 'denied',
  approver: string,
  now: number,
  via?: ApprovalRecord['decidedVia'],
): ApprovalRecord | undefined {
  if (record.state !== 'pending' || record.expiresAt <= now) return undefined;
  return { ...record, state, decidedBy: approver, decidedAt: now, ...(via !== undefined && { decidedVia: via }) };
}

export function parseRecord(text: string): ApprovalRecord {
  return JSON.parse(text) as ApprovalRecord;
}
