/**
 * What every benchmark case sends, and what the stub upstream advertises, in
 * one place so the arguments always satisfy the advertised inputSchemas (a
 * validating case must measure the pass path, not a rejection).
 */

export interface BenchRequest {
  readonly method: 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Headers a 2025-11-25 Streamable HTTP client sends with every POST. */
const MCP_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
});

/** The stub answers calls to this tool with an SSE stream instead of JSON. */
export const SSE_TOOL_NAME = 'run_test_suite';

export const TOOLS = Object.freeze([
  {
    name: 'search_issues',
    description: 'Search issues in a repository by free text, state and labels.',
    inputSchema: {
      type: 'object',
      properties: {
        repository: { type: 'string', pattern: '^[a-z0-9-]+/[a-z0-9-]+$' },
        query: { type: 'string', minLength: 1, maxLength: 500 },
        state: { type: 'string', enum: ['open', 'closed', 'all'] },
        labels: { type: 'array', items: { type: 'string' }, maxItems: 10 },
        updatedSince: { type: 'string' },
        sort: { type: 'string', enum: ['created', 'updated', 'comments'] },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
      },
      required: ['repository', 'query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: SSE_TOOL_NAME,
    description: 'Run a test suite and stream progress while it runs.',
    inputSchema: {
      type: 'object',
      properties: {
        repository: { type: 'string' },
        suite: { type: 'string' },
        ref: { type: 'string' },
      },
      required: ['repository', 'suite'],
      additionalProperties: false,
    },
  },
]);

/**
 * TOOLS padded with generated tools up to `size`: the shape of a large
 * catalogue (name, description, a small schema) for the contract-pinning cases.
 */
export function catalogueOf(size: number): readonly Record<string, unknown>[] {
  const extra = Array.from({ length: Math.max(0, size - TOOLS.length) }, (_, i) => ({
    name: `filler_tool_${String(i).padStart(4, '0')}`,
    description: `Generated tool number ${i}: looks up record ${i} of the inventory and returns its fields.`,
    inputSchema: { type: 'object', properties: { id: { type: 'string', maxLength: 64 }, verbose: { type: 'boolean' } }, required: ['id'] },
  }));
  return [...TOOLS, ...extra];
}

function toolCall(id: number, name: string, args: Record<string, unknown>): BenchRequest {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, _meta: { progressToken: `bench-${id}` } },
  });
  return Object.freeze({ method: 'POST', path: '/mcp', headers: MCP_HEADERS, body });
}

/** A typical read-only call: ~370 bytes, answered with a small JSON result. */
export const SEARCH_CALL = toolCall(7, 'search_issues', {
  repository: 'acme/payments-service',
  query: 'checkout request times out after the second retry against the card processor',
  state: 'open',
  labels: ['bug', 'p1', 'checkout'],
  updatedSince: '2025-10-01T00:00:00Z',
  sort: 'updated',
  limit: 20,
});

/** A call the stub answers as SSE: a progress event first, the result later. */
export const STREAM_CALL = toolCall(8, SSE_TOOL_NAME, {
  repository: 'acme/payments-service',
  suite: 'integration/checkout',
  ref: 'refs/heads/main',
});
