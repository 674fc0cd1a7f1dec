/**
 * The lesser faults of issue 31, each against real toolgate processes: a
 * shared rate limit through a Redis stall and an empty restart, and
 * `Expect: 100-continue` from a client without a credential.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCountingUpstream } from '../test/helpers/counting-upstream.ts';
import { AGENT_KEY, executionPolicy, KEYS_YAML, toolCall } from '../test/helpers/execution-policy.ts';
import { post, rawExchange } from '../test/helpers/raw.ts';
import { startRedis } from '../test/helpers/redis.ts';
import { PROTOCOL_FORM } from './gate.ts';
import { startToolgateProcess, type ToolgateProcess } from '../test/helpers/toolgate-process.ts';

/** 10 a minute: a burst of 10, then one call back every 6 s. */
const RULE = { requests: 10, perMs: 60_000 };

export interface RateLimitStallResult {
  readonly admitted: number;
  /** What the rule allows over the whole run: the burst, plus what refilled. */
  readonly allowed: number;
  /** admitted / allowed. */
  readonly overshoot: number;
  readonly elapsedMs: number;
  readonly stallMs: number;
  /** The slowest call while Redis was stalled: the command timeout paid at most once a second, not on every call. */
  readonly slowestDuringStallMs: number;
}

/** Two replicas share 10/min; Redis is frozen for `stallMs`, then restarted empty; both keep calling every 20 ms. */
export async function rateLimitStall(stallMs = 10_000, afterMs = 3000): Promise<RateLimitStallResult> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-chaos-limits-'));
  const redis = await startRedis();
  const upstream = await startCountingUpstream();
  const gates: ToolgateProcess[] = [];
  try {
    await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
    await writeFile(
      join(dir, 'policy.yaml'),
      executionPolicy(
        `rateLimits:\n  - { principal: "*", tool: read_status, requests: ${RULE.requests}, per: minute }\n`,
      ),
    );
    const flags = [
      '--policy-file',
      join(dir, 'policy.yaml'),
      '--redis-url',
      redis.url,
      '--policy-domain',
      'chaos-limits',
      '--redis-command-timeout-ms',
      '500',
    ];
    gates.push(
      await startToolgateProcess(upstream.origin, [...PROTOCOL_FORM, ...flags]),
      await startToolgateProcess(upstream.origin, [...PROTOCOL_FORM, ...flags]),
    );
    let admitted = 0;
    let slowest = 0;
    const hammer = async (ms: number, timed: boolean) => {
      const until = Date.now() + ms;
      await Promise.all(
        gates.map(async (g) => {
          while (Date.now() < until) {
            const began = Date.now();
            const r = await post(g.url, toolCall(1, 'read_status'), { authorization: `Bearer ${AGENT_KEY}` }).catch(
              () => undefined,
            );
            if (timed) slowest = Math.max(slowest, Date.now() - began);
            if (r?.status === 200) admitted++;
            await sleep(20);
          }
        }),
      );
    };
    const began = Date.now();
    // Both replicas seen by Redis, the burst used, as in a running domain.
    await hammer(300, false);
    redis.freeze();
    try {
      await hammer(stallMs, true);
    } finally {
      redis.thaw();
    }
    await redis.restart();
    await hammer(afterMs, false);
    const elapsedMs = Date.now() - began;
    const allowed = RULE.requests + Math.floor(elapsedMs / (RULE.perMs / RULE.requests));
    return {
      admitted,
      allowed,
      overshoot: Math.round((admitted / allowed) * 100) / 100,
      elapsedMs,
      stallMs,
      slowestDuringStallMs: slowest,
    };
  } finally {
    await Promise.all(gates.map((g) => g.close()));
    await upstream.close();
    await redis.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export interface ContinueResult {
  readonly attempts: number;
  /** Exchanges without a valid credential that got `100 Continue` before their refusal. */
  readonly continuedBeforeAuth: number;
  /** Exchanges without a valid credential answered 401 at once. */
  readonly refused401: number;
}

/** `Expect: 100-continue` with no credential and with a wrong one, alternately. */
export async function continueBeforeAuth(attempts = 20): Promise<ContinueResult> {
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-chaos-continue-'));
  const upstream = await startCountingUpstream();
  let gate: ToolgateProcess | undefined;
  try {
    await writeFile(join(dir, 'keys.yaml'), KEYS_YAML);
    await writeFile(join(dir, 'policy.yaml'), executionPolicy());
    gate = await startToolgateProcess(upstream.origin, [...PROTOCOL_FORM, '--policy-file', join(dir, 'policy.yaml')]);
    const port = Number(new URL(gate.url).port);
    const body = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    let continuedBeforeAuth = 0;
    let refused401 = 0;
    for (let i = 0; i < attempts; i++) {
      const credential = i % 2 === 0 ? '' : 'authorization: Bearer not-a-key\r\n';
      const head = `POST /mcp HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nexpect: 100-continue\r\ncontent-length: ${body.length}\r\nconnection: close\r\n${credential}\r\n`;
      const text = await rawExchange(port, [head], 1500);
      if (/100 Continue/.test(text)) continuedBeforeAuth++;
      if (text.startsWith('HTTP/1.1 401 ')) refused401++;
    }
    return { attempts, continuedBeforeAuth, refused401 };
  } finally {
    await gate?.close();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  }
}
