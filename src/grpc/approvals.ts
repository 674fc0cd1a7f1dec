/**
 * ApprovalService: list pending approvals and decide one, with the
 * semantics of `toolgate approvals` but on this replica's approvals (shared
 * through Redis when configured). The caller needs the admin scope for the
 * service, and the row's approver scope to decide; self-approval is refused
 * unless the row allows it. Argument values never leave: only digests.
 */
import type { Approvals } from '../approval/approvals.ts';
import { isApprovalId, type ApprovalRecord } from '../approval/record.ts';
import type { Principal } from '../auth/types.ts';
import type { Approval } from './generated/toolgate/v1/Approval.ts';
import type { DecideRequest__Output } from './generated/toolgate/v1/DecideRequest.ts';
import type { DecideResponse } from './generated/toolgate/v1/DecideResponse.ts';
import type { ListPendingResponse } from './generated/toolgate/v1/ListPendingResponse.ts';
import type { Answer } from './unary.ts';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 10_000;

function toMessage(r: ApprovalRecord): Approval {
  return {
    id: r.id,
    state: r.state,
    principal: r.principal,
    tool: r.tool,
    argumentsDigest: r.argumentsDigest,
    policyRevision: r.policyRevision,
    approverScope: r.approverScope,
    selfApproval: r.selfApproval,
    createdAtMs: r.createdAt,
    expiresAtMs: r.expiresAt,
    decidedBy: r.decidedBy ?? '',
  };
}

export class ApprovalAdmin {
  readonly #approvals: Approvals;

  constructor(approvals: Approvals) {
    this.#approvals = approvals;
  }

  async list(limit: number): Promise<Answer<ListPendingResponse>> {
    const pending = await this.#approvals
      .pending(Math.min(limit === 0 ? DEFAULT_LIMIT : limit, MAX_LIMIT))
      .catch(() => undefined);
    if (pending === undefined) return { ok: false, error: 'approval_unavailable' };
    return { ok: true, value: { approvals: pending.map(toMessage) } };
  }

  async decide(caller: Principal, req: DecideRequest__Output): Promise<Answer<DecideResponse>> {
    if (!isApprovalId(req.id)) return { ok: false, error: 'approval_not_found' };
    const outcome = await this.#approvals.decide(req.id, caller, req.approve ? 'approved' : 'denied', 'grpc');
    return outcome.ok
      ? { ok: true, value: { approval: toMessage(outcome.record) } }
      : { ok: false, error: outcome.error };
  }
}
