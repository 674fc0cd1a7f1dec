/**
 * The policy file: grants, per-tool metadata, defaults and authentication
 * settings, loaded from YAML (or JSON), validated once, and handed out as one
 * deep-frozen `Policy`. A load either yields a whole new policy or errors and
 * nothing else, so a watcher can swap snapshots atomically and keep the last
 * good one when a new version is invalid.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { normalizeRow } from './grant-row.ts';
import type { Enforcement, GrantRow } from './grant-row.ts';
import { policySchema } from './schema.ts';
import type {
  ContractMode,
  Idempotency,
  InjectionMode,
  PinMode,
  RawMetadata,
  RawPolicy,
  RawResults,
  RawSurfaceRow,
  RawTool,
  SecurityLevel,
  SideEffect,
  Tier,
} from './raw.ts';
import type { PromptRow, ResourceRow, Surface } from './surface-row.ts';
import { checkSemantics } from './semantics.ts';
import { compileSchema, parseYaml, validateWith } from './validate.ts';
import type { ConfigError } from './validate.ts';

export type { ConfigError } from './validate.ts';

/** Metadata every tool has once defaults are applied. */
export interface ToolDefaults {
  readonly tier: Tier;
  readonly alwaysInclude: boolean;
  readonly sideEffect: SideEffect;
  /** The deadline of a call, whole exchange included; undefined: the process setting (TOOLGATE_UPSTREAM_TIMEOUT_MS) applies. */
  readonly timeoutMs: number | undefined;
  /** Attempts after the first; honoured only where a repeat is safe (see src/execution/run.ts). */
  readonly maxRetries: number;
  /** Whether a progress notification restarts the deadline of a streamed call. */
  readonly resetTimeoutOnProgress: boolean;
  readonly idempotency: Idempotency;
  /** Calls of this tool in flight at once on one replica; undefined: no limit. */
  readonly maxConcurrent: number | undefined;
  /** Scopes a principal must hold, all of them, in addition to a grant. */
  readonly requiredScopes: readonly string[];
  readonly securityLevel: SecurityLevel;
  /** What the result guard does with this tool's results; undefined: nothing, and the result streams through untouched. */
  readonly results: ResultGuards | undefined;
}

/** A tool's `results` section, its own fields over the defaults' (docs/result-guard.md). */
export interface ResultGuards {
  /** A larger result is replaced by a `result_too_large` tool error; undefined: only the inspection bound applies. */
  readonly maxBytes: number | undefined;
  /** Detector ids whose matches are replaced by `[redacted: <id>]`. */
  readonly redact: readonly string[];
  readonly injection: InjectionMode;
  /** `audit`: what the guard would do is recorded and the result goes on unchanged; undefined: the tool's enforcement. */
  readonly enforcement: Enforcement | undefined;
}

export interface ToolMetadata extends ToolDefaults {
  /** Shadow mode for this tool's refusals; undefined: the policy's `enforcement`. */
  readonly enforcement?: Enforcement;
  /** Extra search terms for discovery; never callable names. */
  readonly aliases: readonly string[];
  /** Example queries for discovery. */
  readonly examples: readonly string[];
}

interface OneTimeConfig {
  /** Tokens from these issuers are one-time. */
  readonly issuers: readonly string[];
  /** Tokens whose claim of this name is `true` are one-time. */
  readonly claim: string | undefined;
  readonly maxLifetimeSeconds: number;
  /** Bound of the in-process replay store. */
  readonly maxEntries: number;
}

interface JwtConfig {
  readonly issuer: readonly string[];
  readonly audience: readonly string[];
  readonly jwksFile: string | undefined;
  readonly jwksUrl: string | undefined;
  readonly algorithms: readonly string[];
  readonly clockSkewSeconds: number;
  readonly jwksTimeoutMs: number;
  readonly jwksCooldownMs: number;
  readonly jwksCacheMaxAgeMs: number;
  readonly oneTime: OneTimeConfig | undefined;
}

/** Projected ServiceAccount tokens of the cluster toolgate runs in (docs/authentication.md). */
export interface KubernetesAuthConfig {
  readonly issuer: string;
  readonly audience: readonly string[];
  /** Keys from this file; otherwise from the API server's /openid/v1/jwks. */
  readonly jwksFile: string | undefined;
  /** Where the JWKS and TokenReviews go, as the sidecar's own ServiceAccount. */
  readonly apiServer: {
    readonly url: string;
    readonly caFile: string;
    readonly tokenFile: string;
    readonly timeoutMs: number;
  };
  readonly clockSkewSeconds: number;
  readonly jwksCooldownMs: number;
  readonly jwksCacheMaxAgeMs: number;
  /** With a TokenReview per token, cached this long: a deleted Pod's token stops working within it. */
  readonly tokenReview: { readonly enabled: boolean; readonly cacheSeconds: number };
}

/** The in-cluster defaults: the API server's Service and the kubelet's projected ServiceAccount files. */
const IN_CLUSTER = {
  url: 'https://kubernetes.default.svc',
  caFile: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
  tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
} as const;

export interface AuthenticationConfig {
  /** The protected-resource metadata URL named in every challenge. */
  readonly resourceMetadataUrl: string | undefined;
  readonly staticKeys: { readonly file: string; readonly apiKeyHeader: boolean } | undefined;
  readonly jwt: JwtConfig | undefined;
  readonly kubernetes: KubernetesAuthConfig | undefined;
  readonly anonymous: { readonly enabled: boolean; readonly scopes: readonly string[] };
}

/** An external validator called over gRPC (SEP-1763 shape); see docs/policy.md. */
export interface ValidatorConfig {
  readonly name: string;
  readonly target: string;
  readonly hooks: readonly { readonly event: 'tools/call'; readonly phase: 'request' }[];
  /** Lower first: orders the results, and the first blocking one decides. */
  readonly priority: number;
  /** `audit` never blocks: results are only logged. */
  readonly mode: 'active' | 'audit';
  /** When the validator cannot be asked (timeout, crash, malformed answer), pass instead of refusing. */
  readonly failOpen: boolean;
  readonly timeoutMs: number;
}

/**
 * A rate limit on tools/call: `requests` per `per`, up to `burst` at once,
 * counted per principal for every principal it names (`*`: each one).
 */
export interface RateLimitRule {
  readonly principal: string;
  /** A tool name, or `*` for one bucket over all of the principal's calls. */
  readonly tool: string;
  readonly requests: number;
  readonly per: 'second' | 'minute' | 'hour';
  readonly burst: number;
  /** Milliseconds to earn one call back. */
  readonly msPerCall: number;
  /** The rule's identity across reloads: an unchanged rule keeps its buckets. */
  readonly key: string;
}

/** Tool contract pinning: which contract digests are approved, and what drift and lint findings do. */
export interface ContractsConfig {
  /** `alert` reports drift; `enforce` also quarantines the tool (hidden, calls refused). */
  readonly mode: ContractMode;
  /** `first-seen`: a tool no pin names is pinned to the first digest toolgate sees (shared through Redis). */
  readonly pin: PinMode;
  /** What an unpinned tool is when `pin` is `explicit` (or before its first-seen pin is written). */
  readonly unknownTools: 'allow' | 'quarantine';
  /** `alert` reports description lint findings; `enforce` also quarantines tools with a high-severity one. */
  readonly lint: ContractMode;
  /** Approved digests by tool name; a null-prototype record. */
  readonly tools: Readonly<Record<string, readonly string[]>>;
}

export interface Policy {
  readonly version: 1;
  /** `audit`: refusals by the stages that honour shadow mode are recorded and the call is forwarded. */
  readonly enforcement: Enforcement;
  readonly authentication: AuthenticationConfig;
  readonly defaults: ToolDefaults;
  /** The metadata of a tool the policy does not list: the defaults, with no aliases or examples. Made once at load, read on every call. */
  readonly unlistedTool: ToolMetadata;
  /** Tools with their own metadata, defaults applied; a null-prototype record. */
  readonly tools: Readonly<Record<string, ToolMetadata>>;
  /** Canonical rows, identical duplicates combined, in file order. */
  readonly grants: readonly GrantRow[];
  /** External validators, by priority then name. */
  readonly validators: readonly ValidatorConfig[];
  /** In file order; identical rules combined. */
  readonly rateLimits: readonly RateLimitRule[];
  /** Registered JSON Schemas by URI, for tool schemas that $ref them (never fetched). */
  readonly schemas: Readonly<Record<string, unknown>>;
  readonly contracts: ContractsConfig;
  /** Resource grants by URI; undefined: the policy has no `resources` section and resources are not policed. */
  readonly resources: Surface<ResourceRow> | undefined;
  /** Prompt grants by name; undefined: the policy has no `prompts` section and prompts are not policed. */
  readonly prompts: Surface<PromptRow> | undefined;
  /** SHA-256 hex of the source text, to tell a real change from a re-save. */
  readonly sourceDigest: string;
}

export type PolicyResult = { ok: true; policy: Policy } | { ok: false; errors: ConfigError[] };

const MAX_POLICY_BYTES = 8 * 1024 * 1024;

export const BUILTIN_DEFAULTS: ToolDefaults = Object.freeze({
  tier: 'onDemand',
  alwaysInclude: false,
  sideEffect: 'non_idempotent_write',
  timeoutMs: undefined,
  maxRetries: 0,
  resetTimeoutOnProgress: false,
  idempotency: 'optional',
  maxConcurrent: undefined,
  requiredScopes: Object.freeze([]),
  securityLevel: 'standard',
  results: undefined,
});

/** Asymmetric algorithms only: HS* must be listed explicitly, `none` never. */
export const DEFAULT_JWT_ALGORITHMS: readonly string[] = Object.freeze([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);

const validatePolicy = compileSchema(policySchema);
const EMPTY: readonly string[] = Object.freeze([]);

export interface ParseOptions {
  /** Relative file paths in `authentication` are resolved against this directory. */
  readonly baseDir?: string;
}

export function parsePolicy(text: string, options: ParseOptions = {}): PolicyResult {
  const parsed = parseYaml(text, MAX_POLICY_BYTES);
  if (!parsed.ok) return parsed;
  // An empty file is an empty policy: every tool denied, no verifier on.
  const doc = parsed.value === null || parsed.value === undefined ? {} : parsed.value;
  const checked = validateWith<RawPolicy>(validatePolicy, doc);
  if (!checked.ok) return checked;
  const semantic = checkSemantics(checked.value);
  if (semantic.length > 0) return { ok: false, errors: semantic };
  return { ok: true, policy: build(checked.value, text, options.baseDir) };
}

export async function loadPolicyFile(path: string): Promise<PolicyResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      errors: [
        { path: '', message: `read: cannot read the policy file${typeof code === 'string' ? ` (${code})` : ''}` },
      ],
    };
  }
  return parsePolicy(text, { baseDir: dirname(resolve(path)) });
}

/** Whether refusals for this tool are enforced or only recorded: the tool's own setting, else the policy's. */
/** A local file the policy names, which the verifiers are built from. */
export interface ReferencedFile {
  /** Where the policy names it: also what its problems are reported under. */
  readonly pointer: string;
  /** Resolved against the policy file's directory. */
  readonly path: string;
}

/** The key files the policy names (static keys, a JWKS file), all that a version is built from besides itself. */
export function referencedFiles(policy: Policy): ReferencedFile[] {
  const auth = policy.authentication;
  const out: ReferencedFile[] = [];
  if (auth.staticKeys !== undefined)
    out.push({ pointer: '/authentication/staticKeys/file', path: auth.staticKeys.file });
  if (auth.jwt?.jwksFile !== undefined) out.push({ pointer: '/authentication/jwt/jwksFile', path: auth.jwt.jwksFile });
  if (auth.kubernetes?.jwksFile !== undefined)
    out.push({ pointer: '/authentication/kubernetes/jwksFile', path: auth.kubernetes.jwksFile });
  return out;
}

export function enforcementFor(policy: Policy, tool: string | undefined): Enforcement {
  const own =
    tool !== undefined && Object.hasOwn(policy.tools, tool)
      ? (policy.tools[tool] as ToolMetadata).enforcement
      : undefined;
  return own ?? policy.enforcement;
}

/** Whether the result guard enforces for a tool: its `results.enforcement`, else the tool's, else the policy's. */
export function resultsEnforcement(policy: Policy, tool: string, guards: ResultGuards): Enforcement {
  return guards.enforcement ?? enforcementFor(policy, tool);
}

/** The metadata for a tool: its own entry, else the defaults with no aliases or examples. */
export function toolMetadata(policy: Policy, name: string): ToolMetadata {
  return Object.hasOwn(policy.tools, name) ? (policy.tools[name] as ToolMetadata) : policy.unlistedTool;
}

function build(raw: RawPolicy, text: string, baseDir: string | undefined): Policy {
  const defaults = resolveMetadata(raw.defaults ?? {}, BUILTIN_DEFAULTS);
  const tools: Record<string, ToolMetadata> = Object.create(null) as Record<string, ToolMetadata>;
  for (const [name, t] of Object.entries(raw.tools ?? {})) tools[name] = resolveTool(t, defaults);

  const seen = new Set<string>();
  const grants: GrantRow[] = [];
  for (const [i, g] of (raw.grants ?? []).entries()) {
    // Unnamed rows are named by where they are, so a decision can point at the line to read.
    const row = normalizeRow({ ...g, name: g.name ?? `/grants/${i}` });
    // The schema and semantic checks admit only rows normalizeRow accepts.
    if (row === undefined) continue;
    // The approval rule is part of what a row is: an allow row must never absorb the require_approval row beside it.
    const key = JSON.stringify([
      row.principal,
      row.tool,
      row.effect,
      row.scopes,
      row.revision ?? null,
      row.when ?? null,
      row.enforcement ?? null,
      row.approval ?? null,
    ]);
    if (seen.has(key)) continue;
    seen.add(key);
    grants.push(row);
  }

  return deepFreeze({
    version: 1,
    enforcement: raw.enforcement ?? 'enforce',
    authentication: resolveAuthentication(raw.authentication ?? {}, baseDir),
    defaults,
    unlistedTool: { ...defaults, aliases: EMPTY, examples: EMPTY },
    tools,
    grants,
    validators: resolveValidators(raw.validators ?? []),
    rateLimits: resolveRateLimits(raw.rateLimits ?? []),
    schemas: raw.schemas ?? {},
    contracts: resolveContracts(raw.contracts ?? {}),
    resources:
      raw.resources === undefined
        ? undefined
        : resolveSurface(raw.resources, 'resources', (g) => ({
            match: g.uri === undefined ? ('prefix' as const) : ('exact' as const),
            uri: g.uri ?? g.uriPrefix ?? '',
          })),
    prompts:
      raw.prompts === undefined ? undefined : resolveSurface(raw.prompts, 'prompts', (g) => ({ prompt: g.prompt })),
    sourceDigest: createHash('sha256').update(text).digest('hex'),
  });
}

/** A surface section in canonical form: scopes sorted and unique, unnamed rows named by their pointer, repeats combined. */
function resolveSurface<G extends RawSurfaceRow, T extends object>(
  raw: { enforcement?: Enforcement; grants: G[] },
  section: string,
  target: (g: G) => T,
): Surface<SurfaceRowOf<T>> {
  const seen = new Set<string>();
  const grants: SurfaceRowOf<T>[] = [];
  for (const [i, g] of raw.grants.entries()) {
    const row = {
      principal: g.principal,
      ...target(g),
      scopes: [...new Set(g.scopes ?? [])].sort(),
      effect: g.effect,
      ...(g.when !== undefined && { when: g.when }),
      ...(g.enforcement === 'audit' && { enforcement: 'audit' as const }),
      name: g.name ?? `/${section}/grants/${i}`,
    } as SurfaceRowOf<T>;
    const { name: _name, ...identity } = row;
    const key = JSON.stringify(identity);
    if (seen.has(key)) continue;
    seen.add(key);
    grants.push(row);
  }
  return { enforcement: raw.enforcement, grants };
}

type SurfaceRowOf<T> = T extends { prompt: string } ? PromptRow : ResourceRow;

function resolveValidators(raw: NonNullable<RawPolicy['validators']>): ValidatorConfig[] {
  return raw
    .map((v) => ({
      name: v.name,
      target: v.target,
      hooks: v.hooks.map((h) => ({ event: h.event, phase: h.phase })),
      priority: v.priority ?? 100,
      mode: v.mode ?? 'active',
      failOpen: v.failOpen ?? false,
      timeoutMs: v.timeoutMs ?? 1000,
    }))
    .sort((a, b) => a.priority - b.priority || (a.name < b.name ? -1 : 1));
}

function resolveContracts(raw: NonNullable<RawPolicy['contracts']>): ContractsConfig {
  const tools: Record<string, readonly string[]> = Object.create(null) as Record<string, readonly string[]>;
  for (const [name, digests] of Object.entries(raw.tools ?? {})) tools[name] = digests;
  return {
    mode: raw.mode ?? 'off',
    pin: raw.pin ?? 'explicit',
    unknownTools: raw.unknownTools ?? 'allow',
    lint: raw.lint ?? 'off',
    tools,
  };
}

const PERIOD_MS = { second: 1000, minute: 60_000, hour: 3_600_000 } as const;

function resolveRateLimits(raw: NonNullable<RawPolicy['rateLimits']>): RateLimitRule[] {
  const byKey = new Map<string, RateLimitRule>();
  for (const r of raw) {
    const burst = r.burst ?? r.requests;
    const key = JSON.stringify([r.principal, r.tool, r.requests, r.per, burst]);
    if (!byKey.has(key)) {
      byKey.set(key, {
        principal: r.principal,
        tool: r.tool,
        requests: r.requests,
        per: r.per,
        burst,
        msPerCall: PERIOD_MS[r.per] / r.requests,
        key,
      });
    }
  }
  return [...byKey.values()];
}

function resolveMetadata(m: RawMetadata, base: ToolDefaults): ToolDefaults {
  return {
    tier: m.tier ?? base.tier,
    alwaysInclude: m.alwaysInclude ?? base.alwaysInclude,
    sideEffect: m.sideEffect ?? base.sideEffect,
    timeoutMs: m.timeoutMs ?? base.timeoutMs,
    maxRetries: m.maxRetries ?? base.maxRetries,
    resetTimeoutOnProgress: m.resetTimeoutOnProgress ?? base.resetTimeoutOnProgress,
    idempotency: m.idempotency ?? base.idempotency,
    maxConcurrent: m.maxConcurrent ?? base.maxConcurrent,
    requiredScopes: m.requiredScopes === undefined ? base.requiredScopes : [...m.requiredScopes].sort(),
    securityLevel: m.securityLevel ?? base.securityLevel,
    results: m.results === undefined ? base.results : resolveResults(m.results, base.results),
  };
}

/** Field by field over the base; a section that asks for nothing is no section, so its tool keeps today's path. */
function resolveResults(r: RawResults, base: ResultGuards | undefined): ResultGuards | undefined {
  const guards: ResultGuards = {
    maxBytes: r.maxBytes ?? base?.maxBytes,
    redact: r.redact ?? base?.redact ?? EMPTY,
    injection: r.injection ?? base?.injection ?? 'off',
    enforcement: r.enforcement ?? base?.enforcement,
  };
  return guards.maxBytes === undefined && guards.redact.length === 0 && guards.injection === 'off' ? undefined : guards;
}

function resolveTool(t: RawTool, defaults: ToolDefaults): ToolMetadata {
  return {
    ...resolveMetadata(t, defaults),
    ...(t.enforcement !== undefined && { enforcement: t.enforcement }),
    aliases: t.aliases ?? EMPTY,
    examples: t.examples ?? EMPTY,
  };
}

function list(v: string | string[]): string[] {
  return typeof v === 'string' ? [v] : v;
}

function resolveAuthentication(
  a: NonNullable<RawPolicy['authentication']>,
  baseDir: string | undefined,
): AuthenticationConfig {
  const path = (p: string) => (baseDir === undefined || isAbsolute(p) ? p : resolve(baseDir, p));
  const jwt = a.jwt;
  const oneTime = jwt?.oneTime;
  const k8s = a.kubernetes;
  return {
    resourceMetadataUrl: a.resourceMetadataUrl,
    staticKeys:
      a.staticKeys === undefined
        ? undefined
        : { file: path(a.staticKeys.file), apiKeyHeader: a.staticKeys.apiKeyHeader ?? false },
    jwt:
      jwt === undefined
        ? undefined
        : {
            issuer: list(jwt.issuer),
            audience: list(jwt.audience),
            jwksFile: jwt.jwksFile === undefined ? undefined : path(jwt.jwksFile),
            jwksUrl: jwt.jwksUrl,
            algorithms: jwt.algorithms ?? DEFAULT_JWT_ALGORITHMS,
            clockSkewSeconds: jwt.clockSkewSeconds ?? 30,
            jwksTimeoutMs: jwt.jwksTimeoutMs ?? 5000,
            jwksCooldownMs: jwt.jwksCooldownMs ?? 30_000,
            jwksCacheMaxAgeMs: jwt.jwksCacheMaxAgeMs ?? 600_000,
            oneTime:
              oneTime === undefined
                ? undefined
                : {
                    issuers: oneTime.issuers ?? EMPTY,
                    claim: oneTime.claim,
                    maxLifetimeSeconds: oneTime.maxLifetimeSeconds ?? 3600,
                    maxEntries: oneTime.maxEntries ?? 100_000,
                  },
          },
    kubernetes:
      k8s === undefined
        ? undefined
        : {
            issuer: k8s.issuer,
            audience: list(k8s.audience),
            jwksFile: k8s.jwksFile === undefined ? undefined : path(k8s.jwksFile),
            apiServer: {
              url: k8s.apiServer?.url ?? IN_CLUSTER.url,
              caFile: path(k8s.apiServer?.caFile ?? IN_CLUSTER.caFile),
              tokenFile: path(k8s.apiServer?.tokenFile ?? IN_CLUSTER.tokenFile),
              timeoutMs: k8s.apiServer?.timeoutMs ?? 5000,
            },
            clockSkewSeconds: k8s.clockSkewSeconds ?? 30,
            jwksCooldownMs: k8s.jwksCooldownMs ?? 30_000,
            jwksCacheMaxAgeMs: k8s.jwksCacheMaxAgeMs ?? 600_000,
            tokenReview: {
              enabled: k8s.tokenReview?.enabled ?? false,
              cacheSeconds: k8s.tokenReview?.cacheSeconds ?? 10,
            },
          },
    anonymous: { enabled: a.anonymous?.enabled ?? false, scopes: a.anonymous?.scopes ?? EMPTY },
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
