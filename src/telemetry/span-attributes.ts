import type { IncomingMessage } from 'node:http';
import type { Attributes } from '@opentelemetry/api';
import type { Classified } from '../mcp/classify.ts';
import { methodLabel } from '../mcp/methods.ts';

/**
 * Names and attributes of the server span of one MCP message, after the
 * OpenTelemetry MCP conventions, restricted to what is safe to export: client
 * strings only when they have the shape of an identifier, resource URIs only
 * by scheme (a URI may carry a token), never arguments or params.
 */

/** MCP tool and prompt names (SEP-986): anything else cannot name a real tool and may carry anything. */
const NAME = /^[A-Za-z0-9_./-]{1,128}$/;
const VERSION = /^\d{4}-\d{2}-\d{2}$/;
/** Session ids are visible ASCII by the transport spec. */
const SESSION = /^[\x21-\x7e]{1,256}$/;
const ID = /^[\x20-\x7e]{1,128}$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]{0,31}):/;

export function safeName(name: string | undefined): string | undefined {
  return name !== undefined && NAME.test(name) ? name : undefined;
}

/** A JSON-RPC id as text, when it is short printable ASCII. */
export function safeRequestId(id: string | number | null): string | undefined {
  if (id === null) return undefined;
  const text = String(id);
  return ID.test(text) ? text : undefined;
}

function uriScheme(uri: string | undefined): string | undefined {
  const m = uri === undefined ? null : SCHEME.exec(uri);
  return m?.[1]?.toLowerCase();
}

/** `{mcp.method.name} {target}`: the tool or prompt name, or the resource URI's scheme. */
export function serverSpanName(c: Classified): string {
  const method = methodLabel(c.method);
  const target =
    c.method === 'resources/read'
      ? uriScheme(c.name)
      : c.method === 'tools/call' || c.method === 'prompts/get'
        ? safeName(c.name)
        : undefined;
  return target === undefined ? method : `${method} ${target}`;
}

export function serverSpanAttributes(c: Classified, req: IncomingMessage): Attributes {
  const a: Attributes = { 'mcp.method.name': methodLabel(c.method), 'network.protocol.name': 'http' };
  if (c.protocolVersion !== undefined && VERSION.test(c.protocolVersion)) a['mcp.protocol.version'] = c.protocolVersion;
  const id = safeRequestId(c.id);
  if (id !== undefined) a['jsonrpc.request.id'] = id;
  const session = req.headers['mcp-session-id'];
  if (typeof session === 'string' && SESSION.test(session)) a['mcp.session.id'] = session;
  if (c.method === 'tools/call') {
    a['gen_ai.operation.name'] = 'execute_tool';
    const name = safeName(c.name);
    if (name !== undefined) a['gen_ai.tool.name'] = name;
  } else if (c.method === 'prompts/get') {
    const name = safeName(c.name);
    if (name !== undefined) a['gen_ai.prompt.name'] = name;
  } else if (c.method === 'resources/read') {
    const scheme = uriScheme(c.name);
    if (scheme !== undefined) a['toolgate.resource.scheme'] = scheme;
  }
  return addClientAttributes(a, req);
}

/** Adds the peer's address and port to `a`, and returns it. */
export function addClientAttributes(a: Attributes, req: IncomingMessage): Attributes {
  const { remoteAddress, remotePort } = req.socket;
  if (remoteAddress !== undefined) a['client.address'] = remoteAddress;
  if (remotePort !== undefined) a['client.port'] = remotePort;
  return a;
}
