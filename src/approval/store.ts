import { Lru } from '../bounded/lru.ts';
import {
  decided,
  EXPIRED_NOTICE_MS,
  spendOutcome,
  type ApprovalRecord,
  type DecideResult,
  type SpendResult,
} from './record.ts';

/**
 * Where approvals live: in process for one replica, in Redis when replicas
 * share them. Every operation that changes a record is atomic, so two
 * replicas can never both spend one approval, and a decision never lands on
 * a record that was spent or expired meanwhile.
 */
export interface ApprovalStore {
  /**
   * The record for this binding, creating `draft` when there is none. Two
   * first calls racing get the same record.
   */
  open(draft: ApprovalRecord): Promise<{ readonly record: ApprovalRecord; readonly created: boolean }>;
  /** Consumes a decided (or expired) record for this binding; a pending one stays. */
  spend(binding: string, now: number): Promise<SpendResult>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  decide(
    id: string,
    state: 'approved' | 'denied',
    approver: string,
    now: number,
    via?: ApprovalRecord['decidedVia'],
  ): Promise<DecideResult>;
  /** Pending records inside their time, soonest expiry first, at most `limit`. */
  pending(now: number, limit: number): Promise<readonly ApprovalRecord[]>;
}

const MAX_MEMORY_APPROVALS = 10_000;

/** The in-process store, for one replica without Redis. Synchronous inside, so every operation is atomic. */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #byBinding = new Lru<string, ApprovalRecord>(MAX_MEMORY_APPROVALS);
  readonly #bindingOf = new Map<string, string>();

  open(draft: ApprovalRecord): Promise<{ record: ApprovalRecord; created: boolean }> {
    const existing = this.#live(draft.binding, draft.createdAt);
    if (existing !== undefined) return Promise.resolve({ record: existing, created: false });
    this.#put(draft);
    return Promise.resolve({ record: draft, created: true });
  }

  spend(binding: string, now: number): Promise<SpendResult> {
    const record = this.#live(binding, now);
    if (record === undefined) return Promise.resolve({ kind: 'none' });
    const kind = spendOutcome(record, now);
    if (kind === 'pending') return Promise.resolve({ kind, record });
    this.#drop(record);
    return Promise.resolve({ kind, record });
  }

  get(id: string): Promise<ApprovalRecord | undefined> {
    const binding = this.#bindingOf.get(id);
    return Promise.resolve(binding === undefined ? undefined : this.#live(binding, Date.now()));
  }

  decide(
    id: string,
    state: 'approved' | 'denied',
    approver: string,
    now: number,
    via?: ApprovalRecord['decidedVia'],
  ): Promise<DecideResult> {
    const binding = this.#bindingOf.get(id);
    const record = binding === undefined ? undefined : this.#live(binding, now);
    if (record === undefined) return Promise.resolve({ kind: 'not_found' });
    const next = decided(record, state, approver, now, via);
    if (next === undefined) return Promise.resolve({ kind: 'not_pending', record });
    this.#byBinding.set(record.binding, next);
    return Promise.resolve({ kind: 'decided', record: next });
  }

  pending(now: number, limit: number): Promise<readonly ApprovalRecord[]> {
    const out: ApprovalRecord[] = [];
    for (const binding of this.#bindingOf.values()) {
      const r = this.#byBinding.peek(binding);
      if (r !== undefined && r.state === 'pending' && r.expiresAt > now) out.push(r);
    }
    return Promise.resolve(out.sort((a, b) => a.expiresAt - b.expiresAt).slice(0, limit));
  }

  /** The record for a binding unless it outlived its expiry notice (then it is forgotten). */
  #live(binding: string, now: number): ApprovalRecord | undefined {
    const r = this.#byBinding.get(binding);
    if (r === undefined) return undefined;
    if (r.expiresAt + EXPIRED_NOTICE_MS <= now) {
      this.#drop(r);
      return undefined;
    }
    return r;
  }

  #put(r: ApprovalRecord): void {
    // The LRU dropped its oldest record to make room: forget its id too.
    const evicted = this.#byBinding.set(r.binding, r);
    if (evicted !== undefined) this.#bindingOf.delete(evicted.id);
    this.#bindingOf.set(r.id, r.binding);
  }

  #drop(r: ApprovalRecord): void {
    this.#byBinding.delete(r.binding);
    this.#bindingOf.delete(r.id);
  }
}
