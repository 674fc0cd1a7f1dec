/**
 * The webhook's HTTPS listener: POST /mutate takes AdmissionReviews, GET
 * /healthz and /readyz answer probes. The certificate and key are re-read on
 * an interval and swapped in without a restart when they change (cert-manager
 * and kubelet Secret updates replace the files in place).
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../http/lifecycle.ts';
import type { Bind } from '../http/listen-error.ts';
import { log } from '../telemetry/log.ts';
import type { InjectorConfig } from './config.ts';
import type { InjectorMetrics } from './metrics.ts';
import { review } from './review.ts';

export interface WebhookServerOptions {
  readonly bind: Bind;
  readonly certFile: string;
  readonly keyFile: string;
  /** 0 turns reloading off. */
  readonly certReloadMs: number;
  readonly config: InjectorConfig;
  readonly metrics: InjectorMetrics;
}

export interface WebhookServer {
  readonly port: number;
  /** Re-reads the certificate and key; true when new ones were installed. */
  reloadCertificate(): Promise<boolean>;
  close(): Promise<void>;
}

/** A Pod AdmissionReview is bounded by etcd's object limit (1.5 MiB) plus the old object. */
const MAX_BODY_BYTES = 8 << 20;

export class CertificateError extends Error {
  constructor(message = 'cannot read the TLS certificate or key file') {
    super(message);
    this.name = 'CertificateError';
  }
}

async function readPair(certFile: string, keyFile: string): Promise<{ cert: Buffer; key: Buffer } | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
    return { cert, key };
  } catch {
    return undefined;
  }
}

export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const pair = await readPair(options.certFile, options.keyFile);
  if (pair === undefined) throw new CertificateError();
  let current = pair;
  let server;
  try {
    server = createServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2' }, (req, res) => {
      handle(req, res, options.config, options.metrics);
    });
  } catch {
    throw new CertificateError('the TLS certificate or key is not valid PEM');
  }
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await listen(server, options.bind);

  const reloadCertificate = async (): Promise<boolean> => {
    const next = await readPair(options.certFile, options.keyFile);
    if (next === undefined) {
      log.warn('webhook certificate reload failed; keeping the current one', { code: 'cert_unreadable' });
      return false;
    }
    if (next.cert.equals(current.cert) && next.key.equals(current.key)) return false;
    try {
      server.setSecureContext({ cert: next.cert, key: next.key });
    } catch {
      log.warn('webhook certificate reload failed; keeping the current one', { code: 'cert_invalid' });
      return false;
    }
    current = next;
    log.info('webhook certificate reloaded');
    return true;
  };
  const timer =
    options.certReloadMs > 0 ? setInterval(() => void reloadCertificate(), options.certReloadMs) : undefined;
  timer?.unref();

  return {
    port: (server.address() as AddressInfo).port,
    reloadCertificate,
    close: () =>
      new Promise<void>((resolve) => {
        if (timer !== undefined) clearInterval(timer);
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

function handle(req: IncomingMessage, res: ServerResponse, config: InjectorConfig, metrics: InjectorMetrics): void {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) return send(res, 200, { status: 'ok' });
  if (path !== '/mutate') return send(res, 404, { error: 'not_found' });
  if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' });

  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      refused = true;
      send(res, 413, { error: 'payload_too_large' }, true);
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => res.destroy());
  req.on('end', () => {
    if (refused) return;
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      log.warn('admission review refused', { code: 'parse_error' });
      return send(res, 400, { error: 'parse_error' });
    }
    const result = review(body, config);
    if (!result.ok) {
      log.warn('admission review refused', { code: result.reason });
      return send(res, 400, { error: result.reason });
    }
    metrics.reviewed(result.outcome);
    const line = { uid: result.review.response.uid, outcome: result.outcome };
    if (result.outcome === 'denied') log.warn('admission review denied', line);
    else log.info('admission review', line);
    send(res, 200, result.review);
  });
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}
