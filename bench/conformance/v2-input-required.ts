/**
 * The SEP-2322 input-required (multi-round-trip) tools and prompt the
 * 2026-07-28 input-required-result-* scenarios call, and server-stateless's
 * test_streaming_elicitation. Each follows its scenario's published server
 * requirements; request state is minted by the caller's HMAC codec so that
 * tampered state is refused before a handler runs.
 */

import {
  inputRequired,
  inputResponse,
  type CallToolResult,
  type InputRequest,
  type InputRequests,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const stringField = (field: string) => ({
  type: 'object' as const,
  properties: { [field]: { type: 'string' as const } },
  required: [field],
});
const askName = (message: string): InputRequest =>
  inputRequired.elicit({ message, requestedSchema: stringField('name') });

/** The client capabilities a 2026-07-28 request declared in its `_meta` envelope. */
function declared(ctx: ServerContext): Readonly<Record<string, unknown>> {
  const envelope: Readonly<Record<string, unknown>> = ctx.mcpReq.envelope ?? {};
  const caps = envelope['io.modelcontextprotocol/clientCapabilities'];
  return typeof caps === 'object' && caps !== null ? (caps as Record<string, unknown>) : {};
}

export function registerInputRequiredTools(
  server: McpServer,
  mint: (payload: { round: number }) => Promise<string>,
): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'SEP-2322: one elicitation' },
    async (ctx: ServerContext) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
      if (r.kind !== 'elicit' || typeof r.content?.name !== 'string')
        return inputRequired({ inputRequests: { user_name: askName('What is your name?') } });
      return text(`Hello, ${r.content.name}!`);
    },
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'SEP-2322: one sampling request' },
    async (ctx: ServerContext) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'capital_question');
      if (r.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 100,
            }),
          },
        });
      }
      const c = r.result.content;
      return text(`Sampling said: ${!Array.isArray(c) && c.type === 'text' ? c.text : 'non-text'}`);
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'SEP-2322: one roots/list request' },
    async (ctx: ServerContext) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'client_roots');
      if (r.kind !== 'roots') return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Roots: ${r.roots.map((root) => root.uri).join(', ')}`);
    },
  );
  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'SEP-2322: state round trip' },
    async (ctx: ServerContext) => {
      const state = ctx.mcpReq.requestState<{ round: number }>();
      if (state?.round === 1 && inputResponse(ctx.mcpReq.inputResponses, 'confirm').kind === 'elicit')
        return text('state-ok');
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: 'Please confirm',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          }),
        },
        requestState: await mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'SEP-2322: signed state' },
    async (ctx: ServerContext) => {
      if (ctx.mcpReq.requestState<{ round: number }>()?.round === 1) return text('state verified');
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: 'Please confirm',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          }),
        },
        requestState: await mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'SEP-2322: three requests at once' },
    async (ctx: ServerContext) => {
      const responses = ctx.mcpReq.inputResponses;
      const kinds = ['user_name', 'greeting', 'client_roots'].map((k) => inputResponse(responses, k).kind);
      if (ctx.mcpReq.requestState<{ round: number }>()?.round === 1 && !kinds.includes('missing'))
        return text('all inputs received');
      return inputRequired({
        inputRequests: {
          user_name: askName('What is your name?'),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'SEP-2322: two rounds' },
    async (ctx: ServerContext) => {
      const round = ctx.mcpReq.requestState<{ round: number }>()?.round;
      const responses = ctx.mcpReq.inputResponses;
      if (round === 2 && inputResponse(responses, 'step2').kind === 'elicit') return text('multi-round complete');
      if (round === 1 && inputResponse(responses, 'step1').kind === 'elicit') {
        return inputRequired({
          inputRequests: {
            step2: inputRequired.elicit({
              message: 'Step 2: What is your favorite color?',
              requestedSchema: stringField('color'),
            }),
          },
          requestState: await mint({ round: 2 }),
        });
      }
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        requestState: await mint({ round: 1 }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'SEP-2322: asks only for declared capabilities' },
    async (ctx: ServerContext) => {
      const caps = declared(ctx);
      const requests: InputRequests = {};
      if (caps.elicitation !== undefined) requests.user_name = askName('What is your name?');
      if (caps.sampling !== undefined) {
        requests.greeting = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
          maxTokens: 50,
        });
      }
      if (caps.roots !== undefined) requests.client_roots = inputRequired.listRoots();
      const answered = Object.keys(requests).every(
        (k) => inputResponse(ctx.mcpReq.inputResponses, k).kind !== 'missing',
      );
      if (Object.keys(requests).length === 0 || answered) return text('capabilities respected');
      return inputRequired({ inputRequests: requests });
    },
  );
  // server-stateless checks that input arrives as an input-required result, never as a request on the stream.
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'Asks for input through an input-required result' },
    async (ctx: ServerContext) => {
      if (inputResponse(ctx.mcpReq.inputResponses, 'user_name').kind === 'elicit') return text('thanks');
      return inputRequired({ inputRequests: { user_name: askName('What is your name?') } });
    },
  );
  // input-required-result-non-tool-request: the same flow on prompts/get.
  server.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'SEP-2322 on prompts/get' },
    (ctx: ServerContext) => {
      const r = inputResponse(ctx.mcpReq.inputResponses, 'user_context');
      if (r.kind !== 'elicit' || typeof r.content?.context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: stringField('context'),
            }),
          },
        });
      }
      return { messages: [{ role: 'user', content: { type: 'text', text: `Context: ${r.content.context}` } }] };
    },
  );
}
