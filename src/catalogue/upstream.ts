import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { isRecord } from '../json/record.ts';
import { LinkError } from './link-error.ts';
import {
  eachSseMessage,
  endSession,
  openStream,
  post,
  type Exchange,
  type PostOutcome,
  type RpcError,
} from './wire.ts';

export { failureCode } from './link-error.ts';

/**
 * toolgate's own MCP connection to the upstream, used only to read
 * `tools/list` and hear `notifications/tools/list_changed`. The era is found
 * the way the 2026-07-28 Streamable HTTP binding says: a `server/discover`
 * probe; a server that answers it with 2026-07-28 among its versions is used
 * statelessly (change notifications on a `subscriptions/listen` stream), and
 * anything short of a recognised modern refusal gets the 2025 `initialize`
 * handshake (a session, notifications on the GET stream).
 *
 * Written against the wire rather than on the v2 SDK client: these three
 * methods are all toolgate asks of an upstream, and the SDK's import alone
 * cost every policy sidecar ~11 MB of idle memory and ~200 ms of start-up.
 */
export interface UpstreamLink {
  readonly era: 'legacy' | 'modern';
  /** One raw `tools/list` result page, exactly as the server sent it. */
  listPage(cursor: string | undefined): Promise<unknown>;
  close(): Promise<void>;
}

export interface LinkOptions {
  readonly url: URL;
  /** Carries every request; the sidecar passes its upstream pool. Default: undici's global dispatcher. */
  readonly dispatcher?: Dispatcher;
  readonly headers?: Readonly<Record<string, string>>;
  readonly requestTimeoutMs: number;
  readonly signal: AbortSignal;
  /** The upstream said its tool list changed. */
  readonly onListChanged: () => void;
  /**
   * Trouble on the connection that a request may or may not survive (the
   * 2025 GET stream dropped, or was refused): read the list again to find out.
   */
  readonly onTrouble: () => void;
  /** The connection or its notification channel ended without close() being called. */
  readonly onLost: () => void;
}

const MODERN = '2026-07-28';
/** Offered in `initialize`; a server may answer with any of LEGACY_VERSIONS. */
const LEGACY = '2025-11-25';
const LEGACY_VERSIONS: ReadonlySet<string> = new Set([LEGACY, '2025-06-18', '2025-03-26']);
const UNSUPPORTED_PROTOCOL_VERSION = -32022;
const LIST_CHANGED = 'notifications/tools/list_changed';
const clientInfo = Object.freeze({ name: 'toolgate-catalogue', version: '1' });
/** How long close() waits for the DELETE that ends a 2025 session. */
const END_SESSION_MS = 2000;
/** A dropped 2025 GET stream is reopened after 1 s, doubling to this; a stream that lived this long resets it. */
const REOPEN_MAX_MS = 30_000;

export async function openLink(opts: LinkOptions): Promise<UpstreamLink> {
  // The undici index loads every dispatcher, fetch and WebSocket: only for callers that bring none.
  const dispatcher = opts.dispatcher ?? (await import('undici')).getGlobalDispatcher();
  // Aborted by close() or by the caller: ends every request and stream, and silences the callbacks.
  const life = new AbortController();
  const signal = AbortSignal.any([opts.signal, life.signal]);
  const live = () => !signal.aborted;
  const onMessage = (m: Record<string, unknown>) => {
    if (m.method === LIST_CHANGED && live()) opts.onListChanged();
  };
  /** A request with `headers`, bounded by requestTimeoutMs unless `bound` says otherwise (streams: the link's life). */
  const exchange = (
    headers: Readonly<Record<string, string>>,
    bound = AbortSignal.any([signal, AbortSignal.timeout(opts.requestTimeoutMs)]),
  ): Exchange => ({
    dispatcher,
    url: opts.url,
    headers: { ...opts.headers, ...headers },
    signal: bound,
    onMessage,
  });
  let ids = 0;
  const call = async (headers: Readonly<Record<string, string>>, method: string, params: unknown): Promise<unknown> => {
    const outcome = await post(exchange(headers), { id: ++ids, method, params });
    return resultOf(outcome);
  };

  const modern = await discover((headers, params) =>
    post(exchange(headers), { id: ++ids, method: 'server/discover', params }),
  );
  if (modern !== undefined) {
    const listen = modern.toolsListChanged ? listenForChanges() : undefined;
    return {
      era: 'modern',
      listPage: (cursor) =>
        call(modernHeaders('tools/list'), 'tools/list', { ...(cursor !== undefined && { cursor }), _meta: meta() }),
      close: async () => {
        life.abort();
        await listen;
      },
    };
  }

  // The 2025 handshake: toolgate's own session, apart from every client's.
  const init = await post(exchange({}), {
    id: ++ids,
    method: 'initialize',
    params: { protocolVersion: LEGACY, capabilities: {}, clientInfo },
  });
  const initialized = resultOf(init);
  const version = isRecord(initialized) ? initialized.protocolVersion : undefined;
  if (typeof version !== 'string' || !LEGACY_VERSIONS.has(version)) throw new LinkError('unsupported_protocol_version');
  const sessionId = init.kind === 'reply' ? init.headers['mcp-session-id'] : undefined;
  const session: Record<string, string> = {
    'mcp-protocol-version': version,
    ...(typeof sessionId === 'string' && { 'mcp-session-id': sessionId }),
  };
  const ack = await post(exchange(session), { method: 'notifications/initialized' });
  if (ack.kind === 'refused') throw new LinkError(`http_${ack.status}`);
  const stream = followGetStream();
  return {
    era: 'legacy',
    listPage: (cursor) => call(session, 'tools/list', cursor === undefined ? {} : { cursor }),
    close: async () => {
      life.abort();
      await stream;
      // A 2025 session would otherwise linger on the upstream until it
      // expires. Bounded: a hung upstream must not hold up close().
      if (typeof sessionId === 'string') {
        await endSession(exchange(session, AbortSignal.timeout(Math.min(opts.requestTimeoutMs, END_SESSION_MS)))).catch(
          () => undefined,
        );
      }
    },
  };

  /**
   * The 2026-07-28 change stream. Once open, it ends when the upstream ends
   * it (a graceful response, or a restart): changes may then go unheard, so
   * the link counts as lost and the sync reconnects and reads the list again.
   * A server that refuses to open one is read on the interval instead:
   * reconnecting would only be refused again.
   */
  async function listenForChanges(): Promise<void> {
    const id = ++ids;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { _meta: meta(), notifications: { toolsListChanged: true } },
    });
    let opened: Awaited<ReturnType<typeof openStream>> | undefined;
    try {
      opened = await openStream(
        exchange(modernHeaders('subscriptions/listen'), signal),
        'POST',
        body,
        opts.requestTimeoutMs,
      );
      if (opened.kind === 'open') {
        await eachSseMessage(opened.body, (m) => {
          onMessage(m);
          return m.id === id;
        });
      }
    } catch {
      // A failed open or a dropped stream: below.
    }
    if (!live()) return;
    if (opened?.kind === 'refused') opts.onTrouble();
    else opts.onLost();
  }

  /**
   * The 2025 GET stream, where a sessionful server sends change
   * notifications. A server without one answers 405. A drop may have lost a
   * notification, so each is trouble (read the list again); the stream is
   * reopened with backoff, and a refused reopen (the session may be gone)
   * leaves the rest to the next read.
   */
  async function followGetStream(): Promise<void> {
    let delay = 1000;
    while (live()) {
      const openedAt = performance.now();
      let refused = false;
      try {
        const opened = await openStream(exchange(session, signal), 'GET', undefined, opts.requestTimeoutMs);
        if (opened.kind === 'refused') {
          if (opened.status === 405) return;
          refused = true;
        } else {
          await eachSseMessage(opened.body, (m) => {
            onMessage(m);
            return false;
          });
        }
      } catch {
        // A dropped or failed stream: trouble, below.
      }
      if (!live()) return;
      opts.onTrouble();
      if (refused) return;
      delay = performance.now() - openedAt >= REOPEN_MAX_MS ? 1000 : Math.min(delay * 2, REOPEN_MAX_MS);
      await sleep(delay, undefined, { signal }).catch(() => undefined);
    }
  }
}

type Probe = (headers: Readonly<Record<string, string>>, params: unknown) => Promise<PostOutcome>;

/**
 * The era probe. Modern: a `server/discover` result listing 2026-07-28.
 * Refused outright: 401/403 and 5xx (the server is there but will not talk),
 * and a version refusal that lists only modern versions toolgate does not
 * speak. Anything else (404, 405, a 400 without a modern error, another
 * JSON-RPC error, a result that is not a discover result) is a 2025 server.
 */
async function discover(probe: Probe): Promise<{ readonly toolsListChanged: boolean } | undefined> {
  const outcome = await probe(modernHeaders('server/discover'), { _meta: meta() });
  if (outcome.kind === 'refused' && (outcome.status === 401 || outcome.status === 403 || outcome.status >= 500))
    throw new LinkError(`http_${outcome.status}`);
  if (outcome.kind === 'accepted') return undefined;
  if (outcome.error !== undefined) {
    if (refusesAsModern(outcome.error)) throw new LinkError(`jsonrpc_${UNSUPPORTED_PROTOCOL_VERSION}`);
    return undefined;
  }
  if (outcome.kind !== 'reply' || !isRecord(outcome.result)) return undefined;
  const { supportedVersions, capabilities } = outcome.result;
  if (!Array.isArray(supportedVersions) || !supportedVersions.includes(MODERN)) return undefined;
  const tools = isRecord(capabilities) ? capabilities.tools : undefined;
  return { toolsListChanged: isRecord(tools) && tools.listChanged === true };
}

/** An UnsupportedProtocolVersionError naming a modern version: a modern server, just not one toolgate can speak to. */
function refusesAsModern(error: RpcError): boolean {
  if (error.code !== UNSUPPORTED_PROTOCOL_VERSION || !isRecord(error.data)) return false;
  const { supported } = error.data;
  return Array.isArray(supported) && supported.some((v) => typeof v === 'string' && v >= MODERN);
}

function resultOf(outcome: PostOutcome): unknown {
  if (outcome.kind === 'refused') throw new LinkError(`http_${outcome.status}`);
  if (outcome.kind === 'accepted') throw new LinkError('no_reply');
  if (outcome.error !== undefined) throw new LinkError(`jsonrpc_${outcome.error.code}`);
  return outcome.result;
}

function modernHeaders(method: string): Record<string, string> {
  return { 'mcp-protocol-version': MODERN, 'mcp-method': method };
}

/** The per-request `_meta` every 2026-07-28 request carries instead of a handshake. */
function meta(): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': clientInfo,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
}
