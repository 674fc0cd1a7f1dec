/**
 * The few calls the `kubernetes` verifier makes to the cluster's API server
 * (its JWKS, TokenReviews), authenticated as the sidecar's own
 * ServiceAccount. The token file is the kubelet's projected token, which it
 * rotates in place, so it is re-read rather than held; the CA is read once.
 * Nothing here throws: a call that cannot complete is `undefined`, and the
 * verifier turns that into a retryable refusal.
 */
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'undici';

export interface ApiServerOptions {
  readonly url: string;
  readonly caFile: string;
  readonly tokenFile: string;
  readonly timeoutMs: number;
}

export interface ApiServer {
  /** GET or POST with a JSON body; the status and parsed body, or undefined when the call failed. */
  call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown } | undefined>;
}

/** The kubelet refreshes a projected token well before it expires; a minute between reads follows it closely enough. */
const TOKEN_REREAD_MS = 60_000;
/** A JWKS or a TokenReview answer is a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export function apiServer(options: ApiServerOptions): ApiServer {
  let agent: Promise<Agent | undefined> | undefined;
  let token: { value: string; readAt: number } | undefined;
  const dispatcher = () => {
    agent ??= readFile(options.caFile).then(
      (ca) => new Agent({ connect: { ca, timeout: options.timeoutMs } }),
      () => {
        agent = undefined;
        return undefined;
      },
    );
    return agent;
  };
  const bearer = async (): Promise<string | undefined> => {
    if (token !== undefined && Date.now() - token.readAt < TOKEN_REREAD_MS) return token.value;
    try {
      token = { value: (await readFile(options.tokenFile, 'utf8')).trim(), readAt: Date.now() };
      return token.value;
    } catch {
      return undefined;
    }
  };
  return {
    async call(method, path, body) {
      const [d, t] = await Promise.all([dispatcher(), bearer()]);
      if (d === undefined || t === undefined) return undefined;
      try {
        const res = await request(new URL(path, options.url), {
          method,
          dispatcher: d,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
          headers: {
            authorization: `Bearer ${t}`,
            accept: 'application/json, application/jwk-set+json',
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        const length = Number(res.headers['content-length'] ?? 0);
        if (length > MAX_ANSWER_BYTES) {
          res.body.destroy();
          return undefined;
        }
        const text = await res.body.text();
        if (Buffer.byteLength(text) > MAX_ANSWER_BYTES) return undefined;
        return { status: res.statusCode, body: JSON.parse(text) as unknown };
      } catch {
        return undefined;
      }
    },
  };
}
