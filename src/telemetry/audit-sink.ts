import type { Writable } from 'node:stream';
import { log } from './log.ts';

/**
 * A bounded, asynchronous line writer. `write` only queues (the request path
 * never waits for I/O); queued lines go out in one batch per event-loop turn,
 * and while the output applies backpressure the queue fills to its bound,
 * after which lines are refused so the caller can count them as dropped.
 */
export interface AuditSink {
  /** False when the line was dropped (queue full or output failed). */
  write(line: string): boolean;
  /** Writes what is queued, then ends the output if the sink owns it. */
  close(): Promise<void>;
}

export function createAuditSink(out: Writable, maxQueued: number, owned: boolean): AuditSink {
  let queue: string[] = [];
  let scheduled = false;
  let blocked = false;
  let failed = false;

  out.on('error', (err: NodeJS.ErrnoException) => {
    if (failed) return;
    failed = true;
    queue = [];
    log.error('audit output failed; further audit events are dropped', { code: err.code ?? err.name });
  });

  const flush = () => {
    scheduled = false;
    if (queue.length === 0 || failed) return;
    const batch = `${queue.join('\n')}\n`;
    queue = [];
    if (!out.write(batch)) {
      blocked = true;
      out.once('drain', () => {
        blocked = false;
        schedule();
      });
    }
  };
  const schedule = () => {
    if (scheduled || blocked || queue.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  };

  return {
    write(line) {
      if (failed || queue.length >= maxQueued) return false;
      queue.push(line);
      schedule();
      return true;
    },
    async close() {
      if (blocked && !failed) {
        await new Promise((resolve) => {
          out.once('drain', resolve);
          out.once('error', resolve);
        });
      }
      flush();
      if (!owned || failed) return;
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}
