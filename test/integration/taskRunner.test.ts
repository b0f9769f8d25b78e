/**
 * The coordinator's runner (src/coordinator/tasks/runner.ts) against the in-memory engine: a
 * task taken from the queue whose request is not in the store (lost, or never stored whole)
 * ends as failed in words its caller reads at once — never left for the caller's deadline; and so
 * does one whose run fails by a fault of ours before its agent is asked.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memoryEngine } from '../../src/coordinator/tasks/memory.js';
import { TaskRunner, UNREADABLE } from '../../src/coordinator/tasks/runner.js';
import { RootLogger } from '../../src/logger.js';
import { AcpDriver } from '../../src/coordinator/agents/acp.js';
import type { StoredRecord, TaskEngine } from '../../src/coordinator/tasks/store.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

/** The task's events until its final record. */
async function eventsOf(engine: TaskEngine, taskId: string): Promise<StoredRecord['event'][]> {
  const controller = new AbortController();
  const events: StoredRecord['event'][] = [];
  for await (const record of engine.log.follow(taskId, 0, controller.signal)) {
    if (record.event) events.push(record.event);
    if (record.final) break;
  }
  controller.abort();
  return events;
}

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

  it('ends a task whose run fails by a fault of ours before its agent is asked (a request it cannot make a turn of) as failed, in words — never left running', async () => {
    const engine = memoryEngine();
    const logged: string[] = [];
    const logger = new RootLogger('info', (_level, line) => logged.push(line));
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger, clientVersion: 'test' });
    const runner = new TaskRunner({ engine, driver, logger, replica: 'r1' });
    const working = runner.start(1);
    const taskId = randomUUID();
    // A selection whose ends are missing, as another program could have stored it: no turn is made of it.
    const context = { document: { uri: 'file:///tmp/a.ts', language_id: 'typescript', content: 'a', version: 1, workspace_root: '', metadata: {}, selection: { start: null, end: null } }, related_documents: [], symbols: [], metadata: {} } as never;
    await engine.log.append(taskId, { created: { owner: 'someone', spec: { agentId: 'someone', query: 'what is this?', intent: 'task', sessionKey: 's', servesBuffers: false, context } } });
    await engine.states.put(taskId, { owner: 'someone', status: 'queued', title: 'what is this?', seq: 1, updatedAt: Date.now(), pending: [] });
    await engine.queue.enqueue(taskId);
    const events = await eventsOf(engine, taskId);
    expect(events.at(-1)).toEqual({ status: 'failed', message: expect.stringMatching(/^r1 could not run the task, a fault of buckley-lsp \(.+\): its log says more; run it again, and report it if it comes back$/) });
    expect((await engine.states.get(taskId))?.status).toBe('failed');
    expect(logged.join('\n')).toMatch(new RegExp(`task ${taskId}: TypeError`));
    await working.stop();
    await driver.close();
    await engine.close();
  });
});
