import { createWriteStream, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import type { SideEffect } from '../config/policy/raw.ts';
import type { Settings } from '../config/settings.ts';
import { StartupError } from '../errors.ts';
import { startAudit, type Audit } from './audit.ts';
import { createAuditSink, type AuditSink } from './audit-sink.ts';
import { log } from './log.ts';
import { startOtelSdk, tracingRequested, type OtelSdk } from './otel-sdk.ts';
import type { Tracing } from './tracing.ts';

/**
 * Tracing and audit, each on only when configured: when off, nothing
 * subscribes to the request channels, so the request path does no work for
 * them (metrics are separate, see metrics.ts).
 */

/** Read at run time: src/ and dist/ both sit two levels below package.json. */
const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

export interface TelemetryHooks {
  /** The tool's side effect from the policy in force; audit treats undefined as not read-only. */
  readonly sideEffect?: (tool: string) => SideEffect | undefined;
}

export interface Telemetry {
  readonly tracing: boolean;
  readonly audit: boolean;
  /** Stops listening, writes queued audit events, flushes spans. */
  close(): Promise<void>;
}

export async function startTelemetry(
  settings: Pick<Settings, 'auditLog' | 'auditQueueEvents' | 'mcpPath' | 'upstream'>,
  hooks: TelemetryHooks = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<Telemetry> {
  const sink =
    settings.auditLog === undefined ? undefined : openAuditSink(settings.auditLog, settings.auditQueueEvents);
  let sdk: OtelSdk | undefined;
  let tracing: Tracing | undefined;
  if (tracingRequested(env)) {
    sdk = await startOtelSdk(env, VERSION);
    const { subscribeTracing } = await import('./tracing.ts');
    tracing = subscribeTracing({ tracer: sdk.tracer, upstream: settings.upstream, mcpPath: settings.mcpPath });
    log.info('tracing on', { exporter: env.OTEL_TRACES_EXPORTER || 'otlp' });
  }
  let audit: Audit | undefined;
  if (sink !== undefined) {
    audit = startAudit({
      sink,
      upstream: settings.upstream,
      pod: hostname(),
      version: VERSION,
      ...(hooks.sideEffect !== undefined && { sideEffect: hooks.sideEffect }),
      ...(tracing !== undefined && { traceIdOf: tracing.traceIdOf }),
    });
  }
  let closing: Promise<void> | undefined;
  return {
    tracing: tracing !== undefined,
    audit: audit !== undefined,
    close() {
      closing ??= (async () => {
        tracing?.dispose();
        audit?.dispose();
        await Promise.all([sink?.close(), sdk?.shutdown().catch(() => log.warn('trace export on shutdown failed'))]);
      })();
      return closing;
    },
  };
}

function openAuditSink(target: string, maxQueued: number): AuditSink {
  if (target === 'stdout') return createAuditSink(process.stdout, maxQueued, false);
  let fd: number;
  try {
    fd = openSync(target, 'a');
  } catch {
    throw new StartupError(`TOOLGATE_AUDIT_LOG: cannot open ${target} for appending`);
  }
  return createAuditSink(createWriteStream('', { fd }), maxQueued, true);
}
