/**
 * Offline injection for manifests rendered in CI (GitOps): every Pod, and the
 * pod template of every workload, goes through the same plan the webhook
 * uses, and its patch is applied with a JSON Patch library as the API server
 * would apply it. One refusal fails the whole stream, so CI cannot ship an
 * opted-in workload without toolgate. Documents that are not pods or
 * workloads pass through unchanged, comments included.
 */
import jsonpatch from 'fast-json-patch';
import { Document, parseAllDocuments } from 'yaml';
import { isRecord } from '../json/record.ts';
import type { InjectorConfig } from './config.ts';
import { planInjection } from './inject.ts';

/** Where each workload kind keeps its pod template (metadata + spec). */
const TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  PodTemplate: ['template'],
};

export type ManifestResult =
  | { readonly ok: true; readonly text: string; readonly injected: number }
  | { readonly ok: false; readonly errors: readonly string[] };

interface Outcome {
  injected: number;
  readonly errors: string[];
}

export function injectManifests(text: string, config: InjectorConfig): ManifestResult {
  const docs = parseAllDocuments(text);
  const outcome: Outcome = { injected: 0, errors: [] };
  const out: string[] = [];
  let start = 0;
  for (const [i, doc] of docs.entries()) {
    if (doc.errors.length > 0) return { ok: false, errors: [`document ${i + 1} is not valid YAML`] };
    // The document's own source text, so untouched documents come out byte for byte.
    const source = text.slice(start, doc.range[2]).replace(/^---[ \t]*\n/, '');
    start = doc.range[2];
    const object: unknown = doc.toJS();
    const before = outcome.injected;
    visit(object, config, outcome);
    const rendered = outcome.injected > before ? String(new Document(object)) : source;
    out.push(rendered.endsWith('\n') ? rendered : `${rendered}\n`);
  }
  if (outcome.errors.length > 0) return { ok: false, errors: outcome.errors };
  return { ok: true, text: out.join('---\n'), injected: outcome.injected };
}

/** Injects the object in place when it is a Pod, a workload or a List of them. */
function visit(object: unknown, config: InjectorConfig, outcome: Outcome): void {
  if (!isRecord(object) || typeof object.kind !== 'string') return;
  if (object.kind === 'List' && Array.isArray(object.items)) {
    for (const item of object.items) visit(item, config, outcome);
    return;
  }
  const name = `${object.kind}/${isRecord(object.metadata) && typeof object.metadata.name === 'string' ? object.metadata.name : '(unnamed)'}`;
  if (object.kind === 'Pod') {
    inject(object, '', name, config, outcome);
    return;
  }
  const path = TEMPLATES[object.kind];
  if (path === undefined) return;
  const template = path.reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), object);
  if (isRecord(template)) inject(template, `${path.join('.')}.`, name, config, outcome);
}

function inject(
  pod: Record<string, unknown>,
  prefix: string,
  name: string,
  config: InjectorConfig,
  outcome: Outcome,
): void {
  const plan = planInjection(pod, config);
  if (plan.kind === 'skip') return;
  if (plan.kind === 'deny') {
    outcome.errors.push(`${name}: ${prefix}${plan.field}: ${plan.message}`);
    return;
  }
  jsonpatch.applyPatch(pod, structuredClone(plan.patch) as jsonpatch.Operation[], true, true);
  outcome.injected++;
}
