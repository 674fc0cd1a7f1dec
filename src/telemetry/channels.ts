import { channel } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../auth/types.ts';
import type { ErrorId } from '../errors.ts';
import type { Classified } from '../mcp/classify.ts';

/**
 * Every diagnostics channel toolgate publishes, defined once, here. Telemetry
 * is published by the layers that know what happened and subscribed to by
 * metrics, tracing and audit, so no publisher depends on who listens.
 * Publishers check `hasSubscribers` first, so an unobserved channel costs
 * nothing; messages carry counts, codes and timings, never content.
 */

/**
 * A diagnostics channel whose message type the compiler checks at every
 * publish and in every subscriber. The one cast is here: node's channel
 * carries `unknown`, and a name maps to exactly one message type, declared
 * below beside it.
 */
export interface TypedChannel<T> {
  readonly name: string | symbol;
  readonly hasSubscribers: boolean;
  publish(message: T): void;
  subscribe(subscriber: (message: T) => void): void;
  unsubscribe(subscriber: (message: T) => void): boolean;
}

function typed<T>(name: string): TypedChannel<T> {
  return channel(name) as unknown as TypedChannel<T>;
}

/** A subscriber bound to its channel: the pair a subscriber list holds, typed by the channel. */
export interface Subscription {
  subscribe(): void;
  unsubscribe(): void;
}

export function on<T>(c: TypedChannel<T>, subscriber: (message: T) => void): Subscription {
  return { subscribe: () => c.subscribe(subscriber), unsubscribe: () => void c.unsubscribe(subscriber) };
}

/** A message that says only that something happened. */
export type Nothing = Readonly<Record<string, never>>;

/**
 * Every per-request message carries `request`: subscribers key their own
 * per-request state (a span, an audit record) by it. Messages carry
 * identifiers, codes, sizes and timings only; any content a subscriber reads
 * from `request` or `message` is its own responsibility never to export.
 */
export interface RequestStart {
  readonly request: IncomingMessage;
}

export interface RequestClassified {
  readonly request: IncomingMessage;
  readonly message: Classified;
}

/** One policy stage's decision: authentication, then each interceptor in order. */
export interface Decision {
  readonly request: IncomingMessage;
  /** `authentication`, `tools_list`, or an interceptor name (`grants`, `security_level`, `rate_limit`, `arguments`, …). */
  readonly stage: string;
  readonly allowed: boolean;
  /** The registry error when refused. */
  readonly error?: ErrorId;
  /** Who is calling, once known. */
  readonly principal?: Principal;
  /** Failing schema keywords of an `invalid_arguments` refusal (never values). */
  readonly keywords?: readonly string[];
  /** `audit`: a refusal recorded in shadow mode; the request went on. Absent: enforced. */
  readonly mode?: 'audit';
  /** The grant row that decided (its name, or its JSON pointer in the policy). */
  readonly rule?: string;
  readonly durationSeconds: number;
}

/**
 * Published just before a request goes upstream. `addHeader` lets a
 * subscriber set a field (trace context) on the upstream request, replacing
 * one of the same name, the way undici's own `undici:request:create` channel
 * does. `addMetaField` asks for a field in `params._meta` of the forwarded
 * body, spliced textually so everything else stays byte-identical; it is
 * absent where the body is streamed and cannot be edited.
 */
export interface UpstreamStart {
  readonly request: IncomingMessage;
  addHeader(name: string, value: string): void;
  addMetaField?(name: string, value: string): void;
}

export interface UpstreamEnd {
  readonly request: IncomingMessage;
  /** The upstream's status, or 0 when it never answered. */
  readonly status: number;
  /** Set when the exchange failed: the registry error answered, or `client_closed`. */
  readonly error?: ErrorId | 'client_closed';
  readonly durationSeconds: number;
}

export interface RequestEnd {
  /** Absent for requests Node refused before a handler ran. */
  readonly request?: IncomingMessage;
  /** Bounded label: a known MCP method, `other`, or the HTTP route kind. */
  readonly method: string;
  /** `forwarded`, `client_closed`, or a registry error code. */
  readonly outcome: string;
  readonly status: number;
  readonly durationSeconds: number;
}

export interface StreamChange {
  readonly delta: 1 | -1;
}

/** Published after every catalogue change. */
export interface CatalogueState {
  readonly tools: number;
  /** Tools whose inputSchema toolgate refuses to enforce (their calls get 503). */
  readonly unenforceable: number;
}

/**
 * One tool contract event from the catalogue sync: drift from the approved
 * digest, a tool no pin names, a drifted tool released, or lint findings on
 * a new contract. Fields and pointers only, never description or schema text.
 */
export interface ContractEvent {
  readonly kind: 'drift' | 'unknown' | 'release' | 'lint';
  readonly tool: string;
  /** What toolgate does about it: `alert` only, `quarantine` (enforce mode), or `release`. */
  readonly action: 'alert' | 'quarantine' | 'release';
  readonly digest: string;
  /** A digest approved for the tool, when there is one. */
  readonly approvedDigest?: string;
  /** Which contract fields changed (drift), with JSON pointers inside the schemas and annotations. */
  readonly fields?: readonly { readonly field: string; readonly pointers?: readonly string[] }[];
  readonly findings?: readonly { readonly rule: string; readonly severity: string; readonly pointer: string }[];
}

/** Published after every contract evaluation. */
export interface ContractState {
  readonly quarantined: number;
}

/** Pins held in memory that the pin store had lost (or held only in an older form): kept, and written back. */
export interface ContractPinsLost {
  readonly count: number;
}

export const requestStart = typed<RequestStart>('toolgate:request:start');
export const requestClassified = typed<RequestClassified>('toolgate:request:classified');
export const decision = typed<Decision>('toolgate:decision');

/**
 * One stage's decision, the way every stage publishes it: only when someone
 * listens, and with no duration unless the stage timed itself.
 */
export function publishDecision(d: Omit<Decision, 'durationSeconds'> & { readonly durationSeconds?: number }): void {
  if (decision.hasSubscribers) decision.publish({ ...d, durationSeconds: d.durationSeconds ?? 0 });
}
export const upstreamStart = typed<UpstreamStart>('toolgate:upstream:start');
export const upstreamEnd = typed<UpstreamEnd>('toolgate:upstream:end');
export const requestEnd = typed<RequestEnd>('toolgate:request:end');
export const catalogueState = typed<CatalogueState>('toolgate:catalogue:state');
export const contractEvent = typed<ContractEvent>('toolgate:contracts:event');
export const contractState = typed<ContractState>('toolgate:contracts:state');
export const contractPinsLost = typed<ContractPinsLost>('toolgate:contracts:pins-lost');
export const sseStream = typed<StreamChange>('toolgate:sse:stream');
export const inflight = typed<StreamChange>('toolgate:request:inflight');
/** A client connection opened (+1) or closed (-1) on the traffic port. */
export const clientConnection = typed<StreamChange>('toolgate:connection');
/** A client connection refused because TOOLGATE_MAX_CONNECTIONS were open. */
export const connectionRefused = typed<Nothing>('toolgate:connection:refused');

/** The control revision in force and its freshness, as the grant store reports it. */
export interface GrantState {
  /** Undefined while the store trusts none (the gauge keeps the last one). */
  readonly revision: number | undefined;
  /** When the store last confirmed it, in ms since the epoch; undefined when it is always current (grants from the policy file). */
  readonly confirmedAtMs: number | undefined;
}
export const grantState = typed<GrantState>('toolgate:grants:state');

/** The shared grant store changed health: ok, unreachable, not_master (answered by a replica) or fault (revision went backwards). */
export interface GrantStoreHealth {
  readonly state: 'ok' | 'unreachable' | 'not_master' | 'fault';
}
export const grantStoreHealth = typed<GrantStoreHealth>('toolgate:grants:health');

/** One grant snapshot lookup. */
export interface SnapshotLookup {
  readonly result: 'hit' | 'miss';
}
export const snapshotLookup = typed<SnapshotLookup>('toolgate:grants:snapshot');

/** One policy reload attempt (not the load at start), as reload/watch.ts publishes it. */
export interface PolicyReload {
  readonly outcome: 'applied' | 'rejected' | 'unchanged';
  /** Generation in force after this attempt (0: the version loaded at start). */
  readonly generation: number;
  readonly durationSeconds: number;
}
export const policyReload = typed<PolicyReload>('toolgate:policy:reload');

/** One audit event: written to the sink's queue, or dropped because the queue was full. */
export interface AuditRecord {
  readonly outcome: 'queued' | 'dropped';
}
export const auditRecord = typed<AuditRecord>('toolgate:audit');

/** One discovery search: counts and latency, never the query text. */
export interface DiscoveryDone {
  readonly request: IncomingMessage;
  readonly results: number;
  /** Matching tools the caller may call (never counts other tools). */
  readonly total: number;
  readonly durationSeconds: number;
}

export const discovery = typed<DiscoveryDone>('toolgate:discovery');

/** A transient upstream failure before any byte reached the client: retried, or answered because the retry budget was spent. */
export interface UpstreamRetry {
  readonly outcome: 'retried' | 'budget_exhausted';
  /** What failed: `connect`, `status_502`, `status_503`, `status_504` or `status_429`. */
  readonly reason: string;
}
export const upstreamRetry = typed<UpstreamRetry>('toolgate:upstream:retry');

/** The upstream circuit breaker changed state. */
export interface BreakerChange {
  readonly state: 'closed' | 'open' | 'half_open';
}
export const breakerChange = typed<BreakerChange>('toolgate:upstream:breaker');

/** What an idempotency key did to one tools/call. */
export interface IdempotencyOutcome {
  readonly result: 'executed' | 'replayed' | 'in_progress' | 'unknown' | 'reused' | 'not_stored';
}
export const idempotencyOutcome = typed<IdempotencyOutcome>('toolgate:idempotency');

/**
 * One step of a task's binding to its creator: `bound` when a call created
 * it, `unbound` when that record could not be written (the task cannot be
 * reached), `taken` when its id already belonged to another principal;
 * `owner` when a tasks/* request came from its creator, `not_found` when it
 * did not (or the task is unknown), `unavailable` when the store could not
 * say, `revoked` when the creator lost its grant for the task's tool.
 */
export interface TaskEvent {
  readonly event: 'bound' | 'unbound' | 'taken' | 'owner' | 'not_found' | 'unavailable' | 'revoked';
}
export const taskEvent = typed<TaskEvent>('toolgate:tasks');

/**
 * What the result guard did to one tools/call result (or, `mode: audit`,
 * would have done): detector and lint rule ids with counts, never the text.
 */
export interface ResultGuardEvent {
  readonly request: IncomingMessage;
  readonly tool: string;
  readonly mode: 'enforce' | 'audit';
  readonly hits: readonly {
    readonly detector: string;
    readonly action: 'redact' | 'mark' | 'block' | 'cut';
    readonly count: number;
  }[];
}
export const resultGuard = typed<ResultGuardEvent>('toolgate:result_guard');

/** A tools/call deadline passed: before forwarding (not sent) or during the exchange (upstream aborted). */
export interface DeadlinePassed {
  readonly phase: 'before_forward' | 'in_flight';
}
export const deadlinePassed = typed<DeadlinePassed>('toolgate:deadline');

/** The idle heap trim ran (`heap-trim.ts`): what it gave back and how long it held the event loop. */
export interface HeapTrim {
  readonly releasedBytes: number;
  readonly durationSeconds: number;
}
export const heapTrim = typed<HeapTrim>('toolgate:heap_trim');

/** A rate-limit decision made in process because the shared store (Redis) could not be asked. */
export const rateLimitFallback = typed<Nothing>('toolgate:rate_limit:fallback');

/**
 * One step in an approval's life: requested (a call asked for one), approved
 * or denied (by `approver`, through `via`), expired (a repeat came too late),
 * spent (the approved call ran). Digests and identifiers only: never an
 * argument value.
 */
export interface ApprovalEvent {
  /** The tools/call this step happened on, when it happened on one (requested, expired, spent, unsettled, denied told). */
  readonly request?: IncomingMessage;
  readonly event: 'requested' | 'approved' | 'denied' | 'expired' | 'spent' | 'unsettled';
  readonly approvalId: string;
  readonly principal: string;
  readonly tool: string;
  /** SHA-256 hex of the RFC 8785 form of the arguments. */
  readonly argumentsDigest: string;
  readonly policyRevision: string;
  readonly approver?: string;
  readonly via?: 'page' | 'cli' | 'grpc';
}
export const approvalEvent = typed<ApprovalEvent>('toolgate:approval');
