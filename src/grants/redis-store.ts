/**
 * Grant snapshots shared by replicas through Redis.
 *
 * L1: per replica, a bounded LRU of snapshots tagged with the revision they
 * were computed at; only an entry of the revision trusted right now is served,
 * so a revision change invalidates all of them at once.
 * L2: in Redis, one key per (domain, revision, principal + scope set) with a
 * TTL; read back through `parseSnapshot`, so a malformed or oversized value
 * fails closed (and is deleted, so the next request recomputes it).
 * A miss in both reads the principal's exact rows and the `*` rows with the
 * revision in one script, computes the snapshot and writes L2.
 */
import type { Principal } from '../auth/types.ts';
import { createRedisSource } from './sources/redis.ts';
import { parseSnapshot, snapshotFor, snapshotMatches, toStored } from './snapshot.ts';
import type { GrantStore } from './store.ts';
import type { SnapshotResult } from './types.ts';
import type { GrantRow } from '../config/policy/grant-row.ts';
import { subjectHash } from '../cache/keys.ts';
import { l1Key } from './subject-key.ts';
import { DEFAULT_L1_MAX_ENTRIES, Lru } from '../bounded/lru.ts';
import { redisCall } from '../cache/breaker.ts';
import { openRedisConnections, type RedisConnections } from '../cache/connections.ts';
import type { RedisConfig } from '../cache/redis.ts';
import { RevisionWatcher, type HealthChange } from './revision-watcher.ts';
import { grantStoreHealth } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';

interface StoreOptions {
  /** Policy domain: the replicas sharing grants. */
  readonly domain: string;
  /** How long a revision stays trusted without a successful read of it. */
  readonly stalenessMs?: number;
  /** How often the revision is read to confirm it. */
  readonly checkIntervalMs?: number;
  readonly l1MaxEntries?: number;
  readonly l2TtlSeconds?: number;
}

/**
 * Either the sidecar's connections (cache/connections.ts), shared with
 * everything else that uses Redis, which the store never closes; or a
 * configuration, from which it opens a pair of its own and closes it with
 * itself (a test, a benchmark).
 */
export type RedisGrantStoreOptions = StoreOptions &
  (
    | { readonly connections: RedisConnections }
    | {
        readonly redis: RedisConfig;
        /** The prefix of the connections' names in CLIENT LIST. */
        readonly clientName?: string;
      }
  );

const DEFAULT_STALENESS_MS = 5000;
const DEFAULT_CHECK_INTERVAL_MS = 1000;
const DEFAULT_L2_TTL_SECONDS = 300;
const TOOL_CACHE_ENTRIES = 1024;

type FailureKind = 'staleFailures' | 'storageFailures' | 'malformedFailures';
// One frozen refusal per cause: callers see the same `grants_unavailable`,
// while the store can count each refused lookup once, by identity.
const REFUSALS: Readonly<Record<FailureKind, SnapshotResult>> = {
  staleFailures: Object.freeze({ ok: false, code: 'grants_unavailable' }),
  storageFailures: Object.freeze({ ok: false, code: 'grants_unavailable' }),
  malformedFailures: Object.freeze({ ok: false, code: 'grants_unavailable' }),
};
const refusal = (kind: FailureKind): SnapshotResult => REFUSALS[kind];

interface Tagged<T> {
  readonly revision: number;
  readonly value: T;
}

export type RedisGrantStoreResult = { ok: true; store: GrantStore } | { ok: false; problem: string };

/**
 * Reads through the command connection, hears revisions on the subscriber,
 * and waits at most the connect timeout for a first confirmed revision.
 * Redis being down at start is not an error: the store fails closed until it
 * can confirm one.
 */
export async function createRedisGrantStore(options: RedisGrantStoreOptions): Promise<RedisGrantStoreResult> {
  const stalenessMs = options.stalenessMs ?? DEFAULT_STALENESS_MS;
  const checkIntervalMs = options.checkIntervalMs ?? DEFAULT_CHECK_INTERVAL_MS;
  const l2TtlSeconds = options.l2TtlSeconds ?? DEFAULT_L2_TTL_SECONDS;
  if (!isWhole(stalenessMs, 1, 3_600_000))
    return { ok: false, problem: 'stalenessMs must be a whole number from 1 to 3600000' };
  if (!isWhole(checkIntervalMs, 1, stalenessMs))
    return { ok: false, problem: 'checkIntervalMs must be a whole number from 1 to stalenessMs' };
  if (!isWhole(l2TtlSeconds, 1, 86_400))
    return { ok: false, problem: 'l2TtlSeconds must be a whole number from 1 to 86400' };

  const owned = !('connections' in options);
  const connections =
    'connections' in options ? options.connections : openRedisConnections(options.redis, options.clientName);
  const { client, subscriber } = connections;
  const created = createRedisSource(client, options.domain);
  if (created === undefined) {
    if (owned) connections.close();
    return { ok: false, problem: 'domain must be 1-64 characters of letters, digits, dot, underscore or hyphen' };
  }
  const source = created;
  // A miss may take two round trips (L2, then rows); together they get one command timeout.
  const deadlineMs = connections.config.commandTimeoutMs;
  const watcher = new RevisionWatcher({
    read: () => redisCall(client, deadlineMs, () => source.readRevision()),
    stalenessMs,
    checkIntervalMs,
  });
  const l1 = new Lru<string, Tagged<SnapshotResult>>(options.l1MaxEntries ?? DEFAULT_L1_MAX_ENTRIES);
  const tools = new Lru<string, Tagged<readonly GrantRow[]>>(TOOL_CACHE_ENTRIES);
  const loading = new Map<string, Promise<SnapshotResult>>();
  const counts = {
    l1Hits: 0,
    l1Misses: 0,
    l2Hits: 0,
    l2Misses: 0,
    staleFailures: 0,
    storageFailures: 0,
    malformedFailures: 0,
  };

  watcher.onChange(() => {
    l1.clear();
    tools.clear();
  });

  // Notices sent while disconnected are lost, and Redis may have come back
  // without its data (and an old revision number): after any reconnect,
  // nothing cached before it is served, and the revision is confirmed now.
  const reconnected = () => {
    l1.clear();
    tools.clear();
    void watcher.check();
  };
  const stopListening = subscriber.listen(source.keys.channel, {
    message: (text) => {
      if (/^\d{1,16}$/.test(text)) watcher.notify(Number(text));
    },
    resumed: reconnected,
  });
  // A shared connection may be up already: its next 'ready' is a reconnect.
  let readyBefore = client.status === 'ready';
  const onReady = () => {
    if (readyBefore) reconnected();
    else void watcher.check();
    readyBefore = true;
  };
  client.on('ready', onReady);
  let closed = false;

  watcher.onHealth((change) => {
    reportHealth(options.domain, change);
    // A demoted master keeps its connections until Sentinel reconfigures it;
    // reconnecting asks Sentinel for the master now. Every other user of the
    // shared connections is on the same node, so they move with them.
    if (change.state === 'not_master' && !closed) connections.reconnect();
  });

  const fail = (kind: FailureKind): SnapshotResult => {
    counts[kind]++;
    return REFUSALS[kind];
  };
  const counted = (result: SnapshotResult): SnapshotResult => {
    for (const kind of Object.keys(REFUSALS) as FailureKind[]) if (result === REFUSALS[kind]) counts[kind]++;
    return result;
  };

  async function load(principal: Principal, key: string, revision: number): Promise<SnapshotResult> {
    const subject = subjectHash(principal.id, [...principal.scopes].sort());
    const l2Key = source.keys.snapshot(revision, subject);
    let text: string | null;
    try {
      text = await client.get(l2Key);
    } catch {
      return refusal('storageFailures');
    }
    if (text !== null) {
      const parsed = parseSnapshot(text);
      if (!parsed.ok || parsed.snapshot.revision !== revision || !snapshotMatches(parsed.snapshot, principal)) {
        client.del(l2Key).catch(() => {});
        return refusal('malformedFailures');
      }
      counts.l2Hits++;
      return remember(key, revision, parsed);
    }
    counts.l2Misses++;
    const read = await source.readForPrincipal(principal.id);
    if (!read.ok) return refusal('storageFailures');
    watcher.notify(read.revision);
    if (read.revision < revision) return refusal('staleFailures');
    const result = snapshotFor(read.rows, principal, read.revision);
    if (!result.ok) return refusal('malformedFailures');
    client
      .set(source.keys.snapshot(read.revision, subject), JSON.stringify(toStored(result.snapshot)), 'EX', l2TtlSeconds)
      .catch(() => {});
    return remember(key, read.revision, result);
  }

  function remember(key: string, revision: number, result: SnapshotResult): SnapshotResult {
    // A revision that lost its confirmation while this was loading is not served.
    const trusted = watcher.revision();
    if (trusted === undefined) return refusal('staleFailures');
    if (trusted === revision) l1.set(key, { revision, value: result });
    return result;
  }

  const store: GrantStore = {
    snapshot(principal) {
      const revision = watcher.revision();
      if (revision === undefined) return fail('staleFailures');
      const key = l1Key(principal);
      const hit = l1.get(key);
      if (hit !== undefined && hit.revision === revision) {
        counts.l1Hits++;
        return hit.value;
      }
      counts.l1Misses++;
      const flightKey = `${revision}\u0000${key}`;
      let flight = loading.get(flightKey);
      if (flight === undefined) {
        flight = redisCall(client, deadlineMs, () => load(principal, key, revision))
          .catch(() => refusal('storageFailures'))
          .then(counted)
          .finally(() => loading.delete(flightKey));
        loading.set(flightKey, flight);
      }
      return flight;
    },
    async rowsForTool(tool) {
      const revision = watcher.revision();
      if (revision === undefined) return undefined;
      const hit = tools.get(tool);
      if (hit !== undefined && hit.revision === revision) return hit.value;
      const read = await redisCall(client, deadlineMs, () => source.readForTool(tool)).catch(() => undefined);
      if (read === undefined || !read.ok) return undefined;
      watcher.notify(read.revision);
      if (watcher.revision() === read.revision) tools.set(tool, { revision: read.revision, value: read.rows });
      return read.rows;
    },
    revision: () => watcher.revision(),
    confirmedAt: () => watcher.confirmedAt(),
    onRevision: (listener) => watcher.onChange(listener),
    stats: () => ({ ...counts, revisionChanges: watcher.stats().changes, l1Entries: l1.size }),
    async close() {
      closed = true;
      watcher.stop();
      stopListening();
      client.off('ready', onReady);
      if (owned) connections.close();
    },
  };

  watcher.start();
  await firstConfirmation(watcher, connections.config.connectTimeoutMs);
  return { ok: true, store };
}

/** One log line per transition, at the level an operator should act on; a metric for each. */
function reportHealth(domain: string, change: HealthChange): void {
  if (grantStoreHealth.hasSubscribers) grantStoreHealth.publish({ state: change.state });
  const fields = { domain, confirmedRevision: change.confirmed, readRevision: change.read };
  switch (change.state) {
    case 'ok':
      if (change.confirmed !== undefined) log.info('grant store confirmed the revision; grants are served', fields);
      return;
    case 'unreachable':
      log.warn('grant store unreachable; calls fail closed once the revision is older than the staleness bound', {
        domain,
        confirmedRevision: change.confirmed,
      });
      return;
    case 'not_master':
      log.warn('grant store answered from a node that is not the master; calls fail closed until the master answers', {
        domain,
        confirmedRevision: change.confirmed,
      });
      return;
    case 'fault':
      log.error(
        'grant store revision went backwards (data lost, or a failover to a replica that was behind); calls fail closed until it reaches the confirmed revision again or an operator runs toolgate grants revision --reset',
        fields,
      );
      return;
  }
}

function firstConfirmation(watcher: RevisionWatcher, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const poll = () => {
      if (watcher.revision() !== undefined || Date.now() >= deadline) return resolve();
      void watcher.check();
      setTimeout(poll, 25).unref();
    };
    poll();
  });
}

function isWhole(n: number, min: number, max: number): boolean {
  return Number.isSafeInteger(n) && n >= min && n <= max;
}
