import type { Pool } from 'undici';

/**
 * Waits until the upstream answers anything over HTTP. OPTIONS on the MCP
 * path is used because it has no side effects and, unlike GET, cannot open a
 * long-lived SSE stream on a stateless server.
 */
export async function waitForUpstream(pool: Pool, path: string, signal: AbortSignal, intervalMs = 250): Promise<void> {
  while (!signal.aborted) {
    try {
      const res = await pool.request({ path, method: 'OPTIONS', signal, headersTimeout: 2000 });
      await res.body.dump();
      return;
    } catch {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, intervalMs);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}
