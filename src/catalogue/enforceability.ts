import { catalogueState } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import type { SchemaCache } from '../validation/cache.ts';
import type { Catalogue } from './catalogue.ts';

/**
 * Compiles every schema as soon as a catalogue arrives (warming the cache
 * the calls use) and names, in one log line, the tools whose calls will be
 * refused because their schema cannot be enforced.
 */
export function reportEnforceability(c: Catalogue, schemas: SchemaCache): void {
  const refused: string[] = [];
  for (const t of c.tools.values()) {
    const compiled = schemas.get(t.digest, t.tool.inputSchema);
    if (!compiled.ok) refused.push(`${t.name}:${compiled.reason}`);
  }
  if (refused.length > 0) log.warn('tools with unenforceable input schemas; their calls are refused', { count: refused.length, tools: refused.join(',') });
  if (catalogueState.hasSubscribers) catalogueState.publish({ tools: c.tools.size, unenforceable: refused.length });
}
