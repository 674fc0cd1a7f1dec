import type { IncomingMessage } from 'node:http';

const dryRuns = new WeakSet<IncomingMessage>();

/**
 * A stand-in for the inbound request of a dry run (PolicyService.Explain):
 * no headers. Interceptors that keep state or call out (rate limits,
 * external validators) see that nothing will be forwarded.
 */
export function dryRunRequest(): IncomingMessage {
  // oxlint-disable-next-line no-unsafe-class-instance-assignment -- a stand-in no socket backs: interceptors read its headers, and isDryRun knows it
  const request = { headers: {} } as IncomingMessage;
  dryRuns.add(request);
  return request;
}

export function isDryRun(request: IncomingMessage): boolean {
  return dryRuns.has(request);
}
