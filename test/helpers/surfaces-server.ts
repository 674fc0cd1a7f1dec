import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { startV1Server, type V1Server } from './mcp-v1-server.ts';

/** What every resource of the fixture holds: a marker a refusal must never carry. */
export const RESOURCE_SECRET = 'resource-body-7f3a';
export const PROMPT_SECRET = 'prompt-body-91c2';

/** The fixture's resources, by URI. */
export const RESOURCES = [
  'docs://public/readme',
  'docs://public/guide',
  'docs://private/payroll',
  'docs://public-archive/old',
] as const;

/**
 * A sessionful 2025-11-25 v1 SDK server with resources (static and
 * templated, subscribable), prompts and completions, as real servers ship
 * them. Subscribing to any URI makes the server send an update for every
 * resource it has, as a careless server might: toolgate must pass on only
 * those the caller may read.
 */
export function startSurfacesServer(): Promise<V1Server> {
  return startV1Server(() => {
    const server = new McpServer(
      { name: 'surfaces-fixture', version: '1.0.0' },
      { capabilities: { resources: { subscribe: true }, completions: {} } },
    );
    server.registerTool(
      'echo',
      { description: 'Echo the given text back', inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    for (const uri of RESOURCES) {
      server.registerResource(uri, uri, { mimeType: 'text/plain' }, async () => ({
        contents: [{ uri, text: `${uri} ${RESOURCE_SECRET}` }],
      }));
    }
    const names = ['readme', 'guide', 'payroll'];
    for (const area of ['public', 'private']) {
      server.registerResource(
        `${area}-docs`,
        new ResourceTemplate(`docs://${area}/{name}`, {
          list: undefined,
          complete: { name: (value) => names.filter((n) => n.startsWith(value)) },
        }),
        { mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, text: `${uri.href} ${RESOURCE_SECRET}` }] }),
      );
    }
    for (const name of ['greet', 'payroll_report']) {
      server.registerPrompt(
        name,
        { argsSchema: { who: completable(z.string(), (value) => ['ada', 'alan'].filter((w) => w.startsWith(value))) } },
        async ({ who }) => ({
          messages: [{ role: 'user', content: { type: 'text', text: `${name} ${who} ${PROMPT_SECRET}` } }],
        }),
      );
    }
    server.server.setRequestHandler(SubscribeRequestSchema, async () => {
      setImmediate(() => {
        for (const uri of RESOURCES) void server.server.sendResourceUpdated({ uri });
      });
      return {};
    });
    server.server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
    return server;
  });
}
