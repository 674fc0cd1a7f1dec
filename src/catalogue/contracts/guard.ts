import type { ContractsConfig } from '../../config/policy/policy.ts';
import { contractEvent, contractPinsLost, contractState, type ContractEvent } from '../../telemetry/channels.ts';
import { log } from '../../telemetry/log.ts';
import type { Catalogue, CatalogueTool } from '../catalogue.ts';
import { toolDigest } from '../digest.ts';
import { lintTool, type Finding } from '../lint/lint.ts';
import { assess, type Assessment, type QuarantineReason } from './assess.ts';
import { contractOf } from './diff.ts';
import { reconcilePin, type Pin, type PinStore } from './pins.ts';

export interface Quarantined {
  readonly reason: QuarantineReason;
  /** A digest approved for the tool (the first), when there is one. */
  readonly approvedDigest?: string;
}

export interface ContractGuardOptions {
  readonly store: PinStore;
  readonly config: () => ContractsConfig;
  readonly catalogue: () => Catalogue | undefined;
  /** Called when the set of quarantined tools changed: callers' tool lists changed. */
  readonly onQuarantineChange?: () => void;
  /** Asks for a catalogue sync (a listed tool did not match its approved digest). */
  readonly refreshCatalogue?: () => void;
}

export type ApproveResult = { ok: true; digest: string } | { ok: false; reason: 'unknown_tool' | 'store_unavailable' };

const NONE: ReadonlyMap<string, Quarantined> = new Map();
/** Printed prefix of a digest: enough to tell contracts apart, short enough for an error body. */
export const DIGEST_PREFIX_LENGTH = 12;

/**
 * Pins tool contracts and quarantines drift. Evaluation runs off the
 * request path (after each catalogue sync, policy reload, grant revision
 * change, or approval) and leaves an immutable map the request path reads
 * with one lookup; contract digests come from the sync, never from a call.
 */
export class ContractGuard {
  readonly #opts: ContractGuardOptions;
  #assessments: ReadonlyMap<string, Assessment> = new Map();
  #quarantined: ReadonlyMap<string, Quarantined> = NONE;
  #approved: ReadonlyMap<string, ReadonlySet<string>> = new Map();
  #config: ContractsConfig | undefined;
  #pins: ReadonlyMap<string, Pin> = new Map();
  readonly #lastApproved = new Map<string, Readonly<Record<string, unknown>>>();
  #lintByDigest = new Map<string, readonly Finding[]>();
  #running: Promise<void> | undefined;
  #again = false;

  constructor(opts: ContractGuardOptions) {
    this.#opts = opts;
  }

  /**
   * Evaluates again every `ms`, so pins approved elsewhere (another replica,
   * the CLI) are read even when no revision change announces them. Returns
   * what stops it.
   */
  recheckEvery(ms: number): () => void {
    const timer = setInterval(() => void this.evaluate(), ms);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Re-evaluates; concurrent requests share one run plus at most one more. */
  evaluate(): Promise<void> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        await this.#evaluateOnce();
      } while (this.#again);
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  quarantined(tool: string): Quarantined | undefined {
    return this.#quarantined.get(tool);
  }

  /** Every quarantined tool; a new map whenever the set changes, so it can key a memo. */
  quarantinedTools(): ReadonlyMap<string, Quarantined> {
    return this.#quarantined;
  }

  assessments(): ReadonlyMap<string, Assessment> {
    return this.#assessments;
  }

  pin(tool: string): Pin | undefined {
    return this.#pins.get(tool);
  }

  /** A tool as the upstream lists it now, quarantined or not. */
  currentTool(tool: string): CatalogueTool | undefined {
    return this.#opts.catalogue()?.tools.get(tool);
  }

  /** The last approved contract toolgate knows for a tool: its stored pin's, else the last one seen approved. */
  approvedContract(tool: string): Readonly<Record<string, unknown>> | undefined {
    return this.#pins.get(tool)?.contract ?? this.#lastApproved.get(tool);
  }

  /**
   * Whether a tool object from a live tools/list may be shown (enforce mode):
   * not quarantined, and, when digests are approved for it, carrying one of
   * them. The upstream can change a tool between two syncs; a listing must
   * never show a contract toolgate has not checked, so a mismatch hides the
   * tool and asks for a sync.
   */
  mayList(tool: Readonly<Record<string, unknown>>): boolean {
    const config = this.#config;
    if (config === undefined || config.mode !== 'enforce') return !this.#quarantined.has(tool.name as string);
    const name = tool.name as string;
    if (this.#quarantined.has(name)) return false;
    const approved = this.#approved.get(name);
    if (approved === undefined) return config.unknownTools === 'allow';
    const d = toolDigest(tool);
    if (d.ok && approved.has(d.digest)) return true;
    this.#opts.refreshCatalogue?.();
    return false;
  }

  /** An operator approves the tool's current contract, or a given digest; re-evaluates before answering. */
  async approve(tool: string, digest?: string): Promise<ApproveResult> {
    const current = this.currentTool(tool);
    const chosen = digest ?? current?.digest;
    if (chosen === undefined) return { ok: false, reason: 'unknown_tool' };
    const contract = current !== undefined && current.digest === chosen ? contractOf(current.tool) : undefined;
    const ok = await this.#opts.store.approve(tool, {
      digest: chosen,
      by: 'operator',
      at: Date.now(),
      ...(contract !== undefined && { contract }),
    });
    if (!ok) return { ok: false, reason: 'store_unavailable' };
    await this.evaluate();
    return { ok: true, digest: chosen };
  }

  async #evaluateOnce(): Promise<void> {
    const config = this.#opts.config();
    const catalogue = this.#opts.catalogue();
    this.#config = config;
    if (catalogue === undefined) return;
    if (config.mode === 'off' && config.lint === 'off') {
      this.#install(new Map(), config);
      return;
    }
    const stored = await this.#opts.store.all();
    const pins = stored === undefined ? new Map(this.#pins) : await this.#reconcile(stored);
    if (config.mode !== 'off' && config.pin === 'first-seen') await this.#pinFirstSeen(catalogue, config, pins);
    this.#pins = pins;
    const lint = this.#linter();
    const next = assess({ catalogue, config, pins, lastApproved: this.#lastApproved, lint });
    for (const a of next.values()) {
      if (a.status === 'approved')
        this.#lastApproved.set(a.name, contractOf((catalogue.tools.get(a.name) as CatalogueTool).tool));
    }
    this.#install(next, config);
  }

  /**
   * The store's pins, with every pin held in memory that the store lost or
   * holds only in an older form kept (see `reconcilePin`) and written back,
   * so a loss never turns a quarantined contract into a trusted one.
   */
  async #reconcile(stored: ReadonlyMap<string, Pin>): Promise<Map<string, Pin>> {
    const pins = new Map(stored);
    const kept: string[] = [];
    for (const [tool, held] of this.#pins) {
      const r = reconcilePin(stored.get(tool), held);
      if (r.pin !== undefined) pins.set(tool, r.pin);
      if (r.kept) kept.push(tool);
    }
    if (kept.length === 0) return pins;
    log.error('the contract pin store lost pins this replica held: they are kept and written back', {
      count: kept.length,
      tools: kept.slice(0, 20).join(','),
    });
    if (contractPinsLost.hasSubscribers) contractPinsLost.publish({ count: kept.length });
    // HSET, not HSETNX: a first-seen pin written since the loss must not stand.
    await Promise.all(kept.map((tool) => this.#opts.store.approve(tool, pins.get(tool) as Pin)));
    return pins;
  }

  async #pinFirstSeen(catalogue: Catalogue, config: ContractsConfig, pins: Map<string, Pin>): Promise<void> {
    for (const tool of catalogue.tools.values()) {
      if (pins.has(tool.name) || Object.hasOwn(config.tools, tool.name)) continue;
      // A tool quarantined now has lost its pin somewhere between; its contract is the suspect one.
      if (this.#quarantined.has(tool.name)) continue;
      const held = await this.#opts.store.pinFirst(tool.name, {
        digest: tool.digest,
        contract: contractOf(tool.tool),
        by: 'first-seen',
        at: Date.now(),
      });
      if (held !== undefined) pins.set(tool.name, held);
    }
  }

  /** Lint results by digest, kept only for the digests of the current catalogue. */
  #linter(): (tool: CatalogueTool) => readonly Finding[] {
    const previous = this.#lintByDigest;
    const next = new Map<string, readonly Finding[]>();
    this.#lintByDigest = next;
    return (tool) => {
      const findings = next.get(tool.digest) ?? previous.get(tool.digest) ?? lintTool(tool.tool);
      next.set(tool.digest, findings);
      return findings;
    };
  }

  #install(next: Map<string, Assessment>, config: ContractsConfig): void {
    const before = this.#assessments;
    const quarantined = new Map<string, Quarantined>();
    const approved = new Map<string, ReadonlySet<string>>();
    for (const a of next.values()) {
      if (a.approved.length > 0) approved.set(a.name, new Set(a.approved));
      if (a.quarantine !== undefined)
        quarantined.set(a.name, {
          reason: a.quarantine,
          ...(a.approved[0] !== undefined && { approvedDigest: a.approved[0] }),
        });
    }
    const changed =
      quarantined.size !== this.#quarantined.size || [...quarantined.keys()].some((n) => !this.#quarantined.has(n));
    this.#assessments = next;
    this.#approved = approved;
    this.#quarantined = quarantined.size === 0 ? NONE : quarantined;
    for (const a of next.values()) report(before.get(a.name), a, config);
    if (contractState.hasSubscribers) contractState.publish({ quarantined: quarantined.size });
    if (changed) this.#opts.onQuarantineChange?.();
  }
}

/** Audit, metrics and a log line for what changed since the last evaluation; never texts. */
function report(before: Assessment | undefined, a: Assessment, config: ContractsConfig): void {
  const sameContract = before?.digest === a.digest;
  const events: ContractEvent[] = [];
  const base = {
    tool: a.name,
    digest: a.digest,
    ...(a.approved[0] !== undefined && { approvedDigest: a.approved[0] }),
  };
  if (config.mode !== 'off' && a.status === 'drifted' && !(sameContract && before?.status === 'drifted')) {
    events.push({
      kind: 'drift',
      action: a.quarantine === 'drift' ? 'quarantine' : 'alert',
      ...base,
      ...(a.changes !== undefined && { fields: a.changes }),
    });
  }
  if (config.mode !== 'off' && a.status === 'unknown' && !(sameContract && before?.status === 'unknown')) {
    events.push({ kind: 'unknown', action: a.quarantine === 'unknown' ? 'quarantine' : 'alert', ...base });
  }
  if (a.findings.length > 0 && !(sameContract && before.findings.length > 0)) {
    events.push({
      kind: 'lint',
      action: a.quarantine === 'lint' ? 'quarantine' : 'alert',
      ...base,
      findings: a.findings,
    });
  }
  if (before?.quarantine !== undefined && a.quarantine === undefined)
    events.push({ kind: 'release', action: 'release', ...base });
  for (const e of events) {
    log.warn(`tool contract ${e.kind}`, {
      tool: e.tool,
      action: e.action,
      digest: e.digest.slice(0, DIGEST_PREFIX_LENGTH),
      approved: e.approvedDigest?.slice(0, DIGEST_PREFIX_LENGTH),
      fields: e.fields?.map((f) => f.field).join(','),
      rules: e.findings?.map((f) => f.rule).join(','),
    });
    if (contractEvent.hasSubscribers) contractEvent.publish(e);
  }
}
