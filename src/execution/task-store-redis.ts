import { redisCall } from '../cache/breaker.ts';
import { taskKey } from '../cache/keys.ts';
import type { RedisClient } from '../cache/redis.ts';
import { runScript, script } from '../cache/scripts.ts';
import { isRecord } from '../json/record.ts';
import type { TaskOwner, TaskStore } from './task-store.ts';

/** KEYS: the task. ARGV: owner text, ms. Binds, or extends the same owner's binding; 0 when another holds the id. */
const BIND = script(`
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`);

/**
 * Task bindings shared by every replica, under the policy domain's hash tag
 * (one Cluster slot, so a listing's MGET is one command), each expiring with
 * its task. Every command is bounded by the client's command timeout and
 * shares its Redis breaker; an error or stall throws, and callers fail closed.
 */
export class RedisTaskStore implements TaskStore {
  readonly #client: RedisClient;
  readonly #domain: string;
  readonly #timeoutMs: number;

  constructor(opts: { client: RedisClient; domain: string; timeoutMs: number }) {
    this.#client = opts.client;
    this.#domain = opts.domain;
    this.#timeoutMs = opts.timeoutMs;
  }

  async bind(taskId: string, owner: TaskOwner, ttlMs: number): Promise<'bound' | 'taken'> {
    const text = JSON.stringify({ principal: owner.principal, tool: owner.tool });
    const reply = await redisCall(this.#client, this.#timeoutMs, () =>
      runScript(this.#client, BIND, [taskKey(this.#domain, taskId)], [text, ttlMs]),
    );
    return reply === 1 ? 'bound' : 'taken';
  }

  async owner(taskId: string): Promise<TaskOwner | undefined> {
    return ownerOf(
      await redisCall(this.#client, this.#timeoutMs, () => this.#client.get(taskKey(this.#domain, taskId))),
    );
  }

  async owners(taskIds: readonly string[]): Promise<readonly (TaskOwner | undefined)[]> {
    if (taskIds.length === 0) return [];
    const texts = await redisCall(this.#client, this.#timeoutMs, () =>
      this.#client.mget(...taskIds.map((id) => taskKey(this.#domain, id))),
    );
    return texts.map(ownerOf);
  }
}

/** A stored record; anything else reads as no record (the task cannot be reached), never as someone's. */
function ownerOf(text: string | null): TaskOwner | undefined {
  if (text === null) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) && typeof v.principal === 'string' && typeof v.tool === 'string'
      ? { principal: v.principal, tool: v.tool }
      : undefined;
  } catch {
    return undefined;
  }
}
