/**
 * The demo's steps, each a request against the running demo and the outcome
 * it promises. The printed commands and the tour are both made from these, so
 * what the banner promises is what `--tour` checks.
 */

import { ERROR_META_KEY } from '../mcp/tool-error.ts';

/** Demo only: examples/demo/keys.yaml lists their hashes (a test keeps them equal). */
export const DEMO_KEYS = {
  alice: { key: 'alice-demo-key', scopes: ['tickets.write'] },
  bob: { key: 'bob-demo-key', scopes: [] },
} as const;
type DemoPrincipal = keyof typeof DEMO_KEYS;

export interface Endpoints {
  readonly mcp: string;
  readonly admin: string;
}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

export interface Outcome {
  /** Whether the answer is the one the step promised. */
  readonly ok: boolean;
  /** The part of the answer worth showing. */
  readonly shown: string;
}

interface StepBase {
  readonly id: string;
  readonly title: string;
  /** What the command will show, said before it runs. */
  readonly promise: string;
  readonly check: (answers: readonly Answer[]) => Outcome;
}

export interface McpStep extends StepBase {
  readonly kind: 'mcp';
  readonly as: DemoPrincipal;
  readonly method: 'tools/list' | 'tools/call';
  readonly tool?: string;
  readonly arguments?: Record<string, unknown>;
  /** Send until an answer refuses with this code, at most `times` requests. */
  readonly until?: { readonly code: string; readonly times: number };
}

interface MetricsStep extends StepBase {
  readonly kind: 'metrics';
  readonly metric: string;
}

export type Step = McpStep | MetricsStep;

/** 2026-07-28 requests carry their version and capabilities in every request, so no session is needed. */
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

export function requestBody(step: McpStep): string {
  const params =
    step.method === 'tools/call' ? { name: step.tool, arguments: step.arguments ?? {}, _meta: META } : { _meta: META };
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: step.method, params });
}

export function requestHeaders(step: McpStep): Record<string, string> {
  return {
    authorization: `Bearer ${DEMO_KEYS[step.as].key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': step.method,
    ...(step.tool === undefined ? {} : { 'mcp-name': step.tool }),
  };
}

function json(a: Answer | undefined): {
  result?: Record<string, unknown>;
  error?: { code: number; data?: Record<string, unknown> };
} {
  try {
    return JSON.parse(a?.body ?? '') as ReturnType<typeof json>;
  } catch {
    return {};
  }
}

/** toolgate's refusal code, from a JSON-RPC error or from a tool result's `_meta` (refusals the model reads). */
export function errorCode(a: Answer | undefined): string {
  const body = json(a);
  const meta = body.result?._meta as Record<string, { code?: unknown } | undefined> | undefined;
  const code: unknown = body.error?.data?.code ?? meta?.[ERROR_META_KEY]?.code;
  return typeof code === 'string' ? code : 'no error code';
}

function text(a: Answer | undefined): string {
  const content = json(a).result?.content as { type: string; text?: string }[] | undefined;
  return content?.find((c) => c.type === 'text')?.text ?? '';
}

function last(answers: readonly Answer[]): Answer | undefined {
  return answers.at(-1);
}

function refusal(a: Answer | undefined, status: number, code: string, extra = ''): Outcome {
  return { ok: a?.status === status && errorCode(a) === code, shown: `${errorCode(a)}${extra}` };
}

export const STEPS: readonly Step[] = [
  {
    id: 'list',
    kind: 'mcp',
    title: 'bob lists the tools',
    promise: 'only what bob may call (create_ticket needs a scope he lacks), and search_tools for the rest',
    as: 'bob',
    method: 'tools/list',
    check: (answers) => {
      const tools = ((json(last(answers)).result?.tools ?? []) as { name: string }[]).map((t) => t.name);
      const ok =
        tools.includes('get_weather') &&
        tools.includes('search_tools') &&
        !tools.includes('create_ticket') &&
        !tools.includes('convert_currency');
      return { ok: last(answers)?.status === 200 && ok, shown: `tools: ${tools.join(', ')}` };
    },
  },
  {
    id: 'allowed',
    kind: 'mcp',
    title: 'an allowed call: bob asks for the weather',
    promise: "200 and the tool's answer",
    as: 'bob',
    method: 'tools/call',
    tool: 'get_weather',
    arguments: { city: 'Paris' },
    check: (answers) => ({
      ok: last(answers)?.status === 200 && text(last(answers)).startsWith('Paris'),
      shown: JSON.stringify(text(last(answers))),
    }),
  },
  {
    id: 'denied',
    kind: 'mcp',
    title: 'a denied call: bob opens a ticket',
    promise: "a tool_not_granted tool result; bob's static key cannot gain tickets.write, so no scope is named",
    as: 'bob',
    method: 'tools/call',
    tool: 'create_ticket',
    arguments: { title: 'Printer on fire', priority: 'high' },
    check: (answers) => {
      const a = last(answers);
      const denied = refusal(a, 200, 'tool_not_granted', `: ${JSON.stringify(text(a))}`);
      return {
        ...denied,
        ok:
          denied.ok &&
          json(a).result?.isError === true &&
          a?.headers.get('www-authenticate') === null &&
          !/scope/i.test(text(a)),
      };
    },
  },
  {
    id: 'elevated',
    kind: 'mcp',
    title: 'an elevated tool: alice deletes a ticket with her static key',
    promise:
      '403 credential_too_weak: delete_ticket needs a short-lived or one-time token; the RFC 9470 step-up challenge',
    as: 'alice',
    method: 'tools/call',
    tool: 'delete_ticket',
    arguments: { id: 'T-1' },
    check: (answers) => {
      const challenge = last(answers)?.headers.get('www-authenticate') ?? '';
      const weak = refusal(last(answers), 403, 'credential_too_weak', `; WWW-Authenticate: ${challenge}`);
      return { ...weak, ok: weak.ok && /error="insufficient_user_authentication"/.test(challenge) };
    },
  },
  {
    id: 'invalid',
    kind: 'mcp',
    title: 'invalid arguments: alice opens a ticket with a one-letter title and priority "urgent"',
    promise:
      'a tool result with isError: true the model reads and acts on, naming the failing pointers and rules, never the values',
    as: 'alice',
    method: 'tools/call',
    tool: 'create_ticket',
    arguments: { title: 'x', priority: 'urgent' },
    check: (answers) => {
      const a = last(answers);
      const result = json(a).result;
      const errors = ((result?.structuredContent as { errors?: unknown } | undefined)?.errors ?? []) as {
        instancePath: string;
        keyword: string;
      }[];
      const ok = a?.status === 200 && result?.isError === true && errors.length > 0 && !a.body.includes('urgent');
      return { ok, shown: text(a) };
    },
  },
  {
    id: 'rate-limited',
    kind: 'mcp',
    title: 'a rate limit: bob asks for the weather until his bucket is empty',
    promise: 'answers until the bucket is empty, then a rate_limited tool result telling the model how long to wait',
    as: 'bob',
    method: 'tools/call',
    tool: 'get_weather',
    arguments: { city: 'Oslo' },
    until: { code: 'rate_limited', times: 8 },
    check: (answers) => {
      const a = last(answers);
      const before = answers
        .slice(0, -1)
        .map((x) => (errorCode(x) === 'no error code' ? 'ran' : errorCode(x)))
        .join(' ');
      const limited = refusal(
        a,
        200,
        'rate_limited',
        `: ${JSON.stringify(text(a))} (answers before it: ${before || 'none'})`,
      );
      return { ...limited, ok: limited.ok && json(a).result?.isError === true && /Wait \d+ s/.test(text(a)) };
    },
  },
  {
    id: 'search',
    kind: 'mcp',
    title: 'discovery: bob searches for a tool tools/list did not show',
    promise: 'search_tools finds convert_currency, with its complete inputSchema',
    as: 'bob',
    method: 'tools/call',
    tool: 'search_tools',
    arguments: { query: 'exchange euros to dollars', limit: 3 },
    check: (answers) => {
      const found =
        (
          json(last(answers)).result?.structuredContent as
            | { tools?: { name: string; inputSchema?: unknown }[] }
            | undefined
        )?.tools ?? [];
      const first = found[0];
      return {
        ok: first?.name === 'convert_currency' && first.inputSchema !== undefined,
        shown: `found: ${found.map((t) => t.name).join(', ') || 'nothing'}`,
      };
    },
  },
  {
    id: 'metrics',
    kind: 'metrics',
    title: 'the decisions, counted',
    promise: 'toolgate_decisions_total by stage and outcome, each refusal above among them',
    metric: 'toolgate_decisions_total',
    check: (answers) => {
      const lines = (last(answers)?.body ?? '').split('\n').filter((l) => l.startsWith('toolgate_decisions_total{'));
      const counted = (outcome: string): boolean =>
        lines.some((l) => l.includes(`outcome="${outcome}"`) && !l.endsWith(' 0'));
      const ok = ['allow', 'tool_not_granted', 'credential_too_weak', 'invalid_arguments', 'rate_limited'].every(
        counted,
      );
      return {
        ok: last(answers)?.status === 200 && ok,
        shown: ['toolgate_decisions_total', ...lines.map((l) => `  ${l.replace('toolgate_decisions_total', '')}`)].join(
          '\n',
        ),
      };
    },
  },
];
