import { taskEvent, type TaskEvent } from '../telemetry/channels.ts';
import { log } from '../telemetry/log.ts';
import type { AnswerHold } from '../upstream/forward.ts';
import { createdTask } from './task-result.ts';
import type { TaskOwner, TaskStore } from './task-store.ts';

/**
 * Holds a call's answer until the task it created is bound to its creator,
 * so no request about the task can arrive before the binding. A binding that
 * cannot be written does not stop the answer: the task exists upstream and
 * the call must not be repeated, so the caller gets its id, and toolgate then
 * refuses every request about that task (fail closed) and counts it
 * `unbound`.
 */
export function taskHold(store: TaskStore, owner: TaskOwner, maxBytes: number): AnswerHold {
  return {
    maxBytes,
    async until(answer) {
      const task = createdTask(answer);
      if (task === undefined) return;
      try {
        const r = await store.bind(task.taskId, owner, task.ttlMs);
        tell(r);
        if (r === 'taken')
          log.warn('a task id the upstream returned is already bound to another principal; it stays theirs');
      } catch (err) {
        tell('unbound');
        log.warn('task binding not recorded; requests about this task will be refused', {
          error: (err as { name?: string }).name ?? 'unknown',
        });
      }
    },
  };
}

function tell(event: TaskEvent['event']): void {
  if (taskEvent.hasSubscribers) taskEvent.publish({ event });
}
