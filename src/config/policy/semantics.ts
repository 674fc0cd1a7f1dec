/**
 * Policy rules that span fields, checked after the JSON Schema passed. Each
 * returns errors in the same pointer + rule form as schema errors.
 */
import {
  durationSeconds,
  isServiceAccountScope,
  MAX_APPROVAL_SECONDS,
  MIN_APPROVAL_SECONDS,
  WILDCARD,
} from './grant-row.ts';
import { compileCondition, type ConditionSurface } from './conditions.ts';
import { uriProblem } from '../../mcp/resource-uri.ts';
import { createSchemaRegistry } from '../../validation/registry.ts';
import type { ConfigError } from './validate.ts';
import { pointer } from './validate.ts';
import type { RawMetadata, RawPolicy, RawSurfaceRow } from './raw.ts';

const HMAC = /^HS/;

export function checkSemantics(raw: RawPolicy): ConfigError[] {
  const errors: ConfigError[] = [];
  const auth = raw.authentication;
  const jwt = auth?.jwt;
  if (auth?.resourceMetadataUrl !== undefined && !isHttpUrl(auth.resourceMetadataUrl)) {
    errors.push({
      path: pointer('authentication', 'resourceMetadataUrl'),
      message: 'url: must be an absolute http or https URL',
    });
  }
  if (jwt !== undefined) {
    const sources = (jwt.jwksFile === undefined ? 0 : 1) + (jwt.jwksUrl === undefined ? 0 : 1);
    if (sources !== 1) {
      errors.push({ path: pointer('authentication', 'jwt'), message: 'jwks: set exactly one of jwksFile or jwksUrl' });
    }
    if (jwt.jwksUrl !== undefined && !isHttpUrl(jwt.jwksUrl)) {
      errors.push({
        path: pointer('authentication', 'jwt', 'jwksUrl'),
        message: 'url: must be an absolute http or https URL',
      });
    }
    if (jwt.jwksUrl !== undefined && jwt.algorithms?.some((a) => HMAC.test(a))) {
      errors.push({
        path: pointer('authentication', 'jwt', 'algorithms'),
        message:
          'algorithms: HS* needs a shared secret and is allowed only with jwksFile, never with a published jwksUrl',
      });
    }
    const oneTime = jwt.oneTime;
    if (oneTime !== undefined && oneTime.issuers === undefined && oneTime.claim === undefined) {
      errors.push({
        path: pointer('authentication', 'jwt', 'oneTime'),
        message: 'oneTime: set issuers, claim, or both, to say which tokens are one-time',
      });
    }
  }

  const reservedAnonymous = auth?.anonymous?.scopes?.findIndex(isServiceAccountScope) ?? -1;
  if (reservedAnonymous >= 0) {
    errors.push({
      path: pointer('authentication', 'anonymous', 'scopes', reservedAnonymous),
      message: 'scope: system:serviceaccounts scopes belong to Kubernetes ServiceAccount tokens',
    });
  }
  const k8s = auth?.kubernetes;
  if (k8s !== undefined) {
    const audience = typeof k8s.audience === 'string' ? [k8s.audience] : k8s.audience;
    // The API server's default audience is its issuer: a token for it opens the API server, so it must never open toolgate too.
    if (
      audience.includes(k8s.issuer) ||
      audience.some((a) => /^(https:\/\/)?kubernetes\.default\.svc(\.cluster\.local)?\/?$/.test(a))
    ) {
      errors.push({
        path: pointer('authentication', 'kubernetes', 'audience'),
        message:
          "audience: name an audience of toolgate's own, never the API server's (its issuer or kubernetes.default.svc)",
      });
    }
  }

  raw.grants?.forEach((g, i) => {
    if (g.when !== undefined) {
      const c = compileCondition(g.when);
      if (!c.ok)
        errors.push({
          path: pointer('grants', i, 'when'),
          message: `condition: ${c.message} at line ${c.line}, column ${c.column}`,
        });
    }
    if ((g.effect === 'require_approval') !== (g.approval !== undefined)) {
      errors.push({
        path: pointer('grants', i, g.approval === undefined ? 'effect' : 'approval'),
        message:
          'approval: a require_approval row needs an approval object (approverScope at least), and only such a row takes one',
      });
    }
    if (g.approval?.expiresIn !== undefined && durationSeconds(g.approval.expiresIn) === undefined) {
      errors.push({
        path: pointer('grants', i, 'approval', 'expiresIn'),
        message: `expiresIn: must be ${MIN_APPROVAL_SECONDS} s to ${MAX_APPROVAL_SECONDS / 3600} h, as seconds or a number with s, m or h`,
      });
    }
    if (g.principal !== WILDCARD && g.scopes !== undefined && g.scopes.length > 0) {
      errors.push({
        path: pointer('grants', i, 'scopes'),
        message:
          'scopes: only principal "*" rows take scopes; a row naming a principal applies to it whatever it holds',
      });
    }
  });

  checkSurfaceRows(raw, errors);

  if (raw.schemas !== undefined) {
    const registry = createSchemaRegistry(raw.schemas);
    if (!registry.ok) {
      for (const e of registry.errors)
        errors.push({ path: pointer('schemas', e.uri), message: `schema: cannot be registered (${e.reason})` });
    }
  }

  const names = new Set<string>();
  raw.validators?.forEach((v, i) => {
    if (names.has(v.name))
      errors.push({ path: pointer('validators', i, 'name'), message: 'name: each validator needs its own name' });
    names.add(v.name);
  });

  const d = raw.defaults;
  const effective = (t: RawMetadata) => ({
    sideEffect: t.sideEffect ?? d?.sideEffect ?? 'non_idempotent_write',
    maxRetries: t.maxRetries ?? d?.maxRetries ?? 0,
    idempotency: t.idempotency ?? d?.idempotency ?? 'optional',
  });
  // A non_idempotent_write call is repeated only when it carries a key the
  // upstream can deduplicate, which `idempotency: required` guarantees.
  const check = (at: (field: string) => string, t: RawMetadata) => {
    const e = effective(t);
    if (e.sideEffect === 'non_idempotent_write' && e.maxRetries > 0 && e.idempotency !== 'required') {
      errors.push({
        path: at('maxRetries'),
        message:
          'maxRetries: must be 0 for a non_idempotent_write tool unless it has idempotency: required; retrying could repeat its effect',
      });
    }
    if (e.sideEffect !== 'non_idempotent_write' && e.idempotency === 'required') {
      errors.push({
        path: at('idempotency'),
        message:
          'idempotency: required applies to non_idempotent_write tools only; this tool may be repeated without a key',
      });
    }
  };
  if (d !== undefined) check((f) => pointer('defaults', f), d);
  for (const [name, t] of Object.entries(raw.tools ?? {})) {
    // A tool that sets none of these fields is the defaults, checked once above.
    if (t.sideEffect !== undefined || t.maxRetries !== undefined || t.idempotency !== undefined)
      check((f) => pointer('tools', name, f), t);
  }
  return errors;
}

/** Resource and prompt rows: conditions over their own surface's variables, URIs in normal form, scopes only on `*` rows. */
function checkSurfaceRows(raw: RawPolicy, errors: ConfigError[]): void {
  const rows = (
    section: 'resources' | 'prompts',
    surface: ConditionSurface,
    list: readonly RawSurfaceRow[] | undefined,
  ) =>
    list?.forEach((g, i) => {
      if (g.when !== undefined) {
        const c = compileCondition(g.when, surface);
        if (!c.ok)
          errors.push({
            path: pointer(section, 'grants', i, 'when'),
            message: `condition: ${c.message} at line ${c.line}, column ${c.column}`,
          });
      }
      if (g.principal !== WILDCARD && g.scopes !== undefined && g.scopes.length > 0) {
        errors.push({
          path: pointer(section, 'grants', i, 'scopes'),
          message:
            'scopes: only principal "*" rows take scopes; a row naming a principal applies to it whatever it holds',
        });
      }
    });
  rows('resources', 'resource', raw.resources?.grants);
  rows('prompts', 'prompt', raw.prompts?.grants);
  raw.resources?.grants.forEach((g, i) => {
    if ((g.uri === undefined) === (g.uriPrefix === undefined)) {
      errors.push({
        path: pointer('resources', 'grants', i),
        message: 'uri: set exactly one of uri (one resource) and uriPrefix (the resources under it)',
      });
      return;
    }
    const field = g.uri === undefined ? 'uriPrefix' : 'uri';
    const problem = uriProblem(g.uri ?? g.uriPrefix ?? '');
    if (problem !== undefined)
      errors.push({
        path: pointer('resources', 'grants', i, field),
        message: `uri: ${problem} (see the resource URI rules in docs/policy.md)`,
      });
  });
}

function isHttpUrl(raw: string): boolean {
  if (!URL.canParse(raw)) return false;
  const u = new URL(raw);
  return (u.protocol === 'https:' || u.protocol === 'http:') && u.username === '' && u.password === '';
}
