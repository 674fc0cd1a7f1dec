import { request } from 'undici';
import { parsePrometheusText, sampleValue } from '../unit/telemetry/prom-text.ts';

/** One sample of toolgate's /metrics, read with the strict text-format parser; 0 while the series does not exist yet. */
export async function metricValue(
  adminUrl: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await request(`${adminUrl}/metrics`)).body.text();
  return sampleValue(parsePrometheusText(text), name, labels) ?? 0;
}
