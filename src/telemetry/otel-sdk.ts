import { trace, type Tracer } from '@opentelemetry/api';

/**
 * The OpenTelemetry SDK, configured by the standard OTEL_* variables. Tracing
 * is off unless asked for (OTEL_TRACES_EXPORTER naming an exporter other
 * than `none`, or an OTLP endpoint), and OTEL_SDK_DISABLED=true always wins;
 * when off the SDK is not even loaded. Only traces are set up: metrics are
 * Prometheus (prom-client), logs are JSON lines.
 */

export interface OtelSdk {
  readonly tracer: Tracer;
  shutdown(): Promise<void>;
}

export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (exporters.length > 0) return !exporters.includes('none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

export async function startOtelSdk(env: NodeJS.ProcessEnv, version: string): Promise<OtelSdk> {
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const named =
    Boolean(env.OTEL_SERVICE_NAME?.trim()) || /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  const sdk = new NodeSDK({
    ...(!named && { serviceName: 'toolgate' }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return { tracer: trace.getTracer('toolgate', version), shutdown: () => sdk.shutdown() };
}
