import type { SideEffect } from '../config/policy/raw.ts';
import type { GrpcPolicyDeps } from '../grpc/deps.ts';
import type { RequestPath } from '../pipeline/request-path.ts';

/** What a mode's composition root hands main.ts: the request path and what the servers around it read. */
export interface Mode {
  readonly path: RequestPath;
  /** The side effect the policy in force declares for a tool (audit records writes); undefined without a policy. */
  sideEffect(tool: string): SideEffect | undefined;
  /** Resolves once toolgate has what it needs before it is ready (the first catalogue copy in policy mode). */
  readonly firstSync: Promise<void>;
  /** What the gRPC API's policy services read; undefined without a policy. */
  readonly grpc: GrpcPolicyDeps | undefined;
  synced(): boolean;
  /** The approver page's port, when TOOLGATE_APPROVAL_PORT is set. */
  readonly approvalPort: number | undefined;
}
