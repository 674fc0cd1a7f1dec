import {
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { TaskBoard, TaskWork } from './task-board.ts';

/**
 * The server side of the 2026-07-28 tasks extension (SEP-2663) on a v2 SDK
 * McpServer, which ships none: the capability under
 * `capabilities.extensions`, tasks/get, tasks/update and tasks/cancel served
 * from a TaskBoard, and the choice, per tools/call, between a task and the
 * plain result. tasks/result and tasks/list do not exist in this extension;
 * the SDK answers them -32601 on a 2026-07-28 request.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** The -32021 data a request without the extension gets where only a task will do. */
export const TASKS_REQUIRED = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as const;

const ById = z.object({ taskId: z.string() });

/** Whether the request declared the tasks extension in its `_meta` client capabilities (SEP-2575: per request). */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope: Readonly<Record<string, unknown>> = ctx.mcpReq.envelope ?? {};
  const caps = envelope['io.modelcontextprotocol/clientCapabilities'];
  const extensions = isRecord(caps) ? caps.extensions : undefined;
  return isRecord(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION);
}

/** Advertises the extension and serves its three methods from `board`. */
export function serveTasks(server: McpServer, board: TaskBoard): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  server.server.setRequestHandler('tasks/get', { params: ById }, ({ taskId }, ctx) => {
    requireTasks(ctx);
    return known(board.get(taskId));
  });
  server.server.setRequestHandler('tasks/update', { params: ById }, ({ taskId }, ctx) => {
    requireTasks(ctx);
    // The SDK lifts `inputResponses` out of a request's params onto the context, for every method.
    known(board.update(taskId, ctx.mcpReq.inputResponses ?? {}));
    return {};
  });
  server.server.setRequestHandler('tasks/cancel', { params: ById }, ({ taskId }, ctx) => {
    requireTasks(ctx);
    known(board.cancel(taskId));
    return {};
  });
}

/**
 * A task-supporting tool's answer: a CreateTaskResult when the request
 * declared the extension (the server decides; there is no per-call hint),
 * else the work run to its end as a plain result. A legacy `task` param
 * changes nothing.
 */
export async function taskOrResult(board: TaskBoard, ctx: ServerContext, work: TaskWork): Promise<CallToolResult> {
  if (declaresTasks(ctx)) return asTask(board, work);
  // Run in place, a call has no cancel request and no round for input.
  return work({
    signal: new AbortController().signal,
    input: () => Promise.reject(new Error('this call runs without a task and cannot wait for input')),
  });
}

/** Starts `work` as a task. McpServer types a tool's answer as CallToolResult; its 2026-07-28 result check admits a CreateTaskResult. */
export function asTask(board: TaskBoard, work: TaskWork): CallToolResult {
  return board.create(work) as CallToolResult;
}

function requireTasks(ctx: ServerContext): void {
  if (!declaresTasks(ctx)) throw new MissingRequiredClientCapabilityError(TASKS_REQUIRED);
}

/** Unknown and expired ids alike are -32602, as SEP-2663 prescribes. */
function known<T>(found: T | undefined | false): T {
  if (found === undefined || found === false)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Task not found');
  return found;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
