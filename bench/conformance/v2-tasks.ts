/**
 * The tools the 2026-07-28 tasks-extension scenarios (SEP-2663) call by
 * name, each as its scenario's published server requirements describe,
 * served through the shared tasks runtime (test/helpers/tasks-extension.ts).
 * `failing_job` and `test_tool_with_task` need the extension declared:
 * without it, missingCapability() in v2-fixture.ts answers -32021 before
 * the SDK runs them (TASK_REQUIRED_TOOLS).
 */

import { setTimeout as sleep } from 'node:timers/promises';
import {
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type InputRequest,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { TaskBoard } from '../../test/helpers/task-board.ts';
import { asTask, serveTasks, taskOrResult } from '../../test/helpers/tasks-extension.ts';

/** Tools that only run as a task (the scenarios' `taskSupport: required`): a call without the extension cannot be served. */
export const TASK_REQUIRED_TOOLS: readonly string[] = [
  'failing_job',
  'confirm_delete',
  'multi_input',
  'test_tool_with_task',
];

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const confirm = (message: string): InputRequest =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
  });

export function registerTaskTools(server: McpServer, board: TaskBoard): void {
  serveTasks(server, board);
  server.registerTool(
    'greet',
    { description: 'Sync only: says hello', inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => text(`Hello, ${name}!`),
  );
  server.registerTool(
    'slow_compute',
    {
      description: 'Sleeps `seconds`, then answers; settles cancelled when cancelled first',
      inputSchema: z.object({ seconds: z.number(), label: z.string().optional() }),
    },
    async ({ seconds, label }, ctx) =>
      taskOrResult(board, ctx, async ({ signal }) => {
        await sleep(seconds * 1000, undefined, { signal });
        return text(`computed ${label ?? 'result'} after ${seconds}s`);
      }),
  );
  server.registerTool('failing_job', { description: 'Reports a tool execution error after about a second' }, async () =>
    asTask(board, async ({ signal }) => {
      await sleep(1000, undefined, { signal });
      return { content: [{ type: 'text', text: 'the job failed' }], isError: true };
    }),
  );
  server.registerTool('protocol_error_job', { description: 'Fails with a JSON-RPC internal error' }, async (ctx) =>
    taskOrResult(board, ctx, async () => {
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'the job crashed');
    }),
  );
  server.registerTool(
    'confirm_delete',
    {
      description: 'Asks for confirmation (one elicitation), then deletes',
      inputSchema: z.object({ filename: z.string() }),
    },
    async ({ filename }) =>
      asTask(board, async ({ input }) => {
        const answers = await input({ confirm_delete: confirm(`Delete ${filename}?`) });
        return text(accepted(answers.confirm_delete) ? `Deleted ${filename}` : `Kept ${filename}`);
      }),
  );
  server.registerTool('multi_input', { description: 'Asks two questions at once' }, async () =>
    asTask(board, async ({ input }) => {
      const answers = await input({ first: confirm('First question?'), second: confirm('Second question?') });
      return text(`answered ${Object.keys(answers).sort().join(', ')}`);
    }),
  );
  // MRTR, then a task (SEP-2663 "MRTR → Tasks composition"): the name gathered in round 1 reaches the task's result.
  server.registerTool(
    'test_tool_with_task',
    { description: 'Asks for a name, then greets it from a task' },
    async (ctx: ServerContext) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (r.kind !== 'elicit' || typeof r.content?.name !== 'string') {
        return inputRequired({
          inputRequests: {
            user_name: inputRequired.elicit({
              message: 'What is your name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            }),
          },
        });
      }
      const name = r.content.name;
      return asTask(board, async () => text(`Hello, ${name}!`));
    },
  );
}

function accepted(answer: unknown): boolean {
  return typeof answer === 'object' && answer !== null && (answer as { action?: unknown }).action === 'accept';
}
