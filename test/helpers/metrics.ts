import { request } from 'undici';

/** toolgate's /metrics exposition, as text. */
export async function metricsText(adminUrl: string): Promise<string> {
  return (await request(`${adminUrl}/metrics`)).body.text();
}

/** One sample's value from an exposition (0 when the series is absent), `labels` written as in the text: `method="tools/call",outcome="aborted"`. */
export function sample(text: string, name: string, labels = ''): number {
  const series = labels === '' ? name : `${name}{${labels}}`;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}
