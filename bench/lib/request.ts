/**
 * What every benchmark case sends, and what the stub upstream advertises, in
 * one place so the arguments always satisfy the advertised inputSchemas (a
 * validating case must measure the pass path, not a rejection).
 */

export interface BenchRequest {
  readonly method: 'POST';
  readonly path: string;
  /** With `rotate`, these hold its first value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /**
   * Successive requests carry `header` set to each of `values` in turn,
   * wrapping around: load spread over many credentials.
   */
  readonly rotate?: { readonly header: string; readonly values: readonly string[] };
}

/** The request fixed at its first rotated value: a warm-up that leaves every other value unused. */
export function unrotated(req: BenchRequest): BenchRequest {
  return req.rotate === undefined ? req : { method: req.method, path: req.path, headers: req.headers, body: req.body };
}

/** The headers of successive requests: `req.headers` each time, or with the next rotated value. */
export function headerSequence(req: BenchRequest): () => Readonly<Record<string, string>> {
  const rotate = req.rotate;
  if (rotate === undefined || rotate.values.length === 0) return () => req.headers;
  let next = 0;
  return () => {
    const value = rotate.values[next] as string;
    next = (next + 1) % rotate.values.length;
    return { ...req.headers, [rotate.header]: value };
  };
}

/** Headers a 2025-11-25 Streamable HTTP client sends with every POST. */
export const MCP_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
});

/** The stub answers calls to this tool with an SSE stream instead of JSON. */
export const SSE_TOOL_NAME = 'run_test_suite';
/** The stub answers calls to this tool with a 4 KB result: the result guard's case. */
export const REPORT_TOOL_NAME = 'read_incident_report';

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
  {
    name: REPORT_TOOL_NAME,
    description: 'Read an incident report: timeline, impact and follow-ups.',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', maxLength: 64 } },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
]);

/**
 * A 4 KB incident report as a tool returns it: prose, log lines, names and
 * addresses, with one address and one leaked key id for the guard to redact.
 */
export function incidentReport(): string {
  const lines = [
    'INC-2291: checkout latency and card processor timeouts (resolved)',
    'Reported by the on-call engineer, owner sre-payments@example.com. Severity 2; customers saw slow checkouts for 41 minutes.',
    'A deploy key AKIAZ7QW3EXAMPLE4XYZ was found in the CI log during the investigation and has been rotated.',
  ];
  for (let i = 0; lines.join('\n').length < 4096; i++) {
    lines.push(
      `2025-10-0${(i % 9) + 1}T0${i % 10}:1${i % 6}:00Z payments-api pod/payments-${i % 7} retry ${i % 3} of request ${48120 + i} to the processor returned 504 after 5000 ms; the breaker stayed closed`,
    );
  }
  return lines.join('\n').slice(0, 4096);
}

/**
 * TOOLS padded with generated tools up to `size`: the shape of a large
 * catalogue (name, description, a small schema) for the contract-pinning cases.
 */
export function catalogueOf(size: number): readonly Record<string, unknown>[] {
  const extra = Array.from({ length: Math.max(0, size - TOOLS.length) }, (_, i) => ({
    name: `filler_tool_${String(i).padStart(4, '0')}`,
    description: `Generated tool number ${i}: looks up record ${i} of the inventory and returns its fields.`,
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', maxLength: 64 }, verbose: { type: 'boolean' } },
      required: ['id'],
    },
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

/**
 * SEARCH_CALL as a 2026-07-28 client sends it: the revision in the headers
 * and the `_meta` envelope, the method and tool mirrored into Mcp-Method and
 * Mcp-Name.
 */
export const MODERN_SEARCH_CALL: BenchRequest = (() => {
  const message = JSON.parse(SEARCH_CALL.body) as { params: { name: string; _meta: Record<string, unknown> } };
  message.params._meta['io.modelcontextprotocol/protocolVersion'] = '2026-07-28';
  return Object.freeze({
    method: 'POST',
    path: '/mcp',
    headers: Object.freeze({
      ...MCP_HEADERS,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': message.params.name,
    }),
    body: JSON.stringify(message),
  });
})();

/** A call the stub answers with a 4 KB report. */
export const REPORT_CALL = toolCall(9, REPORT_TOOL_NAME, { id: 'INC-2291' });

/** A call the stub answers as SSE: a progress event first, the result later. */
export const STREAM_CALL = toolCall(8, SSE_TOOL_NAME, {
  repository: 'acme/payments-service',
  suite: 'integration/checkout',
  ref: 'refs/heads/main',
});
