/**
 * The coordinator's runner (src/coordinator/tasks/runner.ts) against the in-memory engine: a
 * task taken from the queue whose request is not in the store (lost, or never stored whole)
 * ends as failed in words its caller reads at once — never left for the caller's deadline.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryEngine } from '../../src/coordinator/tasks/memory.js';
import { TaskRunner, UNREADABLE } from '../../src/coordinator/tasks/runner.js';
import { RootLogger } from '../../src/logger.js';

describe("the coordinator's runner", () => {
  it('ends a queued task whose request cannot be read as failed, in words, and says so in the log', async () => {
    const engine = memoryEngine();
    const logged: string[] = [];
    const runner = new TaskRunner({ engine, driver: undefined, logger: new RootLogger('info', (_level, line) => logged.push(line)), replica: 'r1' });
    const working = runner.start(1);
    const taskId = randomUUID();
    await engine.queue.enqueue(taskId);
    const controller = new AbortController();
    let final: { status?: string; message?: string } | undefined;
    for await (const record of engine.log.follow(taskId, 0, controller.signal)) {
      if (record.event) final = record.event as typeof final;
      if (record.final) break;
    }
    expect(final).toEqual({ status: 'failed', message: UNREADABLE });
    expect(logged.join('\n')).toContain(`task ${taskId}: taken from the queue, but its request is not in the store: ended as failed`);
    controller.abort();
    await working.stop();
    await engine.close();
  });
});
