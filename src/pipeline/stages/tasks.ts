import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Stage } from './stage.ts';
import type { Pool } from 'undici';
import type { Principal } from '../../auth/types.ts';
import type { ToolErrors } from '../../config/settings.ts';
import type { TaskStore } from '../../execution/task-store.ts';
import { declaresTasks, TASKS_REQUIRED } from '../../execution/task-result.ts';
import type { ErrorId } from '../../errors.ts';
import { mayCall } from '../../grants/visibility.ts';
import type { GrantSnapshot } from '../../grants/types.ts';
import type { Exchange } from '../../interceptors/contract.ts';
import { isRecord } from '../../json/record.ts';
import type { Refusal } from '../../mcp/jsonrpc.ts';
import { publishDecision, taskEvent, type TaskEvent } from '../../telemetry/channels.ts';
import { log } from '../../telemetry/log.ts';
import { requestBuffered } from '../../upstream/buffered.ts';
import { forward } from '../../upstream/forward.ts';
import { rewriteResult } from '../../mcp/rewrite.ts';
import type { Outcome } from '../outcome.ts';
import { refuse, sendBuffered } from './reply.ts';
import { toolMetadata } from '../../config/policy/policy.ts';
import { answerGuard, type ResultGuardDeps } from './result-guard.ts';

/** The tasks requests of 2025-11-25 and of the 2026-07-28 tasks extension. */
export const TASK_METHODS: readonly string[] = [
  'tasks/get',
  'tasks/result',
  'tasks/cancel',
  'tasks/update',
  'tasks/list',
];

export interface TasksDeps {
  readonly pool: Pool;
  readonly tasks: TaskStore;
  /** The caller's tool grants, to check the task's tool is still granted; undefined when they cannot be confirmed. */
  readonly snapshot: (
    req: IncomingMessage,
    principal: Principal,
  ) => GrantSnapshot | undefined | Promise<GrantSnapshot | undefined>;
  readonly maxRewriteBytes: number;
  readonly toolErrors: ToolErrors;
  /** A task's result is its tool's result: the tool's result guard judges it as it would the call's own answer. */
  readonly results: ResultGuardDeps;
}

const UNAVAILABLE: Refusal = Object.freeze({
  error: 'tasks_unavailable',
  data: Object.freeze({ retryAfterMs: 1000 }),
  headers: Object.freeze({ 'retry-after': '1' }),
});

/**
 * Tasks belong to the principal whose tools/call created them through
 * toolgate (execution/task-hold.ts). A request naming a task is forwarded
 * only for its creator; anyone else, and any id toolgate never bound, is
 * answered `task_not_found` exactly as a server answers an unknown id, so
 * ids cannot be probed. The creator must still be granted the task's tool
 * to read its status or result, or to continue it: a grant revoked since is
 * refused as tool_not_granted, while cancelling stays allowed. tasks/list is
 * filtered to the caller's own tasks. A store that cannot answer fails
 * closed (503 tasks_unavailable).
 */
export function tasksStage(deps: TasksDeps): Stage {
  const { pool, tasks, toolErrors } = deps;
  const refused = (ex: Exchange, res: ServerResponse, refusal: Refusal, event: TaskEvent['event']): Outcome => {
    tell(ex, event, refusal.error);
    return refuse(res, ex.message, refusal, toolErrors);
  };

  async function named(ex: Exchange, res: ServerResponse, headers: string[], body: Buffer): Promise<Outcome> {
    const id = ex.message.params?.taskId;
    if (typeof id !== 'string') return refused(ex, res, { error: 'task_not_found' }, 'not_found');
    const found = await lookup(() => tasks.owner(id));
    if (found === undefined) return refused(ex, res, UNAVAILABLE, 'unavailable');
    const owner = found.value;
    if (owner?.principal !== ex.principal.id) return refused(ex, res, { error: 'task_not_found' }, 'not_found');
    if (ex.message.method !== 'tasks/cancel') {
      const held = deps.snapshot(ex.request, ex.principal);
      const snap = held instanceof Promise ? await held : held;
      if (snap === undefined) return refuse(res, ex.message, { error: 'grants_unavailable' }, toolErrors);
      if (!mayCall(ex.policy, snap, ex.principal, owner.tool))
        return refused(ex, res, { error: 'tool_not_granted' }, 'revoked');
    }
    tell(ex, 'owner');
    const guardAnswer =
      ex.message.method === 'tasks/result' || ex.message.method === 'tasks/get'
        ? answerGuard(ex, owner.tool, toolMetadata(ex.policy, owner.tool).results, deps.results)
        : undefined;
    return forward(
      pool,
      { req: ex.request, res, headers, body, rpcId: ex.message.id },
      { refuse: (r) => refuse(res, ex.message, r, toolErrors), guardAnswer },
    );
  }

  async function list(ex: Exchange, res: ServerResponse, headers: string[], body: Buffer): Promise<Outcome> {
    const up = await requestBuffered(pool, ex.request, res, headers, body, deps.maxRewriteBytes);
    if (!up.ok)
      return up.error === 'client_closed' ? 'client_closed' : refuse(res, ex.message, { error: up.error }, toolErrors);
    const type = typeof up.headers['content-type'] === 'string' ? up.headers['content-type'] : undefined;
    const ids: string[] = [];
    const read = rewriteResult(type, up.body, ex.message.id, (result) => {
      for (const t of entries(result)) ids.push(taskIdOf(t) ?? '');
      return result;
    });
    if (up.status !== 200) return sendBuffered(res, up.status, up.headers, up.body);
    if (read === undefined) return refuse(res, ex.message, { error: 'upstream_unavailable' }, toolErrors);
    const owners = await lookup(() => tasks.owners(ids));
    if (owners === undefined) return refused(ex, res, UNAVAILABLE, 'unavailable');
    const mine = new Set(ids.filter((id, i) => id !== '' && owners.value[i]?.principal === ex.principal.id));
    const rewritten = rewriteResult(type, up.body, ex.message.id, (result) => ({
      ...result,
      tasks: entries(result).filter((t) => mine.has(taskIdOf(t) ?? '')),
      cacheScope: 'private',
    }));
    if (rewritten === undefined) return refuse(res, ex.message, { error: 'upstream_unavailable' }, toolErrors);
    tell(ex, 'owner');
    return sendBuffered(res, up.status, up.headers, rewritten);
  }

  return (ex, res, headers, body) => {
    const early = modernRefusal(ex);
    if (early !== undefined) return Promise.resolve(refused(ex, res, early, 'not_found'));
    return ex.message.method === 'tasks/list' ? list(ex, res, headers, body) : named(ex, res, headers, body);
  };
}

/** A store lookup, or undefined when the store could not answer (logged; the caller fails closed). */
async function lookup<T>(work: () => Promise<T>): Promise<{ readonly value: T } | undefined> {
  try {
    return { value: await work() };
  } catch (err) {
    log.warn('task store unavailable', { error: (err as { name?: string }).name ?? 'unknown' });
    return undefined;
  }
}

/**
 * What the 2026-07-28 tasks extension answers before any task is looked
 * up, as a server would, so toolgate in front changes nothing a client
 * sees: it has no tasks/result, and its other methods need the extension
 * declared on the request.
 */
function modernRefusal(ex: Exchange): Refusal | undefined {
  if (ex.message.era !== 'modern' || ex.message.method === 'tasks/list') return undefined;
  if (ex.message.method === 'tasks/result') return { error: 'method_not_found' };
  return declaresTasks(ex.message.params)
    ? undefined
    : { error: 'missing_client_capability', data: { requiredCapabilities: TASKS_REQUIRED } };
}

function entries(result: Record<string, unknown>): unknown[] {
  return Array.isArray(result.tasks) ? result.tasks : [];
}

function taskIdOf(task: unknown): string | undefined {
  return isRecord(task) && typeof task.taskId === 'string' ? task.taskId : undefined;
}

function tell(ex: Exchange, event: TaskEvent['event'], error?: ErrorId): void {
  if (taskEvent.hasSubscribers) taskEvent.publish({ event });
  publishDecision({
    request: ex.request,
    stage: 'tasks',
    allowed: error === undefined,
    principal: ex.principal,
    ...(error !== undefined && { error }),
  });
}
