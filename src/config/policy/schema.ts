/**
 * The JSON Schema of the policy file. Every object is closed
 * (`additionalProperties: false`) so a misspelt key fails loading instead of
 * silently meaning nothing. Rules a schema cannot say (cross-field checks)
 * live in `policy/semantics.ts`. Exported as data so the Helm chart and editors
 * can use the same schema.
 */
import {
  DURATION_PATTERN,
  MAX_ROW_SCOPES,
  PRINCIPAL_PATTERN,
  ROW_NAME_PATTERN,
  SCOPE_PATTERN,
  TOOL_PATTERN,
} from './grant-row.ts';
import { MAX_CONDITION_LENGTH } from './conditions.ts';
import { MAX_URI_LENGTH } from '../../mcp/resource-uri.ts';
import { DETECTOR_IDS } from '../../detectors/detectors.ts';

const TIERS = ['critical', 'base', 'onDemand'] as const;
const SIDE_EFFECTS = ['read_only', 'idempotent_write', 'non_idempotent_write'] as const;
const SECURITY_LEVELS = ['standard', 'elevated', 'strict'] as const;
/** `none` is never accepted; HS* only when listed explicitly. */
const VALIDATOR_MODES = ['active', 'audit'] as const;
/** Hooks toolgate can run an external validator at: the interceptor chain sees tools/call before it is forwarded. */
const VALIDATOR_EVENTS = ['tools/call'] as const;
const VALIDATOR_PHASES = ['request'] as const;
const MAX_VALIDATORS = 16;
/** `audit`: refusals are recorded and the call forwarded (shadow mode); see the README's shadow-mode section. */
const ENFORCEMENT_MODES = ['enforce', 'audit'] as const;
const RATE_PERIODS = ['second', 'minute', 'hour'] as const;
const MAX_RATE_LIMITS = 1000;
const MAX_RATE = 1_000_000;
const MAX_VALIDATOR_TIMEOUT_MS = 30_000;
const CONTRACT_MODES = ['off', 'alert', 'enforce'] as const;
const PIN_MODES = ['explicit', 'first-seen'] as const;
/** A contract digest as toolgate prints it: SHA-256, lower-case hex. */
const DIGEST_PATTERN = '^[0-9a-f]{64}$';
const JWT_ALGORITHMS = [
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
  'HS256',
  'HS384',
  'HS512',
] as const;

const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$';
const scope = { type: 'string', pattern: SCOPE_PATTERN };
const scopes = { type: 'array', items: scope, maxItems: MAX_ROW_SCOPES, uniqueItems: true };

/** A `resources` or `prompts` section: its own shadow mode and grant rows naming what they grant by `target` fields (a resource row takes one of uri and uriPrefix: policy/semantics.ts). */
function surfaceSection(target: Record<string, unknown>, required: readonly string[]) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['grants'],
    properties: {
      enforcement: { enum: ENFORCEMENT_MODES },
      grants: {
        type: 'array',
        maxItems: 20_000,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['principal', 'effect', ...required],
          properties: {
            principal: { type: 'string', pattern: PRINCIPAL_PATTERN },
            ...target,
            scopes,
            effect: { enum: ['allow', 'deny'] },
            when: { type: 'string', minLength: 1, maxLength: MAX_CONDITION_LENGTH },
            enforcement: { enum: ENFORCEMENT_MODES },
            name: { type: 'string', pattern: ROW_NAME_PATTERN },
          },
        },
      },
    },
  } as const;
}
const filePath = { type: 'string', minLength: 1, maxLength: 4096, pattern: NO_CONTROL };
const url = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://[^\\s"\\\\\\u0000-\\u001f\\u007f]+$' };
/** Clock skew and JWKS caching, alike for the `jwt` and `kubernetes` verifiers. */
const tokenTiming = {
  clockSkewSeconds: { type: 'integer', minimum: 0, maximum: 300 },
  jwksCooldownMs: { type: 'integer', minimum: 0, maximum: 3_600_000 },
  jwksCacheMaxAgeMs: { type: 'integer', minimum: 1000, maximum: 86_400_000 },
} as const;
const timeoutMs = { type: 'integer', minimum: 100, maximum: 60_000 } as const;
const oneOrMany = {
  type: ['string', 'array'],
  minLength: 1,
  maxLength: 2048,
  pattern: NO_CONTROL,
  minItems: 1,
  maxItems: 16,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 2048, pattern: NO_CONTROL },
};

/** The largest result the guard reads whole; see docs/result-guard.md. */
export const MAX_GUARDED_RESULT_BYTES = 16 * 1024 * 1024;

const results = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxBytes: { type: 'integer', minimum: 1, maximum: MAX_GUARDED_RESULT_BYTES },
    redact: { type: 'array', uniqueItems: true, maxItems: DETECTOR_IDS.length, items: { enum: DETECTOR_IDS } },
    injection: { enum: ['off', 'mark', 'block'] },
    enforcement: { enum: ENFORCEMENT_MODES },
  },
};

const metadataFields = {
  tier: { enum: TIERS },
  alwaysInclude: { type: 'boolean' },
  sideEffect: { enum: SIDE_EFFECTS },
  timeoutMs: { type: 'integer', minimum: 1, maximum: 3_600_000 },
  maxRetries: { type: 'integer', minimum: 0, maximum: 10 },
  resetTimeoutOnProgress: { type: 'boolean' },
  idempotency: { enum: ['optional', 'required'] },
  maxConcurrent: { type: 'integer', minimum: 1, maximum: 100_000 },
  requiredScopes: scopes,
  securityLevel: { enum: SECURITY_LEVELS },
  results,
};

const phrase = { type: 'string', minLength: 1, maxLength: 500, pattern: NO_CONTROL };

export const policySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: { const: 1 },
    enforcement: { enum: ENFORCEMENT_MODES },
    authentication: {
      type: 'object',
      additionalProperties: false,
      properties: {
        resourceMetadataUrl: url,
        staticKeys: {
          type: 'object',
          additionalProperties: false,
          required: ['file'],
          properties: {
            file: filePath,
            apiKeyHeader: { type: 'boolean' },
          },
        },
        jwt: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'audience'],
          properties: {
            issuer: oneOrMany,
            audience: oneOrMany,
            jwksFile: filePath,
            jwksUrl: url,
            algorithms: { type: 'array', items: { enum: JWT_ALGORITHMS }, minItems: 1, uniqueItems: true },
            ...tokenTiming,
            jwksTimeoutMs: timeoutMs,
            oneTime: {
              type: 'object',
              additionalProperties: false,
              properties: {
                issuers: { type: 'array', minItems: 1, maxItems: 16, uniqueItems: true, items: oneOrMany.items },
                claim: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,64}$' },
                maxLifetimeSeconds: { type: 'integer', minimum: 1, maximum: 86_400 },
                maxEntries: { type: 'integer', minimum: 1, maximum: 10_000_000 },
              },
            },
          },
        },
        kubernetes: {
          type: 'object',
          additionalProperties: false,
          required: ['issuer', 'audience'],
          properties: {
            issuer: { type: 'string', minLength: 1, maxLength: 2048, pattern: NO_CONTROL },
            audience: oneOrMany,
            jwksFile: filePath,
            apiServer: {
              type: 'object',
              additionalProperties: false,
              properties: {
                url: { ...url, pattern: url.pattern.replace('https?', 'https') },
                caFile: filePath,
                tokenFile: filePath,
                timeoutMs,
              },
            },
            ...tokenTiming,
            tokenReview: {
              type: 'object',
              additionalProperties: false,
              required: ['enabled'],
              properties: {
                enabled: { type: 'boolean' },
                cacheSeconds: { type: 'integer', minimum: 0, maximum: 300 },
              },
            },
          },
        },
        anonymous: {
          type: 'object',
          additionalProperties: false,
          required: ['enabled'],
          properties: {
            enabled: { type: 'boolean' },
            scopes,
          },
        },
      },
    },
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: metadataFields,
    },
    tools: {
      type: 'object',
      maxProperties: 20_000,
      propertyNames: { pattern: TOOL_PATTERN, not: { const: '*' } },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...metadataFields,
          enforcement: { enum: ENFORCEMENT_MODES },
          aliases: {
            type: 'array',
            maxItems: 32,
            uniqueItems: true,
            items: { type: 'string', minLength: 1, maxLength: 128, pattern: NO_CONTROL },
          },
          examples: { type: 'array', maxItems: 32, items: phrase },
        },
      },
    },
    // Shared JSON Schemas a tool's inputSchema may $ref by URI: operators
    // register them here because toolgate never fetches a schema.
    schemas: {
      type: 'object',
      maxProperties: 256,
      propertyNames: { type: 'string', minLength: 1, maxLength: 2048 },
      additionalProperties: { type: ['object', 'boolean'] },
    },
    validators: {
      type: 'array',
      maxItems: MAX_VALIDATORS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'target', 'hooks'],
        properties: {
          name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$' },
          // A gRPC target: host:port, dns:///host:port or unix:/path.
          target: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[^\\s\\u0000-\\u001f\\u007f]+$' },
          hooks: {
            type: 'array',
            minItems: 1,
            maxItems: 8,
            uniqueItems: true,
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['event', 'phase'],
              properties: { event: { enum: VALIDATOR_EVENTS }, phase: { enum: VALIDATOR_PHASES } },
            },
          },
          priority: { type: 'integer', minimum: 0, maximum: 1000 },
          mode: { enum: VALIDATOR_MODES },
          failOpen: { type: 'boolean' },
          timeoutMs: { type: 'integer', minimum: 1, maximum: MAX_VALIDATOR_TIMEOUT_MS },
        },
      },
    },
    rateLimits: {
      type: 'array',
      maxItems: MAX_RATE_LIMITS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['principal', 'tool', 'requests', 'per'],
        properties: {
          principal: { type: 'string', pattern: PRINCIPAL_PATTERN },
          tool: { type: 'string', pattern: TOOL_PATTERN },
          requests: { type: 'integer', minimum: 1, maximum: MAX_RATE },
          per: { enum: RATE_PERIODS },
          burst: { type: 'integer', minimum: 1, maximum: MAX_RATE },
        },
      },
    },
    // Tool contract pinning (docs/contracts.md): approved digests per tool, and what drift does.
    contracts: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { enum: CONTRACT_MODES },
        pin: { enum: PIN_MODES },
        unknownTools: { enum: ['allow', 'quarantine'] },
        lint: { enum: CONTRACT_MODES },
        tools: {
          type: 'object',
          maxProperties: 20_000,
          propertyNames: { pattern: TOOL_PATTERN, not: { const: '*' } },
          additionalProperties: {
            type: 'array',
            minItems: 1,
            maxItems: 16,
            uniqueItems: true,
            items: { type: 'string', pattern: DIGEST_PATTERN },
          },
        },
      },
    },
    resources: surfaceSection(
      {
        uri: { type: 'string', minLength: 1, maxLength: MAX_URI_LENGTH },
        uriPrefix: { type: 'string', minLength: 1, maxLength: MAX_URI_LENGTH },
      },
      [],
    ),
    prompts: surfaceSection({ prompt: { type: 'string', pattern: TOOL_PATTERN, not: { const: '*' } } }, ['prompt']),
    grants: {
      type: 'array',
      maxItems: 200_000,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['principal', 'tool', 'effect'],
        properties: {
          principal: { type: 'string', pattern: PRINCIPAL_PATTERN },
          tool: { type: 'string', pattern: TOOL_PATTERN, not: { const: '*' } },
          scopes,
          effect: { enum: ['allow', 'deny', 'require_approval'] },
          // With effect require_approval only (policy/semantics.ts): who approves, for how long, and whether callers may approve their own calls.
          approval: {
            type: 'object',
            additionalProperties: false,
            required: ['approverScope'],
            properties: {
              approverScope: scope,
              expiresIn: { type: ['string', 'integer'], pattern: DURATION_PATTERN, minimum: 10, maximum: 86_400 },
              selfApproval: { type: 'boolean' },
            },
          },
          revision: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          when: { type: 'string', minLength: 1, maxLength: MAX_CONDITION_LENGTH },
          enforcement: { enum: ENFORCEMENT_MODES },
          name: { type: 'string', pattern: ROW_NAME_PATTERN },
        },
      },
    },
  },
} as const;
