import { post, refusalOf } from './raw.ts';
import { toolCall } from './execution-policy.ts';
import type { CountingUpstream } from './counting-upstream.ts';
import type { ToolgateProcess } from './toolgate-process.ts';

export interface KillTrials {
  /** Keyed calls cut by a SIGKILL (calls per kill × kills). */
  readonly trials: number;
  readonly kills: number;
  /** Keys the upstream ran more than once. */
  readonly doubleExecutions: number;
  /** How each repeat through the surviving replica was answered: `replayed`, `executed`, or the error code. */
  readonly answers: Record<string, number>;
}

/** The answers a repeat may get without breaking the at-most-once rule. */
export const SAFE_ANSWERS = new Set(['replayed', 'executed', 'call_in_progress', 'outcome_unknown']);

/**
 * SIGKILL trials. Each round starts a replica (`respawn`), sends it
 * `callsPerKill` keyed non_idempotent_write calls at random moments of a
 * window a little longer than one call, and SIGKILLs it at the window's end,
 * so the kill lands in every phase of some call: before its record, while
 * the upstream runs it, after the upstream answered. Then each call is
 * repeated with its key through `survivor`. Replica start-up is the slow
 * part, so one kill cuts several calls.
 */
export async function runKillTrials(options: {
  readonly kills: number;
  readonly callsPerKill: number;
  readonly upstream: CountingUpstream;
  /** Repeats go here; without one, through the victim's successor (one replica whose records must outlive it). */
  readonly survivor?: ToolgateProcess;
  readonly headers: Record<string, string>;
  respawn(): Promise<ToolgateProcess>;
  readonly callMs: number;
}): Promise<KillTrials> {
  const { upstream, survivor, headers, callMs } = options;
  const answers: Record<string, number> = {};
  upstream.behaviour.delayMs = callMs;
  const windowMs = callMs + 100;
  let successor: ToolgateProcess | undefined;
  for (let k = 0; k < options.kills; k++) {
    const victim = successor ?? (await options.respawn());
    const calls = Array.from({ length: options.callsPerKill }, (_, j) => ({
      key: `kill-${process.pid}-${Date.now()}-${k}-${j}`,
      body: toolCall(j, 'refund_payment', { n: j }),
    }));
    const sent = calls.map(async (c) => {
      await new Promise((r) => setTimeout(r, Math.random() * windowMs));
      await post(victim.url, c.body, { ...headers, 'idempotency-key': c.key }).catch(() => undefined);
    });
    await new Promise((r) => setTimeout(r, windowMs));
    await victim.kill();
    await Promise.all(sent);
    const repeater = survivor ?? (successor = await options.respawn());
    for (const c of calls) {
      const repeat = await post(repeater.url, c.body, { ...headers, 'idempotency-key': c.key });
      const refused = refusalOf(repeat);
      const answer =
        refused !== undefined
          ? String(refused.code)
          : repeat.headers['idempotent-replayed'] === 'true'
            ? 'replayed'
            : 'executed';
      answers[answer] = (answers[answer] ?? 0) + 1;
    }
  }
  await successor?.close();
  let doubleExecutions = 0;
  for (const runs of upstream.byKey.values()) if (runs > 1) doubleExecutions++;
  return { trials: options.kills * options.callsPerKill, kills: options.kills, doubleExecutions, answers };
}
