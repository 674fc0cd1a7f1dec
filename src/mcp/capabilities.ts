import { isRecord } from '../json/record.ts';

/** Where a 2026-07-28 request carries the client's capabilities, per request (there is no session). */
const CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';

/**
 * Whether client capabilities declare URL-mode elicitation. An empty
 * `elicitation: {}` means form mode only (2025-11-25 kept it for older
 * clients), so only an `elicitation.url` object counts.
 */
export function declaresUrlElicitation(capabilities: unknown): boolean {
  const elicitation = isRecord(capabilities) ? capabilities.elicitation : undefined;
  return isRecord(elicitation) && isRecord(elicitation.url);
}

/** The capabilities a 2026-07-28 request declares in its `_meta`. */
export function requestCapabilities(params: Readonly<Record<string, unknown>> | undefined): unknown {
  const meta = params?._meta;
  return isRecord(meta) ? meta[CAPABILITIES_META] : undefined;
}

/** The capabilities an `initialize` request declares for its session (2025 revisions). */
export function initializeCapabilities(params: Readonly<Record<string, unknown>> | undefined): unknown {
  return params?.capabilities;
}
