/**
 * A stateless 2026-07-28 MCP server (v2 SDK) exposing the fixtures the
 * conformance suite's server scenarios call by name (`test_simple_text`,
 * `test_prompt_with_arguments`, `test://static-text`, the SEP-2322
 * input-required tools, …), so that the comparison through toolgate covers
 * the traffic those scenarios drive instead of stopping at "tool not found".
 * Behaviour follows each scenario's published server requirements.
 */

import { randomBytes } from 'node:crypto';
import {
  McpServer,
  MissingRequiredClientCapabilityError,
  ResourceTemplate,
  completable,
  createRequestStateCodec,
  fromJsonSchema,
  type CallToolResult,
  type JsonSchemaType,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TaskBoard } from '../../test/helpers/task-board.ts';
import { TASKS_REQUIRED } from '../../test/helpers/tasks-extension.ts';
import { registerInputRequiredTools } from './v2-input-required.ts';
import { registerTaskTools, TASK_REQUIRED_TOOLS } from './v2-tasks.ts';

// A 1×1 PNG and a minimal WAV: the content checks look at type, data and mimeType only.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const CACHE = { ttlMs: 60_000, cacheScope: 'public' } as const;

const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One fixture server per request, as `createMcpHandler` expects; the state key is per process. */
export function fixtureFactory(): () => McpServer {
  // Tampered state must fail verification (input-required-result-tampered-state), so it is HMAC-signed.
  const codec = createRequestStateCodec<{ round: number }>({ key: randomBytes(32) });
  // Tasks outlive the request that created them, so they live beside the factory, not in a server.
  const board = new TaskBoard({ ttlMs: 60_000, pollIntervalMs: 100 });
  return () => {
    const server = new McpServer(
      { name: 'toolgate-conformance-fixture', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { listChanged: true },
          prompts: { listChanged: true },
          logging: {},
          completions: {},
        },
        cacheHints: {
          'tools/list': CACHE,
          'prompts/list': CACHE,
          'resources/list': CACHE,
          'resources/templates/list': CACHE,
          'resources/read': CACHE,
        },
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
      },
    );
    registerContentTools(server);
    registerDiagnosticTools(server);
    registerInputRequiredTools(server, codec.mint.bind(codec));
    registerTaskTools(server, board);
    registerPrompts(server);
    registerResources(server);
    return server;
  };
}

function registerContentTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Simple text content' }, async () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Image content' }, async () => ({
    content: [{ type: 'image', data: PNG, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Audio content' }, async () => ({
    content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', { description: 'Embedded resource content' }, async () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  }));
  server.registerTool('test_multiple_content_types', { description: 'Text, image and resource content' }, async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: '{"test":"data","value":123}',
        },
      },
    ],
  }));
  server.registerTool('test_error_handling', { description: 'Always fails' }, async () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Reports progress 0, 50, 100 of 100' },
    async (ctx: ServerContext) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined)
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 100 },
          });
        if (progress < 100) await sleep(50);
      }
      return text(String(token ?? 'no progress token'));
    },
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Input schema using JSON Schema 2020-12 keywords',
      inputSchema: fromJsonSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: {
          address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
          },
        },
        properties: {
          name: { type: 'string' },
          address: { $ref: '#/$defs/address' },
          contactMethod: { type: 'string', enum: ['phone', 'email'] },
          phone: { type: 'string' },
          email: { type: 'string' },
        },
        allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
        if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
        // oxlint-disable-next-line unicorn/no-thenable -- `then` is a JSON Schema keyword, not a promise
        then: { required: ['phone'] },
        else: { required: ['email'] },
        additionalProperties: false,
      }),
    },
    async () => text('ok'),
  );
  server.registerTool(
    'test_custom_headers',
    {
      description: 'A tool whose region argument is mirrored in the Mcp-Param-Region header (SEP-2243)',
      // SEP-2243's x-mcp-header keyword is an extension the JSON Schema type does not know.
      inputSchema: fromJsonSchema({
        type: 'object',
        properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['region'],
      } as JsonSchemaType),
    },
    async () => text('headers ok'),
  );
}

/** The diagnostic tools server-stateless looks for (test_streaming_elicitation is in v2-input-required.ts). */
function registerDiagnosticTools(server: McpServer): void {
  // Listed here; a call without the sampling capability is refused before dispatch, by missingCapability().
  server.registerTool('test_missing_capability', { description: 'Needs the sampling client capability' }, async () =>
    text('sampling declared'),
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs at info, only where the request asked for logs' },
    async (ctx: ServerContext) => {
      await ctx.mcpReq.log('info', 'logging tool ran');
      return text('logged');
    },
  );
  server.registerTool('test_tool_with_logging', { description: 'Logs three messages' }, async (ctx: ServerContext) => {
    for (const step of ['started', 'processing', 'completed']) await ctx.mcpReq.log('info', `Tool execution ${step}`);
    return text('Tool with logging executed successfully');
  });
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt with two arguments',
      argsSchema: z.object({
        arg1: completable(z.string().describe('First test argument'), (value) =>
          ['paris', 'park', 'party'].filter((v) => v.startsWith(value)),
        ),
        arg2: z.string().describe('Second test argument'),
      }),
    },
    ({ arg1, arg2 }) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } },
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt embedding a resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
}

function registerResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { mimeType: 'text/plain', cacheHint: CACHE },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { mimeType: 'image/png', cacheHint: CACHE },
    async (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
    }),
  );
  server.registerResource('watched-resource', 'test://watched-resource', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }],
  }));
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { mimeType: 'application/json', cacheHint: CACHE },
    async (uri, { id }) => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${String(id)}` }),
        },
      ],
    }),
  );
}

/** Client capabilities a tools/call must declare, per tool, to be served at all. */
const REQUIRED_CAPABILITIES = new Map<string, Readonly<Record<string, unknown>>>([
  ['test_missing_capability', { sampling: {} }],
  ...TASK_REQUIRED_TOOLS.map((name) => [name, TASKS_REQUIRED.requiredCapabilities] as const),
]);

/**
 * McpServer turns any error a tool handler throws into an `isError` result, so
 * the -32021 `MissingRequiredClientCapability` answer (HTTP 400, naming the
 * capabilities in `requiredCapabilities`) that server-stateless expects for
 * `test_missing_capability` without `sampling`, and tasks-required-task-error
 * for a `taskSupport: required` tool without the tasks extension, is given
 * here, in front of the SDK handler. Undefined for every other request.
 */
export async function missingCapability(request: Request): Promise<Response | undefined> {
  if (request.method !== 'POST') return undefined;
  let body: unknown;
  try {
    body = await request.clone().json();
  } catch {
    return undefined;
  }
  if (!isRecord(body) || body.method !== 'tools/call' || !isRecord(body.params) || typeof body.params.name !== 'string')
    return undefined;
  const requiredCapabilities = REQUIRED_CAPABILITIES.get(body.params.name);
  if (requiredCapabilities === undefined) return undefined;
  const meta = isRecord(body.params._meta) ? body.params._meta : {};
  const caps = meta['io.modelcontextprotocol/clientCapabilities'];
  if (isRecord(caps) && declares(caps, requiredCapabilities)) return undefined;
  const error = new MissingRequiredClientCapabilityError({ requiredCapabilities });
  return Response.json(
    { jsonrpc: '2.0', id: body.id ?? null, error: { code: error.code, message: error.message, data: error.data } },
    { status: 400 },
  );
}

/** Every required capability is declared; for `extensions`, every required extension. */
function declares(caps: Readonly<Record<string, unknown>>, required: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(required).every(([key, want]) => {
    const have = caps[key];
    if (key !== 'extensions') return have !== undefined;
    return isRecord(have) && isRecord(want) && Object.keys(want).every((ext) => Object.hasOwn(have, ext));
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
