/**
 * The Redis key layout of one policy domain. Every grant key carries the hash
 * tag `{tg:<domain>}`, so a domain's keys share one Cluster slot and a change
 * can update rows, indexes and the revision in one script.
 */
import { createHash } from 'node:crypto';

/** Policy domain names: safe inside a hash tag and a key. */
const DOMAIN_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

export function isDomain(v: unknown): v is string {
  return typeof v === 'string' && DOMAIN_PATTERN.test(v);
}

export interface DomainKeys {
  /** String: the control revision (INCR). */
  readonly revision: string;
  /** Pub/sub channel carrying each new revision. */
  readonly channel: string;
  /** Hash: row identity → row JSON, every row of the domain. */
  readonly rows: string;
  /** Hash: the `*` rows only. */
  readonly wildcard: string;
  /** Hash: one principal's exact rows. */
  principal(id: string): string;
  /** Hash: every row naming one tool. */
  tool(name: string): string;
  /** String with a TTL: one computed snapshot (L2). */
  snapshot(revision: number, subjectHash: string): string;
  /** Hash: tool name → its pinned contract (JSON), first-seen or approved by an operator. */
  readonly contractPins: string;
  /** String: the epoch marker of the pin hash (cache/guarded-write.ts), in the same slot. */
  readonly contractPinsEpoch: string;
}

export function domainKeys(domain: string): DomainKeys {
  const tag = `{tg:${domain}}`;
  return Object.freeze({
    revision: `${tag}:rev`,
    channel: `${tag}:rev:changed`,
    rows: `${tag}:rows`,
    wildcard: `${tag}:w`,
    principal: (id: string) => `${tag}:p:${id}`,
    tool: (name: string) => `${tag}:t:${name}`,
    snapshot: (revision: number, hash: string) => `${tag}:snap:${revision}:${hash}`,
    contractPins: `${tag}:contracts:pins`,
    contractPinsEpoch: `${tag}:contracts:epoch`,
  });
}

/** One-time token records are spread over this many hash tags, each with its own epoch marker. */
export const REPLAY_SHARDS = 16;

export interface ReplayKeys {
  /** String with the token's TTL: a used one-time token id. */
  readonly record: string;
  /** String: the epoch marker of the record's shard, in the same Cluster slot. */
  readonly marker: string;
  readonly shard: number;
}

/**
 * Where a one-time token id is recorded. A shard's hash tag puts the record
 * beside its shard's epoch marker, so one script checks both atomically (and
 * a Cluster node that loses its data loses its markers too), while sixteen
 * tags still spread ids over the Cluster's nodes.
 */
export function replayKeys(domain: string, jti: string): ReplayKeys {
  const shard = createHash('sha256').update(jti).digest().readUInt8(0) % REPLAY_SHARDS;
  const tag = replayShardTag(domain, shard);
  return { record: `${tag}:${jti}`, marker: `${tag}:epoch`, shard };
}

export function replayShardTag(domain: string, shard: number): string {
  return `{tg:${domain}:jti:${shard}}`;
}

/**
 * Names a principal with one scope set in snapshot keys and the L1 cache:
 * SHA-256 over the id and the sorted scopes, so any id fits in a key.
 */
export function subjectHash(id: string, sortedScopes: readonly string[]): string {
  return createHash('sha256').update(id).update('\u0000').update(sortedScopes.join(' ')).digest('hex');
}

/** Names a principal id in shared keys and messages (activations, list-change relays): any id fits, none is stored as given. */
export function principalDigest(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/** Idempotency records of one domain, under its hash tag so a claim's two keys share a Cluster slot. */
export function idempotencyKeys(domain: string): {
  record(scope: string): string;
  lease(scope: string): string;
  readonly epoch: string;
} {
  const tag = `{tg:${domain}}`;
  return Object.freeze({
    epoch: `${tag}:idem:epoch`,
    record: (scope: string) => `${tag}:idem:${scope}`,
    lease: (scope: string) => `${tag}:idem:${scope}:lease`,
  });
}

/** Who created one task (by a digest of its id), under the domain's hash tag so a listing's lookups share a Cluster slot. */
export function taskKey(domain: string, taskId: string): string {
  return `{tg:${domain}}:task:${createHash('sha256').update(taskId).digest('hex')}`;
}

/** Shared rate-limit buckets of one domain: one key per rule and principal digest. */
export function rateLimitKey(domain: string, rule: string, principalHash: string): string {
  return `{tg:${domain}}:rl:${rule}:${principalHash}`;
}

/** The replicas of a domain that took a shared rate-limit decision lately (a sorted set by time). */
export function rateLimitReplicasKey(domain: string): string {
  return `{tg:${domain}}:rl:replicas`;
}

/** Approvals of one domain, under its hash tag: a record by binding, its id's index, and the pending set. */
export function approvalKeys(domain: string): {
  record(binding: string): string;
  spending(binding: string): string;
  readonly idPrefix: string;
  id(id: string): string;
  readonly pending: string;
} {
  const tag = `{tg:${domain}}`;
  return Object.freeze({
    record: (binding: string) => `${tag}:appr:b:${binding}`,
    spending: (binding: string) => `${tag}:appr:s:${binding}`,
    idPrefix: `${tag}:appr:i:`,
    id: (id: string) => `${tag}:appr:i:${id}`,
    pending: `${tag}:appr:pending`,
  });
}
