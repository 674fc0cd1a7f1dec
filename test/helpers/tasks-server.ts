import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { z } from 'zod';
import { listenOnLoopback, readAll, type Listening } from './http-server.ts';

/** What a task's result holds: a refusal must never carry it. */
export const TASK_SECRET = 'task-result-3b9d';

export interface TasksServer extends Listening {
  readonly url: string;
  /** Every method the server was asked, in order. */
  readonly seen: string[];
}

/**
 * A stateless 2025-11-25 v1 SDK server with task-based tools (the SDK's
 * experimental tasks runtime, one task store for every request), as a server
 * that does not bind tasks to who created them: anyone who knows an id can
 * read or cancel the task. `report` finishes at once; `slow_report` waits to
 * be cancelled.
 */
export async function startTasksServer(): Promise<TasksServer> {
  const taskStore = new InMemoryTaskStore();
  const seen: string[] = [];
  const build = () => {
    const server = new McpServer(
      { name: 'tasks-fixture', version: '1.0.0' },
      { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore },
    );
    for (const [name, finish] of [
      ['report', true],
      ['slow_report', false],
    ] as const) {
      server.experimental.tasks.registerToolTask(
        name,
        {
          description: `Writes a ${name}`,
          inputSchema: { topic: z.string() },
          execution: { taskSupport: 'required' },
        },
        {
          createTask: async ({ topic }, extra) => {
            const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
            if (finish)
              await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
                content: [{ type: 'text', text: `${topic} ${TASK_SECRET}` }],
              });
            return { task };
          },
          getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
          getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId) as never,
        },
      );
    }
    return server;
  };
  const listening = await listenOnLoopback(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const body = JSON.parse((await readAll(req)).toString('utf8')) as { method?: string };
    seen.push(body.method ?? 'response');
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  return {
    ...listening,
    url: `${listening.origin}/mcp`,
    seen,
    async close() {
      // The store keeps a timer per task until its TTL; they would hold the test process that long.
      taskStore.cleanup();
      await listening.close();
    },
  };
}
