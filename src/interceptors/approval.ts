import type { Approvals, CallAnswer } from '../approval/approvals.ts';
import { calledTool, toolCall } from '../mcp/tool-call.ts';
import { bindingOf } from '../approval/record.ts';
import { isOurState, signState, verifyState } from '../approval/request-state.ts';
import type { ApprovalRule, GrantRow } from '../config/policy/grant-row.ts';
import { callerBudget } from '../execution/deadline.ts';
import { argumentsDigest } from '../execution/idempotency-key.ts';
import { enforcementFor } from '../config/policy/policy.ts';
import { isAudit } from '../grants/rules.ts';
import { decide } from '../grants/snapshot.ts';
import type { GrantSnapshot } from '../grants/types.ts';
import { stringifyExact } from '../json/exact.ts';
import { isRecord } from '../json/record.ts';
import { callArguments } from '../mcp/classify.ts';
import type { UrlElicitation } from '../mcp/jsonrpc.ts';
import { decideCall } from './conditions.ts';
import { isDryRun } from './dry-run.ts';
import { deny, PASS, type Exchange, type Interceptor, type Verdict } from './contract.ts';

/** The first revisions with the URL-elicitation-required error (-32042) and with multi-round-trip results. */
const URL_ELICITATION_REVISION = '2025-11-25';
const MRTR_REVISION = '2026-07-28';
/** Our key in `inputRequests`, and where the client's answer comes back in `inputResponses`. */
const INPUT_KEY = 'toolgate_approval';

export interface ApprovalDoor {
  readonly approvals: Approvals;
  /** Signs and verifies the 2026-07-28 requestState. */
  readonly stateKey: Buffer;
  /**
   * Grants come from the policy file: the file's digest already covers them,
   * and the file store's revision is this process's own, so it is left out of
   * the binding and replicas (and a restarted process) bind a call alike.
   */
  readonly grantsFromFile?: boolean;
  /**
   * How long a 2026-07-28 continuation whose approval is still pending waits
   * for the decision; 0 or absent: not at all.
   */
  readonly waitMs?: number;
  readonly now?: () => number;
}

/** Tools whose rows in a snapshot ask for approval, computed once per row set (principals with the same rows share one). */
const asking = new WeakMap<readonly GrantRow[], ReadonlySet<string>>();

function toolsAskingApproval(snapshot: GrantSnapshot): ReadonlySet<string> {
  let out = asking.get(snapshot.rows);
  if (out === undefined) {
    out = new Set(snapshot.rows.filter((r) => r.approval !== undefined).map((r) => r.tool));
    asking.set(snapshot.rows, out);
  }
  return out;
}

/**
 * The approval the deciding rows ask for: conditional rows are decided for
 * this call; the first asking row wins. Approval is enforced in every mode:
 * a refusal that shadow mode only records lets the call on as if the deny
 * rows it shadows were absent, and the allow rows then in force still ask.
 */
function ruleFor(ex: Exchange, tool: string): { rule: ApprovalRule; row: GrantRow } | undefined {
  let d = ex.snapshot.conditional.has(tool) ? decideCall(ex)?.decision : decide(ex.snapshot, tool);
  const toolAudit = d?.effect === 'deny' && enforcementFor(ex.policy, tool) === 'audit';
  if (d?.effect === 'deny' && (d.audit === true || toolAudit)) {
    d = decideCall(ex, (r) => r.effect === 'deny' && (toolAudit || isAudit(r)))?.decision;
  }
  if (d === undefined || d.effect !== 'allow') return undefined;
  const row = d.rows.find((r) => r.approval !== undefined);
  return row?.approval === undefined ? undefined : { rule: row.approval, row };
}

/**
 * Human approval (`require_approval` rows). Runs after every other check of
 * toolgate's own, so nobody is asked to approve a call toolgate would refuse
 * anyway. A call with a decided approval for exactly this binding spends it
 * and runs; otherwise the caller is sent to the approver page in the form its
 * protocol revision understands:
 * - 2026-07-28 with the url elicitation capability in the request: an
 *   `input_required` result with one URL-mode elicitation and a signed
 *   requestState;
 * - 2025-11-25 whose session's initialize declared URL elicitation: the
 *   URLElicitationRequiredError (-32042);
 * - everyone else: `approval_required` with the URL, which a client without
 *   the capability hands to the model (a tool result by default).
 * The message names the tool, never an argument value.
 */
export function approvalInterceptor(door: ApprovalDoor): Interceptor {
  const now = door.now ?? Date.now;
  return {
    ...APPROVAL_STAGE,
    async intercept(ex): Promise<Verdict> {
      const tool = calledTool(ex.message);
      const found = ruleFor(ex, tool);
      if (found === undefined) return PASS;
      // Explain says the call would wait for approval; it neither asks for one nor spends one.
      if (isDryRun(ex.request)) return wouldAsk(found.row);
      const parts = {
        principal: ex.principal.id,
        tool,
        argumentsDigest: argumentsDigest(toolCall(ex.message)),
        // A grant change bumps the shared control revision, or (grants in the file) changes the source
        // digest, as any other policy edit does: either way every replica computes the same binding.
        policyRevision: `${door.grantsFromFile === true ? 'file' : ex.snapshot.revision}.${ex.policy.sourceDigest.slice(0, 16)}`,
      };
      const state = ex.message.params?.requestState;
      const continuation = isOurState(state);
      if (continuation && verifyState(door.stateKey, state, bindingOf(parts), now()) === undefined)
        return deny('approval_state_invalid');
      const held = {
        ...parts,
        rule: found.rule,
        arguments: stringifyExact(callArguments(ex.message) ?? {}),
        request: ex.request,
      };
      const waitMs = continuation && accepted(ex) ? waitFor(ex, door.waitMs ?? 0) : 0;
      const answer =
        waitMs > 0 ? await door.approvals.forCallWaiting(held, waitMs) : await door.approvals.forCall(held);
      const rule = found.row.name;
      switch (answer.kind) {
        case 'run':
          return rule === undefined ? PASS : { kind: 'pass', rule };
        case 'denied':
          return deny('approval_denied', { approvalId: answer.record.id });
        case 'expired':
          return deny('approval_expired', { approvalId: answer.record.id });
        case 'unsettled':
          return deny('approval_outcome_unknown', { approvalId: answer.record.id });
        case 'unavailable':
          return deny('approval_unavailable');
        case 'ask':
          return ask(ex, answer, door.stateKey, continuation);
      }
    },
  };
}

const APPROVAL_STAGE = {
  name: 'approval',
  methods: ['tools/call'],
  applies: (ex: Exchange) => ex.message.name !== undefined && toolsAskingApproval(ex.snapshot).has(ex.message.name),
} as const;

function wouldAsk(row: GrantRow): Verdict {
  return { ...deny('approval_required'), ...(row.name !== undefined && { rule: row.name }) };
}

/**
 * The approval stage of the offline doors (`policy test`, `policy explain`),
 * which have no store and ask no one: the same rows decide, and a call one
 * asks for is reported as `approval_required`, naming the row.
 */
export function approvalQuestion(): Interceptor {
  return {
    ...APPROVAL_STAGE,
    intercept(ex): Promise<Verdict> {
      const found = ruleFor(ex, calledTool(ex.message));
      return Promise.resolve(found === undefined ? PASS : wouldAsk(found.row));
    },
  };
}

function ask(
  ex: Exchange,
  answer: Extract<CallAnswer, { kind: 'ask' }>,
  stateKey: Buffer,
  continuation: boolean,
): Verdict {
  const { record, url } = answer;
  const version = ex.message.protocolVersion ?? '';
  const elicitation: UrlElicitation = {
    mode: 'url',
    elicitationId: record.id,
    url,
    message: continuation
      ? `The approval of this call of ${record.tool} is still pending. Leave the page open for the approver; repeating the call unchanged waits for the decision again.`
      : `A person must approve this call of ${record.tool} before it runs. Open the page to have it approved, then repeat the call unchanged.`,
  };
  if (version >= MRTR_REVISION && ex.urlElicitation === true && !(continuation && declined(ex))) {
    return {
      kind: 'respond',
      result: {
        resultType: 'input_required',
        inputRequests: { [INPUT_KEY]: { method: 'elicitation/create', params: elicitation } },
        requestState: signState(stateKey, {
          approvalId: record.id,
          binding: record.binding,
          expiresAt: record.expiresAt,
        }),
      },
    };
  }
  if (version >= URL_ELICITATION_REVISION && version < MRTR_REVISION && ex.urlElicitation === true) {
    return deny('approval_url_elicitation', { approvalId: record.id, url, elicitations: [elicitation] });
  }
  return deny('approval_required', { approvalId: record.id, url });
}

/**
 * How long a continuation may wait for the decision: the setting, cut to
 * half the caller's own budget when it sends one, so an approved call still
 * has time to run.
 */
function waitFor(ex: Exchange, waitMs: number): number {
  const budget = callerBudget(ex.request, ex.message);
  return budget.ok && budget.ms !== undefined ? Math.min(waitMs, Math.floor(budget.ms / 2)) : waitMs;
}

/** The client says the person took the elicitation (opened the page); the decision may still be pending. */
function accepted(ex: Exchange): boolean {
  const responses = ex.message.params?.inputResponses;
  const mine = isRecord(responses) ? responses[INPUT_KEY] : undefined;
  return isRecord(mine) && mine.action === 'accept';
}

/** The client answered our elicitation with decline or cancel: asking again would loop, so it gets the URL as an error. */
function declined(ex: Exchange): boolean {
  const responses = ex.message.params?.inputResponses;
  const mine = isRecord(responses) ? responses[INPUT_KEY] : undefined;
  return isRecord(mine) && (mine.action === 'decline' || mine.action === 'cancel');
}
