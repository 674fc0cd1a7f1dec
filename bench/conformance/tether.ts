/**
 * Preloaded (`node --import`) into every child the conformance harness starts,
 * whose stdin is a pipe from the harness. When the harness dies, even by
 * SIGKILL, the pipe closes and the child stops too, so no run leaves orphans.
 * SIGTERM rather than exit, so a child with a graceful shutdown still runs it.
 * Started any other way (stdin a file or terminal), the child is left alone.
 */

import net from 'node:net';

const stdin: unknown = process.stdin;
if (stdin instanceof net.Socket && !process.stdin.isTTY) {
  const parentGone = (): void => {
    process.kill(process.pid, 'SIGTERM');
  };
  stdin.once('end', parentGone);
  stdin.once('error', parentGone);
  stdin.resume();
  // The pipe must not keep a finished child (the conformance CLI) alive.
  stdin.unref();
}
