import { ProtocolError, type CallToolResult, type InputRequests } from '@modelcontextprotocol/server';

/** Answers to input requests by key, as a tasks/update carries them (the SDK does not type them further). */
type Answers = Record<string, unknown>;

/** What a task's work may do besides returning its result: notice cancellation, and park for client input. */
export interface TaskJob {
  /** Aborted when the task is cancelled (or the board closed); the work's outcome is then ignored. */
  readonly signal: AbortSignal;
  /** Parks the task in `input_required` with these requests until every one is answered through tasks/update. */
  readonly input: (requests: InputRequests) => Promise<Answers>;
}

export type TaskWork = (job: TaskJob) => Promise<CallToolResult>;

type Status = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

interface TaskRecord {
  readonly taskId: string;
  status: Status;
  statusMessage?: string;
  readonly createdAt: string;
  lastUpdatedAt: string;
  readonly expiresAt: number;
  readonly abort: AbortController;
  result?: CallToolResult;
  error?: { code: number; message: string; data?: unknown };
  /** Requests still unanswered, and the answers collected for the current round. */
  pending?: {
    requests: Record<string, unknown>;
    answers: Answers;
    resolve: (r: Answers) => void;
    reject: (e: unknown) => void;
  };
}

const TERMINAL: ReadonlySet<Status> = new Set(['completed', 'failed', 'cancelled']);

/**
 * The tasks of one server process, as the 2026-07-28 tasks extension
 * (SEP-2663) describes them: created durably before the CreateTaskResult is
 * sent, polled with a DetailedTask (result or error inlined once terminal,
 * outstanding inputRequests while input_required), answered through
 * tasks/update (a subset of keys at a time; unknown keys ignored), cancelled
 * cooperatively. Kept for their `ttlMs` from creation, then forgotten.
 * No timers of its own: expiry is checked when a task is read.
 */
export class TaskBoard {
  readonly #tasks = new Map<string, TaskRecord>();
  readonly #ttlMs: number;
  readonly #pollIntervalMs: number;
  #next = 0;

  constructor(opts: { ttlMs: number; pollIntervalMs: number }) {
    this.#ttlMs = opts.ttlMs;
    this.#pollIntervalMs = opts.pollIntervalMs;
  }

  /** Starts `work` as a task and returns the CreateTaskResult fields (the caller adds nothing). */
  create(work: TaskWork): Record<string, unknown> {
    const now = new Date();
    const task: TaskRecord = {
      taskId: `task-${process.pid}-${++this.#next}-${now.getTime().toString(36)}`,
      status: 'working',
      createdAt: now.toISOString(),
      lastUpdatedAt: now.toISOString(),
      expiresAt: now.getTime() + this.#ttlMs,
      abort: new AbortController(),
    };
    this.#tasks.set(task.taskId, task);
    const job: TaskJob = { signal: task.abort.signal, input: (requests) => this.#park(task, requests) };
    work(job).then(
      (result) => this.#settle(task, { status: 'completed', result }),
      (err: unknown) => this.#settle(task, failure(err)),
    );
    return { resultType: 'task', ...this.#base(task) };
  }

  /** The DetailedTask for `tasks/get`, or undefined for an unknown or expired id. */
  get(taskId: string): Record<string, unknown> | undefined {
    const task = this.#live(taskId);
    if (task === undefined) return undefined;
    return {
      ...this.#base(task),
      ...(task.status === 'input_required' &&
        task.pending !== undefined && { inputRequests: { ...task.pending.requests } }),
      ...(task.status === 'completed' && { result: task.result }),
      ...(task.status === 'failed' && { error: task.error }),
    };
  }

  /** Delivers answers to outstanding requests; false for an unknown task. Keys not outstanding are ignored. */
  update(taskId: string, responses: Readonly<Answers>): boolean {
    const task = this.#live(taskId);
    if (task === undefined) return false;
    const pending = task.pending;
    if (pending === undefined) return true;
    for (const [key, answer] of Object.entries(responses)) {
      if (!Object.hasOwn(pending.requests, key)) continue;
      delete pending.requests[key];
      pending.answers[key] = answer;
    }
    if (Object.keys(pending.requests).length > 0) return true;
    task.pending = undefined;
    this.#touch(task, 'working');
    pending.resolve(pending.answers);
    return true;
  }

  /** Cancels a task that is not terminal yet (a terminal one is left as it is); false for an unknown task. */
  cancel(taskId: string): boolean {
    const task = this.#live(taskId);
    if (task === undefined) return false;
    if (!TERMINAL.has(task.status)) this.#stop(task);
    return true;
  }

  /** Cancels every running task, so no work keeps the process alive. */
  close(): void {
    for (const task of this.#tasks.values()) if (!TERMINAL.has(task.status)) this.#stop(task);
  }

  #base(task: TaskRecord): Record<string, unknown> {
    return {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: this.#ttlMs,
      pollIntervalMs: this.#pollIntervalMs,
    };
  }

  #live(taskId: string): TaskRecord | undefined {
    const task = this.#tasks.get(taskId);
    if (task === undefined || task.expiresAt > Date.now()) return task;
    this.#tasks.delete(taskId);
    if (!TERMINAL.has(task.status)) task.abort.abort();
    return undefined;
  }

  #park(task: TaskRecord, requests: InputRequests): Promise<Answers> {
    if (TERMINAL.has(task.status)) return Promise.reject(task.abort.signal.reason);
    return new Promise((resolve, reject) => {
      task.pending = { requests: { ...requests }, answers: {}, resolve, reject };
      this.#touch(task, 'input_required');
    });
  }

  #stop(task: TaskRecord): void {
    this.#touch(task, 'cancelled');
    task.statusMessage = "Cancelled at the client's request.";
    task.pending?.reject(new Error('cancelled'));
    task.pending = undefined;
    task.abort.abort();
  }

  #settle(task: TaskRecord, outcome: Pick<TaskRecord, 'status' | 'result' | 'error' | 'statusMessage'>): void {
    // A cancelled task stays cancelled, whatever its work did after.
    if (TERMINAL.has(task.status)) return;
    Object.assign(task, outcome);
    this.#touch(task, outcome.status);
  }

  #touch(task: TaskRecord, status: Status): void {
    task.status = status;
    task.lastUpdatedAt = new Date().toISOString();
  }
}

/**
 * How a work's throw ends its task: a JSON-RPC error (ProtocolError) fails
 * it with that error inlined; anything else is a tool execution error, which
 * SEP-2663 reports as `completed` with an `isError` result, as McpServer
 * reports a throwing tool.
 */
function failure(err: unknown): Pick<TaskRecord, 'status' | 'result' | 'error' | 'statusMessage'> {
  if (err instanceof ProtocolError) {
    return {
      status: 'failed',
      statusMessage: `Task failed: ${err.message}`,
      error: { code: err.code, message: err.message, ...(err.data !== undefined && { data: err.data }) },
    };
  }
  return {
    status: 'completed',
    result: { content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }], isError: true },
  };
}
