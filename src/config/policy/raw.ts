/**
 * The policy document exactly as the schema admits it: optional fields still
 * optional, before defaults are applied.
 */
import type { Enforcement } from './grant-row.ts';

export type Tier = 'critical' | 'base' | 'onDemand';
export type SideEffect = 'read_only' | 'idempotent_write' | 'non_idempotent_write';
/** `required`: a non_idempotent_write call without an idempotency key is refused. */
export type Idempotency = 'optional' | 'required';
export type SecurityLevel = 'standard' | 'elevated' | 'strict';
export type ContractMode = 'off' | 'alert' | 'enforce';
export type PinMode = 'explicit' | 'first-seen';

/** What the result guard does with a tool's results (docs/result-guard.md). */
export type InjectionMode = 'off' | 'mark' | 'block';

export interface RawResults {
  maxBytes?: number;
  redact?: string[];
  injection?: InjectionMode;
  enforcement?: Enforcement;
}

export interface RawMetadata {
  tier?: Tier;
  alwaysInclude?: boolean;
  sideEffect?: SideEffect;
  timeoutMs?: number;
  maxRetries?: number;
  resetTimeoutOnProgress?: boolean;
  idempotency?: Idempotency;
  maxConcurrent?: number;
  requiredScopes?: string[];
  securityLevel?: SecurityLevel;
  results?: RawResults;
}

export interface RawTool extends RawMetadata {
  enforcement?: Enforcement;
  aliases?: string[];
  examples?: string[];
}

/** A resource or prompt grant row as written. */
export interface RawSurfaceRow {
  principal: string;
  scopes?: string[];
  effect: 'allow' | 'deny';
  when?: string;
  enforcement?: Enforcement;
  name?: string;
}

export interface RawPolicy {
  version?: 1;
  enforcement?: Enforcement;
  authentication?: {
    resourceMetadataUrl?: string;
    staticKeys?: { file: string; apiKeyHeader?: boolean };
    jwt?: {
      issuer: string | string[];
      audience: string | string[];
      jwksFile?: string;
      jwksUrl?: string;
      algorithms?: string[];
      clockSkewSeconds?: number;
      jwksTimeoutMs?: number;
      jwksCooldownMs?: number;
      jwksCacheMaxAgeMs?: number;
      oneTime?: { issuers?: string[]; claim?: string; maxLifetimeSeconds?: number; maxEntries?: number };
    };
    kubernetes?: {
      issuer: string;
      audience: string | string[];
      jwksFile?: string;
      apiServer?: { url?: string; caFile?: string; tokenFile?: string; timeoutMs?: number };
      clockSkewSeconds?: number;
      jwksCooldownMs?: number;
      jwksCacheMaxAgeMs?: number;
      tokenReview?: { enabled: boolean; cacheSeconds?: number };
    };
    anonymous?: { enabled: boolean; scopes?: string[] };
  };
  defaults?: RawMetadata;
  tools?: Record<string, RawTool>;
  schemas?: Record<string, unknown>;
  validators?: {
    name: string;
    target: string;
    hooks: { event: 'tools/call'; phase: 'request' }[];
    priority?: number;
    mode?: 'active' | 'audit';
    failOpen?: boolean;
    timeoutMs?: number;
  }[];
  rateLimits?: {
    principal: string;
    tool: string;
    requests: number;
    per: 'second' | 'minute' | 'hour';
    burst?: number;
  }[];
  grants?: {
    principal: string;
    tool: string;
    scopes?: string[];
    effect: 'allow' | 'deny' | 'require_approval';
    approval?: { approverScope: string; expiresIn?: string | number; selfApproval?: boolean };
    revision?: number;
    when?: string;
    enforcement?: Enforcement;
    name?: string;
  }[];
  /** Present: resources are policed, and a URI no row allows is refused. */
  resources?: { enforcement?: Enforcement; grants: (RawSurfaceRow & { uri?: string; uriPrefix?: string })[] };
  /** Present: prompts are policed, and a prompt no row allows is refused. */
  prompts?: { enforcement?: Enforcement; grants: (RawSurfaceRow & { prompt: string })[] };
  contracts?: {
    mode?: ContractMode;
    pin?: PinMode;
    unknownTools?: 'allow' | 'quarantine';
    lint?: ContractMode;
    tools?: Record<string, string[]>;
  };
}
