import type { Policy } from '../config/policy/policy.ts';
import { calledTool } from '../mcp/tool-call.ts';
import type { CatalogueEntry } from '../catalogue/view.ts';
import { callArguments } from '../mcp/classify.ts';
import { paramHeadersDisagree } from '../mcp/param-headers.ts';
import { isDryRun } from './dry-run.ts';
import { deny, PASS, type Exchange, type Interceptor, type Verdict } from './contract.ts';
import type { SchemaCache } from '../validation/cache.ts';

/**
 * Validates tools/call arguments against the tool's full inputSchema as the
 * upstream last listed it (known_tool made sure there is one). A schema
 * toolgate cannot enforce refuses the call rather than letting unchecked
 * arguments through, and so does an integer too long to read exactly where
 * the schema compares values. On 2026-07-28 requests
 * the `Mcp-Param-*` headers the schema declares must mirror the arguments.
 */
export function argumentsInterceptor(cacheFor: (policy: Policy) => SchemaCache): Interceptor {
  const check = (entry: CatalogueEntry, ex: Exchange): Verdict => {
    const compiled = cacheFor(ex.policy).get(entry.digest, entry.tool.inputSchema);
    if (!compiled.ok) return deny('tool_validation_unavailable');
    const declared = compiled.paramHeaders;
    if (
      declared.length > 0 &&
      ex.message.era === 'modern' &&
      !isDryRun(ex.request) &&
      paramHeadersDisagree(declared, callArguments(ex.message), ex.request.headers)
    ) {
      return deny('header_mismatch');
    }
    const inexact = ex.message.inexactInteger;
    if (inexact !== undefined && compiled.comparesValues) {
      return deny('inexact_number', { errors: [{ instancePath: inexact, keyword: 'precision' }] });
    }
    const result = compiled.validate(ex.message.params?.arguments ?? {});
    if (result.ok) return PASS;
    if (result.code === 'bounds_exceeded') return deny('tool_validation_unavailable');
    return deny(result.code, { errors: result.errors });
  };
  return {
    name: 'arguments',
    methods: ['tools/call'],
    intercept(ex) {
      // A refresh between the two checks may have dropped the tool.
      const entry = ex.catalogue.get(calledTool(ex.message));
      return entry === undefined ? deny('unknown_tool') : check(entry, ex);
    },
  };
}
