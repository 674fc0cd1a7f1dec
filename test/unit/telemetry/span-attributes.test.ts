import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import type { Classified } from '../../../src/mcp/classify.ts';
import { serverSpanAttributes, serverSpanName } from '../../../src/telemetry/span-attributes.ts';

const req = (headers: Record<string, string> = {}) => ({ headers, socket: {} }) as unknown as IncomingMessage;
const msg = (
  method: string,
  name: string | undefined,
  id: string | number | null = 1,
  protocolVersion = '2025-11-25',
): Classified => ({ ok: true, era: 'legacy', protocolVersion, kind: 'request', id, method, name, params: {} });

describe('server span names and attributes', () => {
  it('names tools and prompts, and resources only by URI scheme', () => {
    assert.equal(serverSpanName(msg('tools/call', 'get_weather')), 'tools/call get_weather');
    assert.equal(serverSpanName(msg('prompts/get', 'summarise')), 'prompts/get summarise');
    assert.equal(
      serverSpanName(msg('resources/read', 'https://api.example.com/doc?token=secret-abc')),
      'resources/read https',
    );
    assert.equal(serverSpanName(msg('tools/list', undefined)), 'tools/list');
    assert.equal(serverSpanName(msg('vendor/custom-thing', undefined)), 'other');
  });

  it('drops client strings that cannot be identifiers', () => {
    assert.equal(serverSpanName(msg('tools/call', 'drop table; password=hunter2 ')), 'tools/call');
    const a = serverSpanAttributes(
      msg('tools/call', 'x'.repeat(200), 'id\nwith newline', 'not-a-version'),
      req({ 'mcp-session-id': 'sess ion' }),
    );
    assert.equal(a['gen_ai.tool.name'], undefined);
    assert.equal(a['jsonrpc.request.id'], undefined);
    assert.equal(a['mcp.protocol.version'], undefined);
    assert.equal(a['mcp.session.id'], undefined);
  });

  it('follows the MCP conventions for a tool call', () => {
    const a = serverSpanAttributes(
      msg('tools/call', 'get_weather', 42, '2026-07-28'),
      req({ 'mcp-session-id': 'abc123' }),
    );
    assert.deepEqual(
      { ...a },
      {
        'mcp.method.name': 'tools/call',
        'network.protocol.name': 'http',
        'mcp.protocol.version': '2026-07-28',
        'jsonrpc.request.id': '42',
        'mcp.session.id': 'abc123',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
      },
    );
  });
});
