/**
 * The optional webhook: one POST per new pending approval, so teams can route
 * it to chat or paging. The body carries ids, the tool, digests and the page
 * URL, never argument values. It is signed with HMAC-SHA256 the way Stripe
 * and Slack sign theirs:
 *
 *   Toolgate-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
 *
 * so receivers can verify it and refuse replays older than a few minutes.
 */
import { createHmac } from 'node:crypto';
import { log } from '../telemetry/log.ts';
import type { ApprovalRecord } from './record.ts';

const SIGNATURE_HEADER = 'toolgate-signature';
const TIMEOUT_MS = 5000;

export interface Webhook {
  readonly url: string;
  readonly secret: Buffer;
}

function webhookBody(record: ApprovalRecord, url: string): string {
  return JSON.stringify({
    type: 'approval.pending',
    approvalId: record.id,
    principal: record.principal,
    tool: record.tool,
    argumentsDigest: record.argumentsDigest,
    policyRevision: record.policyRevision,
    approverScope: record.approverScope,
    expiresAt: new Date(record.expiresAt).toISOString(),
    url,
  });
}

export function signature(secret: Buffer, body: string, nowSeconds: number): string {
  const t = String(nowSeconds);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** Fire and forget: a slow or failing receiver never holds up the call (the URL reached the caller anyway). */
export function notify(hook: Webhook, record: ApprovalRecord, url: string): void {
  const body = webhookBody(record, url);
  fetch(hook.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [SIGNATURE_HEADER]: signature(hook.secret, body, Math.floor(Date.now() / 1000)),
    },
    body,
    signal: AbortSignal.timeout(TIMEOUT_MS),
  }).then(
    (res) => {
      void res.body?.cancel();
      if (!res.ok) log.warn('approval webhook answered with an error status', { status: res.status });
    },
    (err: unknown) => log.warn('approval webhook could not be delivered', { error: (err as Error).name }),
  );
}
