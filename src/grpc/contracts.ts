/**
 * ContractService: list the catalogue's contracts against what is approved,
 * diff a tool's current contract with the last approved one, and approve
 * one, with the semantics of `toolgate contracts` but on this replica's own
 * state (its catalogue, its pins, shared through Redis when configured).
 */
import { contractChanges, contractOf } from '../catalogue/contracts/diff.ts';
import { isDigest } from '../catalogue/contracts/pins.ts';
import type { GrpcPolicyDeps } from './deps.ts';
import type { ApproveContractRequest__Output } from './generated/toolgate/v1/ApproveContractRequest.ts';
import type { ApproveContractResponse } from './generated/toolgate/v1/ApproveContractResponse.ts';
import type { DiffContractResponse } from './generated/toolgate/v1/DiffContractResponse.ts';
import type { ListContractsResponse } from './generated/toolgate/v1/ListContractsResponse.ts';
import type { Answer } from './unary.ts';

export class ContractAdmin {
  readonly #deps: GrpcPolicyDeps;

  constructor(deps: GrpcPolicyDeps) {
    this.#deps = deps;
  }

  list(tool: string): Answer<ListContractsResponse> {
    const contracts = [...this.#deps.contracts.assessments().values()]
      .filter((a) => tool === '' || a.name === tool)
      .map((a) => ({
        tool: a.name,
        digest: a.digest,
        status: a.status,
        approvedDigests: [...a.approved],
        quarantine: a.quarantine ?? '',
        changes: (a.changes ?? []).map((c) => ({ field: c.field, pointers: [...(c.pointers ?? [])] })),
        findings: a.findings.map((f) => ({ ...f })),
      }));
    return { ok: true, value: { contracts } };
  }

  diff(tool: string): Answer<DiffContractResponse> {
    const guard = this.#deps.contracts;
    const current = guard.currentTool(tool);
    if (current === undefined) return { ok: false, error: 'unknown_tool' };
    const approved = guard.approvedContract(tool);
    const approvedDigest =
      guard.assessments().get(tool)?.approved.includes(current.digest) === true
        ? current.digest
        : (guard.pin(tool)?.digest ?? '');
    const changes =
      approved === undefined || approvedDigest === current.digest
        ? []
        : contractChanges(approved, contractOf(current.tool));
    return {
      ok: true,
      value: {
        tool,
        digest: current.digest,
        approvedDigest: approved === undefined ? '' : approvedDigest,
        changes: changes.map((c) => ({
          pointer: c.pointer,
          beforeJson: Object.hasOwn(c, 'before') ? JSON.stringify(c.before) : '',
          afterJson: Object.hasOwn(c, 'after') ? JSON.stringify(c.after) : '',
        })),
      },
    };
  }

  async approve(req: ApproveContractRequest__Output): Promise<Answer<ApproveContractResponse>> {
    if (req.digest !== '' && !isDigest(req.digest)) return { ok: false, error: 'invalid_params' };
    const r = await this.#deps.contracts.approve(req.tool, req.digest === '' ? undefined : req.digest);
    // The pins live beside the grants, in the domain's Redis: when one cannot be written, neither can the other.
    if (!r.ok) return { ok: false, error: r.reason === 'unknown_tool' ? 'unknown_tool' : 'grants_unavailable' };
    const revision = await this.#deps.bumpRevision();
    if (revision === undefined) return { ok: false, error: 'grants_unavailable' };
    return { ok: true, value: { tool: req.tool, digest: r.digest, revision } };
  }
}
