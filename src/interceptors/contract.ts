import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/types.ts';
import type { Policy } from '../config/policy/policy.ts';
import type { ErrorId } from '../errors.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import type { Classified } from '../mcp/classify.ts';
import type { ErrorData, Refusal } from '../mcp/jsonrpc.ts';
import type { CatalogueView } from '../catalogue/view.ts';

/**
 * Everything an interceptor may look at for one request. Immutable: an
 * interceptor decides, it never edits the request (arguments are forwarded
 * byte-identical).
 */
export interface Exchange {
  /** The inbound request; identifies the exchange to telemetry and carries its headers. */
  readonly request: IncomingMessage;
  readonly message: Classified;
  readonly principal: Principal;
  /** The policy in force for this request, read once when it arrived. */
  readonly policy: Policy;
  /** The principal's grants at the control revision in force. */
  readonly snapshot: GrantSnapshot;
  /** Every grant row naming a tool, across principals (deny path: which scopes would grant it). */
  rowsForTool(tool: string): Promise<readonly GrantRow[] | undefined>;
  readonly catalogue: CatalogueView;
  /**
   * The client declared URL-mode elicitation (in this request on 2026-07-28,
   * in its session's initialize before): approval may be asked for that
   * way. Absent at the offline doors, which ask no one.
   */
  readonly urlElicitation?: boolean;
}

export type Verdict =
  | {
      readonly kind: 'pass';
      /** The grant row that allowed, when a stage decided by one. */
      readonly rule?: string;
    }
  | ({
      readonly kind: 'deny';
      /** The refusal was decided by grant rows in audit mode: recorded, not enforced (see pipeline/shadow.ts). */
      readonly audit?: true;
      /** The grant row that refused, when a stage decided by one. */
      readonly rule?: string;
      /** Audit-mode grant rows held beside the enforced ones that refused: recorded as shadow mode records them. */
      readonly wouldDeny?: { readonly rule: string | undefined };
    } & Refusal)
  | { readonly kind: 'respond'; readonly result: unknown };

export const PASS: Verdict = Object.freeze({ kind: 'pass' });

export function deny(error: ErrorId, data?: ErrorData, headers?: Readonly<Record<string, string>>): Verdict {
  return { kind: 'deny', error, ...(data !== undefined && { data }), ...(headers !== undefined && { headers }) };
}

/** A refusal decided below the interceptors (grant visibility, discovery), as a verdict. */
export function refuse(refusal: Refusal): Verdict {
  return { kind: 'deny', ...refusal };
}

/**
 * One cross-cutting check (SEP-1763 validator shape). Synchronous verdicts
 * stay synchronous through the chain, so the common path allocates no
 * promises.
 */
export interface Interceptor {
  /** Stable snake_case name for telemetry. */
  readonly name: string;
  /** The MCP methods it sees; every other method skips it. */
  readonly methods: readonly string[];
  /**
   * Whether it has anything to decide for this exchange (for example, no
   * validator is configured for it). An interceptor that does not apply is
   * skipped entirely: no verdict, no decision published, no span.
   */
  applies?(exchange: Exchange): boolean;
  intercept(exchange: Exchange): Verdict | Promise<Verdict>;
}
