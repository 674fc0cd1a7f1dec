import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { catalogueState } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import { compileToolSchema, type CompileOptions } from '../validation/compile.ts';
import type { Catalogue } from './catalogue.ts';

/** Longest stretch the check runs before it lets requests in. */
const SLICE_MS = 5;

/**
 * Names, in one log line and a gauge, the tools whose calls will be refused
 * because their schema cannot be enforced. It runs in the background, a few
 * milliseconds at a time, and gives up when `current()` says a newer
 * catalogue has arrived, so a catalogue of thousands of tools neither delays
 * readiness nor stalls requests. What it compiles is not kept: calls compile
 * (and cache) the schemas of the tools actually called, so memory grows with
 * what is used, not with the size of the catalogue.
 */
export async function reportEnforceability(
  c: Catalogue,
  registry: CompileOptions['registry'],
  current: () => boolean,
): Promise<void> {
  const refused: string[] = [];
  // The verdict depends only on the schema (the registry is the same for the
  // whole run), and large catalogues repeat schemas: each distinct text is
  // compiled once. A compile allocates a few hundred KB, and a burst of them
  // right after start-up leaves V8's young generation grown for a long time.
  const verdicts = new Map<string, string | undefined>();
  let sliceStart = performance.now();
  for (const t of c.tools.values()) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await setImmediate();
      if (!current()) return;
      sliceStart = performance.now();
    }
    // No JSON text is empty, so '' (a missing schema) is a key of its own.
    const key = JSON.stringify(t.tool.inputSchema) ?? '';
    if (!verdicts.has(key)) {
      const compiled = compileToolSchema(t.tool.inputSchema, { registry });
      verdicts.set(key, compiled.ok ? undefined : compiled.reason);
    }
    const reason = verdicts.get(key);
    if (reason !== undefined) refused.push(`${t.name}:${reason}`);
  }
  if (refused.length > 0)
    log.warn('tools with unenforceable input schemas; their calls are refused', {
      count: refused.length,
      tools: refused.join(','),
    });
  if (catalogueState.hasSubscribers) catalogueState.publish({ tools: c.tools.size, unenforceable: refused.length });
}
