import { setTimeout as sleep } from 'node:timers/promises';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { listenOnLoopback, type Listening } from './http-server.ts';
import { TaskBoard } from './task-board.ts';
import { serveTasks, taskOrResult } from './tasks-extension.ts';

/** What a task's result holds: a refusal must never carry it. */
export const TASK_SECRET_2026 = 'task-result-7c41';

export interface TasksServerV2 extends Listening {
  readonly url: string;
  /** The `Mcp-Method` of every request the server was sent, in order. */
  readonly seen: string[];
}

/**
 * A stateless 2026-07-28 v2 SDK server with the tasks extension
 * (tasks-extension.ts), as a server that does not bind tasks to who created
 * them: anyone who knows an id can read, continue or cancel the task.
 * `report` finishes at once; `slow_report` runs until it is cancelled.
 */
export async function startTasksServerV2(): Promise<TasksServerV2> {
  const board = new TaskBoard({ ttlMs: 60_000, pollIntervalMs: 50 });
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'tasks-fixture-v2', version: '2.0.0' });
      serveTasks(server, board);
      const topic = z.object({ topic: z.string() });
      server.registerTool('report', { description: 'Writes a report', inputSchema: topic }, async ({ topic: t }, ctx) =>
        taskOrResult(board, ctx, async () => ({ content: [{ type: 'text', text: `${t} ${TASK_SECRET_2026}` }] })),
      );
      server.registerTool(
        'slow_report',
        { description: 'Writes a report slowly', inputSchema: topic },
        async ({ topic: t }, ctx) =>
          taskOrResult(board, ctx, async ({ signal }) => {
            await sleep(3_600_000, undefined, { signal });
            return { content: [{ type: 'text', text: `${t} ${TASK_SECRET_2026}` }] };
          }),
      );
      return server;
    }),
  );
  const seen: string[] = [];
  const listening = await listenOnLoopback((req, res) => {
    seen.push(String(req.headers['mcp-method']));
    void handler(req, res);
  });
  return {
    ...listening,
    url: `${listening.origin}/mcp`,
    seen,
    async close() {
      // A running task's sleep would hold the test process until it ends.
      board.close();
      await listening.close();
    },
  };
}
