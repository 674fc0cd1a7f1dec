import type { GuardOptions } from '../cache/guarded-write.ts';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { RedisClient } from '../cache/redis.ts';
import type { Settings } from '../config/settings.ts';
import { StartupError } from '../errors.ts';
import { log } from '../telemetry/log.ts';
import { Approvals } from './approvals.ts';
import { RedisApprovalStore } from './redis-store.ts';
import { subkey } from './request-state.ts';
import { MemoryApprovalStore } from './store.ts';

/** Shortest approval or webhook key accepted: 256 bits. */
const MIN_SECRET_BYTES = 32;

export interface OpenedApprovals {
  readonly approvals: Approvals;
  readonly stateKey: Buffer;
  readonly sessionKey: Buffer;
  readonly csrfKey: Buffer;
}

/**
 * The approval flow the settings ask for: records in Redis when a client is
 * given (shared by replicas), else in process; keys from the approval
 * secret file (replicas must share it) or random for this process; the
 * webhook when configured. `pageUrl` is read per approval, once the page
 * listens.
 */
export async function openApprovals(
  settings: Pick<
    Settings,
    | 'approvalPublicUrl'
    | 'approvalSecretFile'
    | 'approvalWebhookSecretFile'
    | 'approvalWebhookUrl'
    | 'host'
    | 'policyDomain'
  >,
  shared: { readonly client: RedisClient; readonly guard: GuardOptions } | undefined,
  pageUrl: () => string,
): Promise<OpenedApprovals> {
  const client = shared?.client;
  const secret =
    settings.approvalSecretFile === undefined
      ? randomBytes(32)
      : await readSecret(settings.approvalSecretFile, 'TOOLGATE_APPROVAL_SECRET_FILE');
  if (settings.approvalSecretFile === undefined && client !== undefined) {
    log.warn(
      'approval request states and page sessions are signed with a key of this process only; set the same TOOLGATE_APPROVAL_SECRET_FILE on every replica',
      { setting: 'TOOLGATE_APPROVAL_SECRET_FILE' },
    );
  }
  const webhook =
    settings.approvalWebhookUrl === undefined || settings.approvalWebhookSecretFile === undefined
      ? undefined
      : {
          url: settings.approvalWebhookUrl,
          secret: await readSecret(settings.approvalWebhookSecretFile, 'TOOLGATE_APPROVAL_WEBHOOK_SECRET_FILE'),
        };
  const store =
    shared === undefined
      ? new MemoryApprovalStore()
      : new RedisApprovalStore({ client: shared.client, domain: settings.policyDomain, guard: shared.guard });
  return {
    approvals: new Approvals({ store, pageUrl, ...(webhook !== undefined && { webhook }) }),
    stateKey: subkey(secret, 'state'),
    sessionKey: subkey(secret, 'session'),
    csrfKey: subkey(secret, 'csrf'),
  };
}

async function readSecret(file: string, setting: string): Promise<Buffer> {
  const bytes = await readFile(file).catch(() => {
    throw new StartupError(`invalid setting ${setting}: cannot read the file`);
  });
  const trimmed = Buffer.from(bytes.toString('utf8').trim());
  if (trimmed.length < MIN_SECRET_BYTES)
    throw new StartupError(`invalid setting ${setting}: the key must be at least ${MIN_SECRET_BYTES} bytes`);
  return trimmed;
}

/** The page's base URL: the public one when set, else the listener's own address. */
export function pageBaseUrl(
  settings: Pick<
    Settings,
    | 'approvalPublicUrl'
    | 'approvalSecretFile'
    | 'approvalWebhookSecretFile'
    | 'approvalWebhookUrl'
    | 'host'
    | 'policyDomain'
  >,
  boundPort: number | undefined,
): string {
  if (settings.approvalPublicUrl !== undefined) return settings.approvalPublicUrl;
  // Without a page, an approval is still named, as a URN, for the CLI and gRPC to decide.
  if (boundPort === undefined) return 'urn:toolgate';
  const host =
    settings.host === '0.0.0.0' || settings.host === '::' || settings.host === ''
      ? 'localhost'
      : settings.host.includes(':')
        ? `[${settings.host}]`
        : settings.host;
  return `http://${host}:${boundPort}`;
}
