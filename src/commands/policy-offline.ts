/**
 * What the offline `toolgate policy` commands decide with: the policy loaded
 * exactly as a running toolgate loads it (schema, semantics, conditions,
 * referenced key and JWKS files), its grant rows in an in-process store, a
 * catalogue read from a file, and toolgate's own checks run as the gRPC
 * Explain runs them. No server, no network: external validators are not
 * asked.
 */
import type { CredentialStrength, Principal } from '../auth/types.ts';
import { buildCatalogue } from '../catalogue/catalogue.ts';
import type { PolicyInForce } from '../auth/policy-in-force.ts';
import { loadPolicyFile, type ConfigError } from '../config/policy/policy.ts';
import { policyLoader } from '../reload/policy-loader.ts';
import { createFileGrantStore } from '../grants/file-store.ts';
import type { DecisionDeps } from '../grpc/deps.ts';
import { explainFor, parseArguments } from '../grpc/explain.ts';
import type { ExplainResponse } from '../grpc/generated/toolgate/v1/ExplainResponse.ts';
import type { CatalogueEntry, CatalogueView } from '../catalogue/view.ts';
import { policyChecks } from '../pipeline/policy-interceptors.ts';
import { schemaCaches } from '../validation/schema-caches.ts';
import { readCatalogFile } from './catalog-file.ts';

export const STRENGTHS: readonly CredentialStrength[] = ['anonymous', 'static', 'short_lived', 'one_time'];

export type Loaded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: readonly ConfigError[] };

/**
 * Every check the policy watcher makes before it puts a version in force.
 * Without `files`, the key and JWKS files the policy names are not read:
 * they come from Secrets a CI job does not have, and deciding for a given
 * principal never needs a verifier (policy-files.ts says so to the user).
 */
export async function loadPolicyInForce(path: string, files: boolean): Promise<Loaded<PolicyInForce>> {
  if (!files) {
    const p = await loadPolicyFile(path);
    return p.ok ? { ok: true, value: Object.freeze({ policy: p.policy, verifiers: [] }) } : p;
  }
  const r = await policyLoader()(path, 0);
  return r.ok ? { ok: true, value: r.value } : { ok: false, errors: r.errors };
}

/** A `--catalog` file (see catalog-file.ts), its problem as a finding. */
export async function loadCatalogue(path: string): Promise<Loaded<readonly unknown[]>> {
  const read = await readCatalogFile(path);
  return read.ok
    ? { ok: true, value: read.tools }
    : { ok: false, errors: [{ path: '', message: `catalogue: ${read.problem}` }] };
}

/**
 * The dependencies Explain reads, offline. Without a catalogue every tool is
 * taken to accept any object of arguments (`{"type":"object"}`), so only
 * grants, conditions, security levels and rate limits decide.
 */
export function offlineDeps(inForce: PolicyInForce, tools: readonly unknown[] | undefined): DecisionDeps {
  const { catalogue } = buildCatalogue(tools ?? [], Date.now());
  const permissive = new Map<string, CatalogueEntry>();
  const get = (name: string): CatalogueEntry | undefined => {
    const known = catalogue.tools.get(name);
    if (known !== undefined || tools !== undefined) return known;
    let entry = permissive.get(name);
    if (entry === undefined) {
      const built = buildCatalogue([{ name, inputSchema: { type: 'object' } }], 0).catalogue.tools.get(name);
      if (built === undefined) return undefined;
      entry = built;
      permissive.set(name, entry);
    }
    return entry;
  };
  const view: CatalogueView = {
    current: () => catalogue,
    get,
    names: () => catalogue.tools.keys(),
    refresh: () => Promise.resolve(),
  };
  return {
    current: () => inForce,
    grants: createFileGrantStore({ rows: inForce.policy.grants, revision: 1 }),
    catalogue: view,
    interceptors: policyChecks(schemaCaches()).checks,
  };
}

export interface Subject {
  readonly id: string;
  readonly scopes: readonly string[];
  readonly strength: CredentialStrength;
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** What one offline decision is about: a tool call, a resource read, or a prompt get. */
export type Target = { readonly tool: string } | { readonly resource: string } | { readonly prompt: string };

/** The MCP method a target stands for, and the name it carries. */
function requestOf(target: Target): { readonly method: string; readonly name: string } {
  if ('resource' in target) return { method: 'resources/read', name: target.resource };
  if ('prompt' in target) return { method: 'prompts/get', name: target.prompt };
  return { method: 'tools/call', name: target.tool };
}

/**
 * The decision for one tools/call, resources/read or prompts/get, with the
 * same code the proxy and the gRPC Explain use. The arguments (a tool's or a
 * prompt's) come as JSON text (a JSON object), read as the proxy reads a
 * body: integers a double cannot hold keep their digits.
 */
export function decideOffline(
  deps: DecisionDeps,
  subject: Subject,
  target: Target,
  argumentsJson: string,
): Promise<ExplainResponse> {
  const args = parseArguments(argumentsJson);
  if (args === undefined) throw new TypeError('decideOffline takes the arguments as the JSON text of an object');
  const principal: Principal = {
    id: subject.id,
    scopes: new Set(subject.scopes),
    credentialStrength: subject.strength,
    ...(subject.claims !== undefined && { claims: subject.claims }),
  };
  const { method, name } = requestOf(target);
  return explainFor(deps, principal, method, name, args, argumentsJson);
}
