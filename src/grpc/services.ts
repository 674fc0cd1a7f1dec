/**
 * The policy-backed services. Each is a small class that registers itself
 * on a server, like grpc-health-check's HealthImplementation.
 */
import type { Server } from '@grpc/grpc-js';
import type { GrpcPolicyDeps } from './deps.ts';
import { serviceDefinition } from './definitions.ts';
import { ApprovalAdmin } from './approvals.ts';
import { ContractAdmin } from './contracts.ts';
import { Discoverer } from './discover.ts';
import { explain } from './explain.ts';
import { GrantAdmin } from './grant-admin.ts';
import type { ApproveContractRequest__Output } from './generated/toolgate/v1/ApproveContractRequest.ts';
import type { ApproveContractResponse } from './generated/toolgate/v1/ApproveContractResponse.ts';
import type { ChangeResponse } from './generated/toolgate/v1/ChangeResponse.ts';
import type { DecideRequest__Output } from './generated/toolgate/v1/DecideRequest.ts';
import type { DecideResponse } from './generated/toolgate/v1/DecideResponse.ts';
import type { ListPendingRequest__Output } from './generated/toolgate/v1/ListPendingRequest.ts';
import type { ListPendingResponse } from './generated/toolgate/v1/ListPendingResponse.ts';
import type { DeleteRowRequest__Output } from './generated/toolgate/v1/DeleteRowRequest.ts';
import type { DiffContractRequest__Output } from './generated/toolgate/v1/DiffContractRequest.ts';
import type { DiffContractResponse } from './generated/toolgate/v1/DiffContractResponse.ts';
import type { DiscoverRequest__Output } from './generated/toolgate/v1/DiscoverRequest.ts';
import type { DiscoverResponse } from './generated/toolgate/v1/DiscoverResponse.ts';
import type { ExplainRequest__Output } from './generated/toolgate/v1/ExplainRequest.ts';
import type { ExplainResponse } from './generated/toolgate/v1/ExplainResponse.ts';
import type { GetRevisionRequest__Output } from './generated/toolgate/v1/GetRevisionRequest.ts';
import type { ListContractsRequest__Output } from './generated/toolgate/v1/ListContractsRequest.ts';
import type { ListContractsResponse } from './generated/toolgate/v1/ListContractsResponse.ts';
import type { ListRowsRequest__Output } from './generated/toolgate/v1/ListRowsRequest.ts';
import type { ListRowsResponse } from './generated/toolgate/v1/ListRowsResponse.ts';
import type { RevisionResponse } from './generated/toolgate/v1/RevisionResponse.ts';
import type { SetRowRequest__Output } from './generated/toolgate/v1/SetRowRequest.ts';
import { unary, type Answer } from './unary.ts';

export const POLICY_SERVICES = [
  'toolgate.v1.PolicyService',
  'toolgate.v1.DiscoveryService',
  'toolgate.v1.GrantAdmin',
  'toolgate.v1.ContractService',
  'toolgate.v1.ApprovalService',
] as const;

export class PolicyService {
  readonly #deps: GrpcPolicyDeps;
  readonly #adminScope: string;

  constructor(deps: GrpcPolicyDeps, adminScope: string) {
    this.#deps = deps;
    this.#adminScope = adminScope;
  }

  addToServer(server: Server): void {
    server.addService(serviceDefinition('toolgate.v1.PolicyService'), {
      Explain: unary<ExplainRequest__Output, ExplainResponse>('Explain', { deps: this.#deps }, async (caller, req) => {
        const r = await explain(this.#deps, caller, req, this.#adminScope);
        return r.ok ? { ok: true, value: r.response } : r;
      }),
    });
  }
}

export class DiscoveryService {
  readonly #deps: GrpcPolicyDeps;
  readonly #discoverer: Discoverer;

  constructor(deps: GrpcPolicyDeps) {
    this.#deps = deps;
    this.#discoverer = new Discoverer(deps);
  }

  addToServer(server: Server): void {
    server.addService(serviceDefinition('toolgate.v1.DiscoveryService'), {
      Discover: unary<DiscoverRequest__Output, DiscoverResponse>(
        'Discover',
        { deps: this.#deps },
        async (caller, req) => {
          const r = await this.#discoverer.discover(caller, req);
          return r.ok ? { ok: true, value: r.response } : r;
        },
      ),
    });
  }
}

export class GrantAdminService {
  readonly #deps: GrpcPolicyDeps;
  readonly #adminScope: string;
  readonly #admin: GrantAdmin;

  constructor(deps: GrpcPolicyDeps, adminScope: string) {
    this.#deps = deps;
    this.#adminScope = adminScope;
    this.#admin = new GrantAdmin(deps);
  }

  addToServer(server: Server): void {
    const options = { deps: this.#deps, adminScope: this.#adminScope };
    const admin = this.#admin;
    server.addService(serviceDefinition('toolgate.v1.GrantAdmin'), {
      SetRow: unary<SetRowRequest__Output, ChangeResponse>('SetRow', options, (_c, req) => admin.set(req.row)),
      DeleteRow: unary<DeleteRowRequest__Output, ChangeResponse>('DeleteRow', options, (_c, req) =>
        admin.delete(req.row),
      ),
      ListRows: unary<ListRowsRequest__Output, ListRowsResponse>('ListRows', options, (_c, req) =>
        admin.list(req.principal, req.tool),
      ),
      GetRevision: unary<GetRevisionRequest__Output, RevisionResponse>(
        'GetRevision',
        options,
        async (_c, req): Promise<Answer<RevisionResponse>> => {
          const r = await admin.revision(req.bump);
          return r.ok ? { ok: true, value: { revision: r.value } } : r;
        },
      ),
    });
  }
}

export class ContractService {
  readonly #deps: GrpcPolicyDeps;
  readonly #adminScope: string;
  readonly #admin: ContractAdmin;

  constructor(deps: GrpcPolicyDeps, adminScope: string) {
    this.#deps = deps;
    this.#adminScope = adminScope;
    this.#admin = new ContractAdmin(deps);
  }

  addToServer(server: Server): void {
    const options = { deps: this.#deps, adminScope: this.#adminScope };
    const admin = this.#admin;
    server.addService(serviceDefinition('toolgate.v1.ContractService'), {
      ListContracts: unary<ListContractsRequest__Output, ListContractsResponse>(
        'ListContracts',
        options,
        async (_c, req) => admin.list(req.tool),
      ),
      DiffContract: unary<DiffContractRequest__Output, DiffContractResponse>('DiffContract', options, async (_c, req) =>
        admin.diff(req.tool),
      ),
      ApproveContract: unary<ApproveContractRequest__Output, ApproveContractResponse>(
        'ApproveContract',
        options,
        (_c, req) => admin.approve(req),
      ),
    });
  }
}

export class ApprovalService {
  readonly #deps: GrpcPolicyDeps;
  readonly #adminScope: string;
  readonly #admin: ApprovalAdmin;

  constructor(deps: GrpcPolicyDeps, adminScope: string) {
    this.#deps = deps;
    this.#adminScope = adminScope;
    this.#admin = new ApprovalAdmin(deps.approvals);
  }

  addToServer(server: Server): void {
    const options = { deps: this.#deps, adminScope: this.#adminScope };
    const admin = this.#admin;
    server.addService(serviceDefinition('toolgate.v1.ApprovalService'), {
      ListPending: unary<ListPendingRequest__Output, ListPendingResponse>('ListPending', options, (_c, req) =>
        admin.list(req.limit),
      ),
      Decide: unary<DecideRequest__Output, DecideResponse>('Decide', options, (caller, req) =>
        admin.decide(caller, req),
      ),
    });
  }
}
