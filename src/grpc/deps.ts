import type { Approvals } from '../approval/approvals.ts';
import type { Principal } from '../auth/types.ts';
import type { ContractGuard } from '../catalogue/contracts/guard.ts';
import type { PolicyInForce } from '../auth/policy-in-force.ts';
import type { Settings } from '../config/settings.ts';
import type { RedisGrantSource } from '../grants/sources/redis.ts';
import type { GrantStore } from '../grants/store.ts';
import type { CatalogueView } from '../catalogue/view.ts';
import type { Interceptor } from '../interceptors/contract.ts';

/** What the policy-backed services read from the running enforcement. */
export interface GrpcPolicyDeps {
  /** The enforcement in force; read once per call. */
  readonly current: () => PolicyInForce;
  readonly grants: GrantStore;
  readonly catalogue: CatalogueView;
  /** The interceptor chain of the MCP path, in order (Explain runs it as a dry run). */
  readonly interceptors: readonly Interceptor[];
  /** Contract pins and quarantine (ContractService). */
  readonly contracts: ContractGuard;
  /** Spends a new grant revision (an approval changes what callers may see); undefined when it could not. */
  bumpRevision(): Promise<number | undefined>;
  /** Human approvals: ApprovalService lists and decides them. */
  readonly approvals: Approvals;
  /**
   * The domain's grant rows in Redis, over the sidecar's shared command
   * connection, when grants live there; GrantAdmin writes them. Absent with
   * grants from the policy file.
   */
  readonly grantRows?: RedisGrantSource | undefined;
}

/** What a decision needs (Explain, and the offline `toolgate policy` commands): the policy, grants, catalogue and chain. */
export type DecisionDeps = Pick<GrpcPolicyDeps, 'current' | 'grants' | 'catalogue' | 'interceptors'>;

export interface GrpcServerOptions {
  readonly settings: Pick<Settings, 'grpcAdminScope' | 'grpcTlsCertFile' | 'grpcTlsKeyFile' | 'host' | 'grpcPort'>;
  /** Readiness reasons, as /readyz reports them; empty means ready. */
  readonly notReadyReasons: () => readonly string[];
  /** Absent in transparent mode: only Health is served. */
  readonly policy?: GrpcPolicyDeps | undefined;
}

export function holdsAdmin(principal: Principal, scope: string): boolean {
  return principal.scopes.has(scope);
}
