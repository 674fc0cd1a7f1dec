import type { IncomingMessage } from 'node:http';
import type { ApprovalRule } from '../config/policy/grant-row.ts';
import type { ErrorId } from '../errors.ts';
import { approvalEvent, type ApprovalEvent } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import { bindingOf, newApprovalId, type ApprovalRecord, type BindingParts } from './record.ts';
import type { ApprovalStore } from './store.ts';
import { notify, type Webhook } from './webhook.ts';

/** A call that a `require_approval` row holds. */
export interface HeldCall extends BindingParts {
  readonly rule: ApprovalRule;
  /** The arguments as JSON text, for the approver page only. */
  readonly arguments: string;
  readonly request?: IncomingMessage;
}

/** What the held call gets: it runs (its approval is spent), or the caller is sent to the page, or told the outcome. */
export type CallAnswer =
  | { readonly kind: 'run' | 'denied' | 'expired' | 'unsettled'; readonly record: ApprovalRecord }
  | { readonly kind: 'ask'; readonly record: ApprovalRecord; readonly url: string }
  | { readonly kind: 'unavailable' };

export interface Approver {
  readonly id: string;
  readonly scopes: ReadonlySet<string>;
}

export type DecisionOutcome =
  | { readonly ok: true; readonly record: ApprovalRecord }
  | { readonly ok: false; readonly error: ErrorId; readonly record?: ApprovalRecord };

/** How often a waiting call re-reads the store, for a decision made on another replica or by the CLI. */
const DECISION_POLL_MS = 500;

export interface ApprovalsOptions {
  readonly store: ApprovalStore;
  /** Where approvers open an approval: the page's public base URL, without a trailing slash (known once the page listens). */
  readonly pageUrl: () => string;
  readonly webhook?: Webhook;
  readonly now?: () => number;
}

/**
 * The approval flow over one store: what a held call gets, and what an
 * approver may decide. Each step is published on the approval channel
 * (metrics, audit, a span event), with digests only.
 */
export class Approvals {
  readonly #store: ApprovalStore;
  readonly #pageUrl: () => string;
  readonly #webhook: Webhook | undefined;
  readonly #now: () => number;
  /** Calls waiting on a pending approval, by approval id: a decision made here wakes them at once. */
  readonly #waiting = new Map<string, Set<() => void>>();

  constructor(options: ApprovalsOptions) {
    this.#store = options.store;
    this.#pageUrl = options.pageUrl;
    this.#webhook = options.webhook;
    this.#now = options.now ?? Date.now;
  }

  urlOf(id: string): string {
    return `${this.#pageUrl()}/approvals/${id}`;
  }

  /**
   * A decided approval for this exact call is consumed here, atomically, so
   * it lets exactly one call run; a pending one sends the caller back to the
   * same page; without one, a new approval is asked for.
   */
  async forCall(call: HeldCall): Promise<CallAnswer> {
    const now = this.#now();
    const binding = bindingOf(call);
    try {
      const found = await this.#store.spend(binding, now);
      if (found.kind === 'spent' || found.kind === 'denied') announceOutsideDecision(found.record, call.request);
      if (found.kind === 'spent' || found.kind === 'expired') {
        publish(found.kind, found.record, call.request);
        return { kind: found.kind === 'spent' ? 'run' : 'expired', record: found.record };
      }
      if (found.kind === 'denied') return { kind: 'denied', record: found.record };
      if (found.kind === 'unsettled') {
        publish('unsettled', found.record, call.request);
        return { kind: 'unsettled', record: found.record };
      }
      if (found.kind === 'pending') return { kind: 'ask', record: found.record, url: this.urlOf(found.record.id) };
      const draft: ApprovalRecord = {
        id: newApprovalId(),
        binding,
        principal: call.principal,
        tool: call.tool,
        argumentsDigest: call.argumentsDigest,
        policyRevision: call.policyRevision,
        approverScope: call.rule.approverScope,
        selfApproval: call.rule.selfApproval,
        createdAt: now,
        expiresAt: now + call.rule.expiresIn * 1000,
        state: 'pending',
        arguments: call.arguments,
      };
      const opened = await this.#store.open(draft);
      const url = this.urlOf(opened.record.id);
      if (opened.created) {
        publish('requested', opened.record, call.request);
        if (this.#webhook !== undefined) notify(this.#webhook, opened.record, url);
      }
      return { kind: 'ask', record: opened.record, url };
    } catch (err) {
      log.warn('approval store unavailable', { error: (err as Error).name });
      return { kind: 'unavailable' };
    }
  }

  /**
   * `forCall` for a repeat that should wait for a pending approval rather
   * than be sent back at once: until it is decided, or for `waitMs`. The
   * approval is then spent, refused or still pending, as `forCall` says.
   * Decided on this replica, it wakes at once; elsewhere (another replica,
   * the CLI) it is seen within DECISION_POLL_MS.
   */
  async forCallWaiting(call: HeldCall, waitMs: number): Promise<CallAnswer> {
    const until = this.#now() + waitMs;
    for (;;) {
      const answer = await this.forCall(call);
      const left = until - this.#now();
      // A caller that went away is not waited for: its wait would only read the store for nobody.
      if (answer.kind !== 'ask' || left <= 0 || call.request?.socket.destroyed === true) return answer;
      await this.#decisionOf(answer.record.id, Math.min(DECISION_POLL_MS, left));
    }
  }

  #decisionOf(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#waiting.get(id) ?? new Set();
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0) this.#waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
      this.#waiting.set(id, waiters);
    });
  }

  async get(id: string): Promise<ApprovalRecord | undefined> {
    return this.#store.get(id);
  }

  async pending(limit: number): Promise<readonly ApprovalRecord[]> {
    return this.#store.pending(this.#now(), limit);
  }

  /**
   * An approver's decision. The approver needs the row's approverScope
   * (unless `scopeChecked` is false: the CLI, whose Redis credentials are the
   * operator's own authority) and may not decide their own call unless the
   * row allows self-approval.
   */
  async decide(
    id: string,
    approver: Approver,
    state: 'approved' | 'denied',
    via: NonNullable<ApprovalEvent['via']>,
    scopeChecked = true,
  ): Promise<DecisionOutcome> {
    try {
      const record = await this.#store.get(id);
      if (record === undefined) return { ok: false, error: 'approval_not_found' };
      if (scopeChecked && !approver.scopes.has(record.approverScope))
        return { ok: false, error: 'approver_scope_required', record };
      if (approver.id === record.principal && !record.selfApproval)
        return { ok: false, error: 'self_approval_refused', record };
      const r = await this.#store.decide(id, state, approver.id, this.#now(), via);
      if (r.kind === 'not_found') return { ok: false, error: 'approval_not_found' };
      if (r.kind === 'not_pending') return { ok: false, error: 'approval_already_decided', record: r.record };
      publish(state, r.record, undefined, approver.id, via);
      for (const wake of this.#waiting.get(id) ?? []) wake();
      return { ok: true, record: r.record };
    } catch (err) {
      log.warn('approval store unavailable', { error: (err as Error).name });
      return { ok: false, error: 'approval_unavailable' };
    }
  }
}

/**
 * A decision made where no toolgate replica publishes it (the CLI, which
 * writes only to the store) is published by the replica that spends the
 * approval or tells its caller it was denied: each happens exactly once.
 */
function announceOutsideDecision(r: ApprovalRecord, request: IncomingMessage | undefined): void {
  if (r.decidedVia !== 'cli' || (r.state !== 'approved' && r.state !== 'denied')) return;
  publish(r.state, r, request, r.decidedBy, 'cli');
}

function publish(
  event: ApprovalEvent['event'],
  r: ApprovalRecord,
  request?: IncomingMessage,
  approver?: string,
  via?: ApprovalEvent['via'],
): void {
  if (!approvalEvent.hasSubscribers) return;
  approvalEvent.publish({
    ...(request !== undefined && { request }),
    event,
    approvalId: r.id,
    principal: r.principal,
    tool: r.tool,
    argumentsDigest: r.argumentsDigest,
    policyRevision: r.policyRevision,
    ...(approver !== undefined && { approver }),
    ...(via !== undefined && { via }),
  } satisfies ApprovalEvent);
}
