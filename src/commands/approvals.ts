/**
 * `toolgate approvals list | show ID | approve ID --as APPROVER | deny ID --as APPROVER`:
 * the operator's door to human approvals shared through Redis (`--redis-url`,
 * `--domain`, whose default is the sidecar's). Holding the Redis credentials is the operator's authority, so
 * no approver scope is asked; a call is still never approved by the
 * principal who made it unless its row allows self-approval. Output is JSON
 * lines with ids, the tool and digests, never argument values (only the
 * approver page shows those); an error is one line on stderr and exit status 2.
 */
import { Approvals } from '../approval/approvals.ts';
import { isApprovalId, type ApprovalRecord } from '../approval/record.ts';
import { RedisApprovalStore } from '../approval/redis-store.ts';
import { createRedisClient } from '../cache/redis.ts';
import { isPrincipalId } from '../config/policy/grant-row.ts';
import { errors } from '../errors.ts';
import { parseFlags, REDIS_FLAGS, redisTarget, whenReady } from './redis-flags.ts';

export const USAGE =
  'usage: toolgate approvals list [--limit N] | show ID | approve ID --as APPROVER | deny ID --as APPROVER' +
  ' (--redis-url URL [--domain D, default default])';

const VALUE_FLAGS = new Set([...REDIS_FLAGS, '--as', '--limit']);
const ARITY: Readonly<Record<string, number>> = { list: 0, show: 1, approve: 1, deny: 1 };
const DEFAULT_LIMIT = 100;

export interface ApprovalsIo {
  readonly env: NodeJS.ProcessEnv;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** What the operator sees of an approval: everything but the argument values. */
export function summary(r: ApprovalRecord): Record<string, unknown> {
  return {
    id: r.id,
    state: r.state,
    principal: r.principal,
    tool: r.tool,
    argumentsDigest: r.argumentsDigest,
    policyRevision: r.policyRevision,
    approverScope: r.approverScope,
    selfApproval: r.selfApproval,
    createdAt: new Date(r.createdAt).toISOString(),
    expiresAt: new Date(r.expiresAt).toISOString(),
    ...(r.decidedBy !== undefined && { decidedBy: r.decidedBy }),
  };
}

export async function run(argv: readonly string[], io: ApprovalsIo = process): Promise<number> {
  const [action, ...rest] = argv;
  if (action === undefined || !Object.hasOwn(ARITY, action)) return failure(io, USAGE);
  const read = parseFlags(
    rest,
    VALUE_FLAGS,
    new Set(),
    (name) =>
      REDIS_FLAGS.has(name) || (name === '--as' ? action === 'approve' || action === 'deny' : action === 'list'),
    USAGE,
  );
  if (!read.ok) return failure(io, read.reason);
  const { flags, positional } = read.value;
  if (positional.length !== ARITY[action]) return failure(io, USAGE);
  const id = positional[0];
  if (id !== undefined && !isApprovalId(id))
    return failure(io, 'ID must be an approval id as toolgate printed it (22 characters)');
  const as = flags.get('--as');
  if ((action === 'approve' || action === 'deny') && !isPrincipalId(as))
    return failure(io, '--as must name the approver (1-256 characters, no control characters)');
  const limit = flags.get('--limit') === undefined ? DEFAULT_LIMIT : Number(flags.get('--limit'));
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    return failure(io, '--limit must be a whole number from 1 to 10000');
  const target = redisTarget(flags, io.env);
  if (!target.ok) return failure(io, target.reason);
  if (target.value === undefined)
    return failure(io, 'approvals are shared through Redis: give --redis-url (or TOOLGATE_REDIS_URL)');
  const client = createRedisClient(target.value.redis, { name: 'toolgate-approvals-cli' });
  try {
    if (!(await whenReady(client, target.value.redis.connectTimeoutMs))) return failure(io, 'cannot reach Redis');
    const approvals = new Approvals({
      store: new RedisApprovalStore({ client, domain: target.value.domain }),
      pageUrl: () => '',
    });
    if (action === 'list') {
      for (const r of await approvals.pending(limit)) io.stdout.write(`${JSON.stringify(summary(r))}\n`);
      return 0;
    }
    if (action === 'show') {
      const r = await approvals.get(id as string);
      if (r === undefined) return failure(io, errors.approval_not_found.message);
      io.stdout.write(`${JSON.stringify(summary(r))}\n`);
      return 0;
    }
    const outcome = await approvals.decide(
      id as string,
      { id: as as string, scopes: new Set() },
      action === 'approve' ? 'approved' : 'denied',
      'cli',
      false,
    );
    if (!outcome.ok) return failure(io, `${errors[outcome.error].code}: ${errors[outcome.error].message}`);
    io.stdout.write(`${JSON.stringify(summary(outcome.record))}\n`);
    return 0;
  } catch {
    return failure(io, 'Redis refused the command or did not answer in time');
  } finally {
    client.disconnect();
  }
}

function failure(io: ApprovalsIo, reason: string): number {
  io.stderr.write(`toolgate approvals: ${reason}\n`);
  return 2;
}
