import { isRecord } from '../json/record.ts';
import { bindingMs, MAX_TASK_ID_LENGTH } from './task-store.ts';

const CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether a tools/call may come back as a task: task-augmented on 2025-11-25
 * (`params.task`), or, on 2026-07-28, from a client that declares the tasks
 * extension in the request's `_meta`. Only such calls are held until their
 * answer is read.
 */
export function mayCreateTask(params: Readonly<Record<string, unknown>> | undefined): boolean {
  if (params === undefined) return false;
  return isRecord(params.task) || declaresTasks(params);
}

/** What a 2026-07-28 request that needs the tasks extension must declare, as MissingRequiredClientCapability data. */
export const TASKS_REQUIRED = Object.freeze({ extensions: Object.freeze({ [TASKS_EXTENSION]: Object.freeze({}) }) });

/** Whether a 2026-07-28 request declares the tasks extension in its `_meta` client capabilities (declared per request). */
export function declaresTasks(params: Readonly<Record<string, unknown>> | undefined): boolean {
  if (params === undefined) return false;
  const meta = params._meta;
  const caps = isRecord(meta) ? meta[CAPABILITIES_META] : undefined;
  const extensions = isRecord(caps) ? caps.extensions : undefined;
  return isRecord(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION);
}

/**
 * The task a tools/call answer created, with how long to keep its binding:
 * a 2025-11-25 CreateTaskResult (`result.task`) or a 2026-07-28 result of
 * `resultType: "task"`, its TTL (`ttl`, `ttlMs`, `keepAlive`) in ms.
 */
export function createdTask(
  answer: Readonly<Record<string, unknown>> | undefined,
): { readonly taskId: string; readonly ttlMs: number } | undefined {
  const result = answer?.result;
  if (!isRecord(result)) return undefined;
  const task = isRecord(result.task) ? result.task : result.resultType === 'task' ? result : undefined;
  if (task === undefined) return undefined;
  const id = task.taskId;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_TASK_ID_LENGTH) return undefined;
  return { taskId: id, ttlMs: bindingMs(task.ttl ?? task.ttlMs ?? task.keepAlive) };
}
