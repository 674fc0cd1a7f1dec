/**
 * PolicyService.Explain: the interceptor chain of the MCP path run as a dry
 * run. Every stage is evaluated (so one answer names every reason a call
 * would be refused), the decision is the first stage that did not pass, as
 * on the MCP path, and nothing is forwarded. External validators are asked
 * with `dry_run` set.
 */
import { authenticate } from '../auth/chain.ts';
import type { CredentialStrength, Principal } from '../auth/types.ts';
import type { ErrorId } from '../errors.ts';
import { isRecord } from '../json/record.ts';
import { isPrincipalId, isScope } from '../config/policy/grant-row.ts';
import { resultsEnforcement, toolMetadata } from '../config/policy/policy.ts';
import { decide } from '../grants/snapshot.ts';
import { promptDecision, resourceDecision, type SurfaceDecision } from '../grants/surfaces.ts';
import { uriProblem } from '../mcp/resource-uri.ts';
import { exactArgumentsOf, MAX_NESTING, type Classified } from '../mcp/classify.ts';
import { hasDuplicateKeys } from '../json/duplicate-keys.ts';
import { findInexactInteger } from '../json/inexact-integers.ts';
import { nestsDeeperThan } from '../json/scan.ts';
import { dryRunRequest } from '../interceptors/dry-run.ts';
import type { Exchange, Verdict } from '../interceptors/contract.ts';
import { decideCall } from '../interceptors/conditions.ts';
import { shadowed } from '../pipeline/shadow.ts';
import type { DecisionDeps, GrpcPolicyDeps } from './deps.ts';
import { holdsAdmin } from './deps.ts';
import type { ExplainRequest__Output } from './generated/toolgate/v1/ExplainRequest.ts';
import type { ExplainResponse } from './generated/toolgate/v1/ExplainResponse.ts';
import type { StageResult } from './generated/toolgate/v1/StageResult.ts';

export type ExplainResult =
  | { readonly ok: true; readonly response: ExplainResponse }
  | { readonly ok: false; readonly error: ErrorId };

const STRENGTHS: ReadonlySet<CredentialStrength> = new Set(['anonymous', 'static', 'short_lived', 'one_time']);
const MAX_ARGUMENTS_BYTES = 1024 * 1024;
const METHOD = /^[A-Za-z0-9_/.-]{1,128}$/;

export async function explain(
  deps: GrpcPolicyDeps,
  caller: Principal,
  req: ExplainRequest__Output,
  adminScope: string,
): Promise<ExplainResult> {
  if (!METHOD.test(req.method)) return { ok: false, error: 'invalid_params' };
  if (req.method === 'tools/call' && req.tool === '') return { ok: false, error: 'unknown_tool' };
  const args = parseArguments(req.argumentsJson);
  if (args === undefined) return { ok: false, error: 'invalid_params' };
  const e = deps.current();

  let principal = caller;
  if (req.subject === 'principal') {
    if (!holdsAdmin(caller, adminScope)) return { ok: false, error: 'admin_scope_required' };
    const p = req.principal;
    const strength = (p?.credentialStrength || 'static') as CredentialStrength;
    if (p == null || !isPrincipalId(p.id) || !p.scopes.every(isScope) || !STRENGTHS.has(strength))
      return { ok: false, error: 'invalid_params' };
    principal = { id: p.id, scopes: new Set(p.scopes), credentialStrength: strength };
  } else if (req.subject === 'credential') {
    const r = await authenticate(e.verifiers, { headers: { authorization: req.credential } });
    if (!r.ok) return { ok: true, response: refused('authentication', 'unauthenticated', 0) };
    principal = r.principal;
  }

  return { ok: true, response: await explainFor(deps, principal, req.method, req.tool, args, req.argumentsJson) };
}

/**
 * The dry run itself, for a principal already resolved: what the gRPC
 * service and `toolgate policy explain|test` both answer with.
 */
export async function explainFor(
  deps: DecisionDeps,
  principal: Principal,
  method: string,
  tool: string,
  args: Record<string, unknown>,
  argumentsJson: string,
): Promise<ExplainResponse> {
  const e = deps.current();
  const snap = await deps.grants.snapshot(principal);
  const subject = {
    id: principal.id,
    scopes: [...principal.scopes].sort(),
    credentialStrength: principal.credentialStrength,
  };
  if (!snap.ok) return { ...refused('grants', 'grants_unavailable', 0), principal: subject };

  const inexactInteger =
    method === 'tools/call' && argumentsJson !== '' ? findInexactInteger(argumentsJson, []) : undefined;
  const message: Classified = {
    ok: true,
    era: 'modern',
    protocolVersion: undefined,
    kind: 'request',
    id: 'explain',
    method,
    name: tool === '' ? undefined : tool,
    params: paramsFor(method, tool, args),
    inexactInteger,
    exactArguments: exactArgumentsOf(argumentsJson, inexactInteger, []),
  };
  const ex: Exchange = {
    request: dryRunRequest(),
    message,
    principal,
    policy: e.policy,
    snapshot: snap.snapshot,
    catalogue: deps.catalogue,
    rowsForTool: (name) => deps.grants.rowsForTool(name),
  };

  const stages: StageResult[] = [];
  let deciding: Verdict | undefined;
  const reasons: string[] = [];
  let requiredScopes: readonly string[] = [];
  let argumentErrors: { instancePath: string; keyword: string }[] = [];
  let shadowedOnly = false;
  for (const i of deps.interceptors) {
    if (!i.methods.includes(method)) continue;
    // As on the MCP path, a stage with nothing to decide for this call is not asked: it passes.
    if (i.applies !== undefined && !i.applies(ex)) {
      stages.push({ name: i.name, outcome: 'pass', code: '' });
      continue;
    }
    const v = await i.intercept(ex);
    const audit = v.kind === 'deny' && shadowed(ex, i.name, v);
    stages.push({ name: i.name, outcome: audit ? 'audit_deny' : v.kind, code: v.kind === 'deny' ? v.error : '' });
    if (v.kind === 'pass') continue;
    if (audit) {
      shadowedOnly = true;
      continue;
    }
    deciding ??= v;
    if (v.kind === 'deny') {
      reasons.push(v.error);
      if (v.data?.requiredScopes !== undefined && requiredScopes.length === 0) requiredScopes = v.data.requiredScopes;
      if (v.data?.errors !== undefined && argumentErrors.length === 0)
        argumentErrors = v.data.errors.map((x) => ({ instancePath: x.instancePath, keyword: x.keyword }));
    }
  }
  const surface = surfaceDecisionOf(ex, tool, args);
  const call = method === 'tools/call' ? decideCall(ex) : undefined;
  const grant =
    surface?.decision ??
    (tool === '' || method !== 'tools/call' ? undefined : (call?.decision ?? decide(snap.snapshot, tool)));
  // No row's condition held: the conditional rows that did not are what decided.
  const decidingRows =
    surface?.deciding ??
    (call !== undefined && call.decision.rows.length === 0
      ? (snap.snapshot.conditional.get(tool) ?? []).filter((r) => r.when !== undefined)
      : (grant?.rows ?? []));
  return {
    // A call a person must approve first is neither allowed nor refused: it is asked about.
    decision:
      deciding?.kind === 'deny' && deciding.error === 'approval_required'
        ? 'approval_required'
        : (deciding?.kind ?? (shadowedOnly ? 'audit_deny' : 'allow')),
    reasonCodes: reasons,
    stages,
    grantReason: grant?.reason ?? '',
    rows: decidingRows.map((r) => ({
      principal: r.principal,
      tool: r.tool,
      scopes: [...r.scopes],
      effect: r.effect,
      revision: r.revision ?? 0,
      when: r.when ?? '',
      enforcement: r.enforcement ?? 'enforce',
      name: r.name ?? '',
    })),
    requiredScopes: [...requiredScopes],
    argumentErrors,
    revision: snap.snapshot.revision,
    principal: subject,
    ...(method === 'tools/call' && resultGuardsOf(ex, tool)),
  };
}

/** The tool's result guards as policy resolves them, with the enforcement that applies. */
function resultGuardsOf(ex: Exchange, tool: string): Pick<ExplainResponse, 'resultGuards'> | undefined {
  const guards = tool === '' ? undefined : toolMetadata(ex.policy, tool).results;
  if (guards === undefined) return undefined;
  return {
    resultGuards: {
      maxBytes: guards.maxBytes ?? 0,
      redact: [...guards.redact],
      injection: guards.injection,
      enforcement: resultsEnforcement(ex.policy, tool, guards),
    },
  };
}

/** The params of the request Explain stands for: what the method names sits where the MCP path reads it. */
function paramsFor(method: string, name: string, args: Record<string, unknown>): Record<string, unknown> {
  if (method === 'tools/call' || method === 'prompts/get') return { name, arguments: args };
  if (method === 'resources/read' || method === 'resources/subscribe') return { uri: name };
  return {};
}

/** The resource or prompt grant decision, for the rows and reason Explain names; undefined for other methods or a URI never judged. */
function surfaceDecisionOf(ex: Exchange, name: string, args: Record<string, unknown>): SurfaceDecision | undefined {
  const request = { protocolVersion: undefined, timeMs: Date.now(), arguments: args };
  const method = ex.message.method;
  if ((method === 'resources/read' || method === 'resources/subscribe') && uriProblem(name) === undefined)
    return resourceDecision(ex.policy, ex.principal, name, request);
  if (method === 'prompts/get' && name !== '') return promptDecision(ex.policy, ex.principal, name, request);
  return undefined;
}

function refused(stage: string, code: ErrorId, revision: number): ExplainResponse {
  return { decision: 'deny', reasonCodes: [code], stages: [{ name: stage, outcome: 'deny', code }], revision };
}

export function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text === '') return {};
  if (text.length > MAX_ARGUMENTS_BYTES || nestsDeeperThan(text, MAX_NESTING)) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    // Read as the MCP path reads a body: a repeated name is refused there too.
    return isRecord(v) && !hasDuplicateKeys(text, v) ? v : undefined;
  } catch {
    return undefined;
  }
}
