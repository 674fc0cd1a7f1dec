import { Client, ProtocolError, SdkError, SdkHttpError, StreamableHTTPClientTransport, type StandardSchemaV1 } from '@modelcontextprotocol/client';

/**
 * toolgate's own MCP connection to the upstream, used only to read
 * `tools/list` and hear `notifications/tools/list_changed`. The v2 SDK client
 * negotiates the era: `server/discover` for 2026-07-28 servers (stateless,
 * change notifications on a `subscriptions/listen` stream), falling back to
 * the 2025 `initialize` handshake (a session, notifications on the GET stream).
 */
export interface UpstreamLink {
  readonly era: 'legacy' | 'modern';
  /** One raw `tools/list` result page, exactly as the server sent it. */
  listPage(cursor: string | undefined): Promise<unknown>;
  close(): Promise<void>;
}

export interface LinkOptions {
  readonly url: URL;
  readonly headers?: Readonly<Record<string, string>>;
  readonly requestTimeoutMs: number;
  readonly signal: AbortSignal;
  /** The upstream said its tool list changed. */
  readonly onListChanged: () => void;
  /**
   * The SDK reported trouble on the connection (e.g. the 2025 GET stream
   * dropped and gave up reconnecting). Whether requests still work is found
   * out by reading the list again.
   */
  readonly onTrouble: () => void;
  /** The connection or its notification channel ended without close() being called. */
  readonly onLost: () => void;
}

/**
 * Accepts any result unchanged: the catalogue keeps tools exactly as listed
 * and judges entries itself, so the SDK's Tool schema must neither strip
 * unknown fields nor fail a whole page over one malformed entry.
 */
const rawResult: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'toolgate', validate: (value: unknown) => ({ value }) },
};

const clientInfo = { name: 'toolgate-catalogue', version: '1' };

export async function openLink(opts: LinkOptions): Promise<UpstreamLink> {
  let closing = false;
  const lost = () => {
    if (!closing) opts.onLost();
  };
  const client = new Client(clientInfo, {
    versionNegotiation: { mode: 'auto' },
    listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => opts.onListChanged() } },
  });
  // The error text may quote the peer, so it is neither kept nor logged.
  client.onerror = () => {
    if (!closing) opts.onTrouble();
  };
  client.onclose = lost;
  const transport = new StreamableHTTPClientTransport(opts.url, {
    requestInit: opts.headers !== undefined ? { headers: { ...opts.headers } } : {},
  });
  const requestOptions = { timeout: opts.requestTimeoutMs, signal: opts.signal };
  try {
    await client.connect(transport, requestOptions);
  } catch (e) {
    closing = true;
    await client.close().catch(() => {});
    throw e;
  }
  const era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  void client.autoOpenedSubscription?.closed.then((how) => {
    if (how !== 'local') lost();
  });
  return {
    era,
    listPage: (cursor) => client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, rawResult, requestOptions),
    close: async () => {
      closing = true;
      await client.autoOpenedSubscription?.close().catch(() => {});
      // A 2025 session would otherwise linger on the upstream until it expires.
      // Bounded: a hung upstream must not hold up close(); client.close() then aborts it.
      if (transport.sessionId !== undefined) {
        const ending = transport.terminateSession().catch(() => {});
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([ending, new Promise((r) => (timer = setTimeout(r, Math.min(opts.requestTimeoutMs, 2000))))]);
        clearTimeout(timer);
      }
      await client.close().catch(() => {});
    },
  };
}

/**
 * A closed code for a failed link operation, safe to log: it carries no
 * message text, which may quote the upstream.
 */
export function failureCode(e: unknown): string {
  if (e instanceof SdkHttpError) return `http_${e.status}`;
  const errno = socketErrorCode(e);
  if (errno !== undefined) return `net_${errno.toLowerCase()}`;
  if (e instanceof SdkError) return `sdk_${String(e.code).toLowerCase()}`;
  if (e instanceof ProtocolError) return `jsonrpc_${e.code}`;
  if (e instanceof Error && e.name === 'AbortError') return 'aborted';
  return 'connect_failed';
}

/**
 * The socket error (ECONNREFUSED, ECONNRESET …) behind an SDK or fetch error,
 * which wraps it in `cause` (the SDK sometimes in `data.cause`): the most
 * useful thing an operator can be told when the upstream is down.
 */
function socketErrorCode(e: unknown): string | undefined {
  let node: unknown = e;
  for (let depth = 0; depth < 6 && typeof node === 'object' && node !== null; depth++) {
    const { code, cause, data } = node as { code?: unknown; cause?: unknown; data?: { cause?: unknown } };
    const own = node instanceof SdkError || node instanceof ProtocolError;
    if (!own && typeof code === 'string' && /^(E[A-Z0-9_]{2,30}|UND_ERR_[A-Z_]{2,30})$/.test(code)) return code;
    node = cause ?? (typeof data === 'object' && data !== null ? data.cause : undefined);
  }
  return undefined;
}
