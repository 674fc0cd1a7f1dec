/** Raised by `withDeadline` when Redis did not answer in time. */
export class RedisDeadlineError extends Error {
  override readonly name = 'RedisDeadlineError';
}

/**
 * Bounds one Redis command (or a few in sequence) by the command timeout.
 * ioredis' own `commandTimeout` is per node and attempt: Cluster retries
 * CLUSTERDOWN and closed connections, and Sentinel re-resolves the master,
 * outside it. The request path never waits longer than this. Kept apart
 * from redis.ts, so a module needing only the deadline does not load ioredis:
 * a policy sidecar without Redis must not hold it.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new RedisDeadlineError('redis command deadline passed')), ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
