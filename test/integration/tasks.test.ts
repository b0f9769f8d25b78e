/**
 * Agent tasks over stdio with the scripted ACP agent: the progress an editor sees, coalescing of
 * floods, concurrent tasks, every cancellation path, agent crashes, timeouts, and a Buckley-like
 * coordinator whose events carry only messages.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CLIENT_PAYLOADS } from '../helpers/paths.js';
import { startFakeBuckley } from '../helpers/coordinators.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { linesRange } from '../helpers/text.js';

const start = startingClients();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** A captured editor payload, opted in to `$/buckley/taskProgress`. */
const optedIn = (clientName = 'neovim-0.10.4') => {
  const payload = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${clientName}.json`, 'utf8'));
  return { client: clientName, initialize: { capabilities: { ...payload.capabilities, experimental: { buckley: { taskProgress: true } } } } };
};

/** The $/buckley/taskProgress notifications of one task, in order. */
const taskUpdates = (client: TestClient, taskId: string) => client.all('$/buckley/taskProgress').filter((p) => p.taskId === taskId);

/** The $/progress values of the work-done progress titled `title`. */
function progressOf(client: TestClient, title: string): any[] {
  const begin = client.all('$/progress').find((p) => p.value.kind === 'begin' && p.value.title === title);
  if (!begin) return [];
  return client.all('$/progress').filter((p) => p.token === begin.token).map((p) => p.value);
}

const ended = (client: TestClient, taskId: string) =>
  client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['completed', 'failed', 'cancelled'].includes(p.status));

/** Resolves with the end of the work-done progress titled `title`. */
async function progressEnded(client: TestClient, title: string): Promise<any> {
  const begin = await client.waitFor('$/progress', (p) => p.value.kind === 'begin' && p.value.title === title);
  return (await client.waitFor('$/progress', (p) => p.token === begin.token && p.value.kind === 'end')).value;
}

/** Statuses start pending, end with exactly one final state, and nothing follows it. */
function expectWellFormed(updates: any[], final: string): void {
  expect(updates[0].status).toBe('pending');
  const finals = updates.filter((u) => ['completed', 'failed', 'cancelled'].includes(u.status));
  expect(finals).toHaveLength(1);
  expect(updates.at(-1)).toBe(finals[0]);
  expect(finals[0].status).toBe(final);
}

describe('tasks', () => {
  it('ends its progress with what the turn cost where the agent reports it', async () => {
    const client = await start(optedIn());
    const { taskId } = await client.request('buckley/executeTask', { task: 'COSTLY task' });
    await ended(client, taskId);
    expect((await progressEnded(client, 'Buckley: COSTLY task')).message).toBe('Done ($0.0123 · context 42k of 200k tokens)');
  });

  it("ends its progress on the answer's words: a piece of the answer does not bring the last step back", async () => {
    const client = await start(optedIn());
    const { taskId } = await client.request('buckley/executeTask', { task: 'SLOW PLAN for the last words' });
    await ended(client, taskId);
    await progressEnded(client, 'Buckley: SLOW PLAN for the last words');
    const reports = progressOf(client, 'Buckley: SLOW PLAN for the last words').filter((value) => value.kind === 'report');
    expect(reports.map((value) => value.message)).toContain('Step 3 of 3: Run the tests');
    expect(reports.at(-1).message).toBe('All 3 steps done for: SLOW PLAN for the last words');
  });

  it('reports a planned task to an opted-in client: progress from the plan, then the answer', async () => {
    const client = await start(optedIn());
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const { taskId } = await client.request('buckley/executeTask', {
      task: 'PLAN the refactoring',
      context: { activeFile: uri, selection: linesRange(text, 'export function backoff', 'return 2 ** attempt') },
    });
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);
    const final = await ended(client, taskId);
    expect(final).toMatchObject({ taskId, status: 'completed', progress: 100, message: 'Done' });
    // The plan's last state reaches the editor whole, however the updates were batched.
    expect(final.plan).toEqual(['Read the code', 'Think it over', 'Write the answer'].map((content) => ({ content, status: 'completed' })));

    const updates = taskUpdates(client, taskId);
    expectWellFormed(updates, 'completed');
    // Percentages come from the agent's plan (0, 1, 2, 3 of 3 steps done), never invented.
    for (const update of updates) if (update.progress !== undefined) expect([0, 33, 67, 100]).toContain(update.progress);

    expect(await progressEnded(client, 'Buckley: PLAN the refactoring')).toEqual({ kind: 'end', message: 'Done (3 of 3 steps)' });
    expect(client.all('window/workDoneProgress/create')).toHaveLength(1);
    // The token is created before any progress is reported on it (Zed ignores unknown tokens).
    const { token } = client.all('window/workDoneProgress/create')[0];
    const createdAt = client.received.findIndex((r) => r.method === 'window/workDoneProgress/create');
    const firstUse = client.received.findIndex((r) => r.method === '$/progress' && r.params.token === token);
    expect(createdAt).toBeLessThan(firstUse);
    const progress = progressOf(client, 'Buckley: PLAN the refactoring');
    expect(progress[0]).toEqual({ kind: 'begin', title: 'Buckley: PLAN the refactoring', cancellable: true });
    expect(progress.slice(1, -1).every((value) => value.kind === 'report' && value.cancellable === true)).toBe(true);
    expect(progress.at(-1)).toEqual({ kind: 'end', message: 'Done (3 of 3 steps)' });

    await client.waitFor('window/logMessage', (p) => p.message.includes('Planned answer to: PLAN the refactoring'));
  });

  it("shows the plan an agent keeps as a to-do tool (opencode's todowrite), as its plan: a step dropped is no step", async () => {
    const client = await start(optedIn());
    const { taskId } = await client.request('buckley/executeTask', { task: 'TODOS for the release' });
    const final = await ended(client, taskId);
    expect(final.status).toBe('completed');
    expect(final.plan).toEqual([
      { content: 'Read the code', status: 'completed' },
      { content: 'Change it', status: 'completed' },
      { content: 'Run the tests', status: 'in_progress' },
    ]);
    expect(await progressEnded(client, 'Buckley: TODOS for the release')).toEqual({ kind: 'end', message: 'Done (2 of 3 steps)' });
  });

  it('without window.workDoneProgress (eglot 1.9): a message at the start, one naming the final state, a log line per step', async () => {
    const client = await start({ client: 'eglot-1.9' });
    await client.request('workspace/executeCommand', { command: 'buckley.runTask', arguments: [{ task: 'SLOW PLAN the release' }] });
    await client.waitFor('window/showMessage', (p) => p.message === 'working on «SLOW PLAN the release»…');
    await client.waitFor('window/logMessage', (p) => p.message === 'Buckley: SLOW PLAN the release: Step 2 of 3: Change it');
    await client.waitFor('window/logMessage', (p) => p.message === 'Buckley: SLOW PLAN the release: Done (2 of 3 steps)');
    await client.waitFor('window/showMessage', (p) => p.message === 'done «SLOW PLAN the release»: answer in the log');
    expect(client.all('$/progress')).toEqual([]);
    // Each step once, however often the agent repeats it.
    const steps = client.all('window/logMessage').map((p) => p.message).filter((line) => line.startsWith('Buckley: SLOW PLAN the release: '));
    expect(steps).toEqual([...new Set(steps)]);
    expect(steps.at(-1)).toBe('Buckley: SLOW PLAN the release: Done (2 of 3 steps)');

    const { taskId } = await client.request('workspace/executeCommand', { command: 'buckley.runTask', arguments: [{ task: 'HANG about' }] });
    await client.waitFor('window/showMessage', (p) => p.message === 'working on «HANG about»…');
    await client.request('workspace/executeCommand', { command: 'buckley.cancelTask', arguments: [{ taskId }] });
    await client.waitFor('window/showMessage', (p) => p.message === 'cancelled «HANG about»');

    await client.request('workspace/executeCommand', { command: 'buckley.runTask', arguments: [{ task: 'CRASH NOW, please' }] });
    await client.waitFor('window/showMessage', (p) => p.type === 1 && p.message.startsWith('task failed: scripted-agent.mjs exited'));
    // Logged once as the agent's death and once as the task's failure, not again by every place that heard of it.
    await client.waitFor('window/logMessage', (p) => p.message.includes('("CRASH NOW, please") failed: scripted-agent.mjs exited'));
    // The agent's death is logged by the coordinator's worker thread: it may come after the task's end.
    await client.waitFor('window/logMessage', (p) => p.message.includes('exited with code 3') && !p.message.includes('failed: scripted-agent.mjs') && !p.message.startsWith('Buckley: CRASH NOW'));
    const logged = client.all('window/logMessage').filter((p) => p.message.includes('exited with code 3') && !p.message.startsWith('Buckley: CRASH NOW'));
    expect(logged).toHaveLength(2);
  });

  it('coalesces a flood of 10,000 agent updates into a bounded number of notifications, keeping the final state', async () => {
    const client = await start(optedIn());
    const started = Date.now();
    const { taskId } = await client.request('buckley/executeTask', { task: 'FLOOD 10000' });
    const final = await ended(client, taskId);
    const seconds = (Date.now() - started) / 1000;

    expect(final.status).toBe('completed');
    expect(final.toolExecutions).toEqual([{ id: 'flood', tool: 'Step 10000 of 10000', status: 'completed', kind: 'think' }]);
    const updates = taskUpdates(client, taskId);
    expectWellFormed(updates, 'completed');
    // At most 10 a second (plus the first and the final one), however fast the agent talks.
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 2);
    const reports = progressOf(client, 'Buckley: FLOOD 10000');
    expect(reports.length).toBeLessThanOrEqual(Math.ceil(seconds * 10) + 2);
    const answer = await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "FLOOD 10000"'));
    expect(answer.message).toMatch(/ 9999 10000\. Last update sent at \d+\.$/);
  });

  it('keeps two concurrent tasks apart, each with its own id and progress', async () => {
    const client = await start(optedIn());
    const first = await client.request('buckley/executeTask', { task: 'SLOW PLAN the first' });
    const second = await client.request('buckley/executeTask', { task: 'PLAN the second' });
    expect(first.taskId).not.toBe(second.taskId);
    await Promise.all([ended(client, first.taskId), ended(client, second.taskId)]);
    expectWellFormed(taskUpdates(client, first.taskId), 'completed');
    expectWellFormed(taskUpdates(client, second.taskId), 'completed');
    // Each its own plan's last state: the slow one's agent never marked its last step done.
    expect(await progressEnded(client, 'Buckley: SLOW PLAN the first')).toEqual({ kind: 'end', message: 'Done (2 of 3 steps)' });
    expect(await progressEnded(client, 'Buckley: PLAN the second')).toEqual({ kind: 'end', message: 'Done (3 of 3 steps)' });
    const tokens = new Set(client.all('window/workDoneProgress/create').map((p) => p.token));
    expect(tokens.size).toBe(2);
    await client.waitFor('window/logMessage', (p) => p.message.includes('All 3 steps done for: SLOW PLAN the first'));
    await client.waitFor('window/logMessage', (p) => p.message.includes('Planned answer to: PLAN the second'));
  });

  describe('cancellation ends the task as cancelled and the agent gets session/cancel', () => {
    const debug = { log: { level: 'debug' } };
    async function hangingTask(client: TestClient, task = 'HANG until cancelled') {
      const { taskId } = await client.request('buckley/executeTask', { task });
      await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'in_progress');
      return taskId;
    }
    async function expectCancelled(client: TestClient, taskId: string) {
      expect(await ended(client, taskId)).toMatchObject({ status: 'cancelled', message: 'Cancelled' });
      expectWellFormed(taskUpdates(client, taskId), 'cancelled');
      await client.waitFor('window/logMessage', (p) => p.message.includes('scripted-agent: session/cancel for'));
    }

    it('from the editor\'s progress UI (window/workDoneProgress/cancel)', async () => {
      const client = await start({ ...optedIn('zed-1.6.0.from-source'), initialize: { ...optedIn('zed-1.6.0.from-source').initialize, initializationOptions: debug } });
      const taskId = await hangingTask(client);
      const { token } = await client.waitFor('window/workDoneProgress/create');
      await client.notify('window/workDoneProgress/cancel', { token });
      await expectCancelled(client, taskId);
      expect(await progressEnded(client, 'Buckley: HANG until cancelled')).toEqual({ kind: 'end', message: 'Cancelled' });
    });

    it('with buckley/cancelTask, and cancelling again is harmless', async () => {
      const client = await start({ ...optedIn(), initialize: { ...optedIn().initialize, initializationOptions: debug } });
      const taskId = await hangingTask(client);
      expect(await client.request('buckley/status', {})).toMatchObject({ tasks: [{ taskId, status: 'in_progress' }] });
      expect(await client.request('buckley/cancelTask', { taskId })).toEqual({ cancelled: true });
      await expectCancelled(client, taskId);
      expect(await client.request('buckley/cancelTask', { taskId })).toEqual({ cancelled: false });
      expect((await client.request('buckley/status', {})).tasks).toEqual([]);
    });

    it('with the buckley.cancelTask command without arguments (the newest task), as a Helix binding would', async () => {
      const client = await start({ ...optedIn(), initialize: { ...optedIn().initialize, initializationOptions: debug } });
      const taskId = await hangingTask(client);
      expect(await client.request('workspace/executeCommand', { command: 'buckley.cancelTask', arguments: [] })).toEqual({ taskId, cancelled: true });
      await expectCancelled(client, taskId);
    });

    it('with the "cancel task" code action, offered anywhere while a task runs', async () => {
      const client = await start({ ...optedIn(), initialize: { ...optedIn().initialize, initializationOptions: debug } });
      const { uri } = await client.openFixture('workspace/retry.ts');
      const taskId = await hangingTask(client, 'HANG: write the tests');
      const here = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
      const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: here, context: { diagnostics: [] } });
      expect(actions.map((action: any) => action.title)).toEqual(['Buckley: cancel task «HANG: write the tests»']);
      await client.request('workspace/executeCommand', actions[0].command);
      await expectCancelled(client, taskId);
    });
  });

  it('ends as failed with a clear message when the agent process dies mid-task', async () => {
    const client = await start(optedIn());
    const { taskId } = await client.request('buckley/executeTask', { task: 'CRASH NOW' });
    const final = await ended(client, taskId);
    expect(final.status).toBe('failed');
    expect(final.message).toMatch(/^scripted-agent\.mjs exited with code 3/);
    await client.waitFor('window/showMessage', (p) => p.type === 1 && p.message.startsWith('task failed: scripted-agent.mjs exited'));
    // The next task starts the agent again.
    const next = await client.request('buckley/executeTask', { task: 'PLAN again' });
    expect(await ended(client, next.taskId)).toMatchObject({ status: 'completed' });
  });

  it('times out as failed, naming the setting', async () => {
    const client = await start({ ...optedIn(), initialize: { ...optedIn().initialize, initializationOptions: { task: { timeoutMs: 700 } } } });
    const { taskId } = await client.request('buckley/executeTask', { task: 'HANG forever' });
    expect(await ended(client, taskId)).toMatchObject({ status: 'failed', message: 'timed out after 0.7 s (setting buckley.task.timeoutMs)' });
  });

  it('is not held up by an editor that never answers window/workDoneProgress/create', async () => {
    let silent = false;
    const client = await start({ ...optedIn(), handlers: { 'window/workDoneProgress/create': () => (silent ? new Promise(() => {}) : null) } });
    // The agent started first: the task below ends well within the token request's deadline (2 s), however loaded the machine.
    await client.request('buckley/ask', { question: 'INSTANT to start the agent' });
    silent = true;
    const { taskId } = await client.request('buckley/executeTask', { task: 'PLAN despite a silent editor' });
    expect(await ended(client, taskId)).toMatchObject({ status: 'completed' });
    // After the token request's deadline it fell back to the log; the task was over by then, so
    // no stale "started…" message either.
    await client.waitFor('window/logMessage', (p) => p.message === 'Buckley: PLAN despite a silent editor: Done (3 of 3 steps)');
    expect(client.all('window/showMessage').filter((p) => p.message === 'working on «PLAN despite a silent editor»…')).toEqual([]);
  });

  it('rejects bad executeTask params with InvalidParams', async () => {
    const client = await start();
    await expect(client.request('buckley/executeTask', { task: '   ' })).rejects.toMatchObject({ code: -32602, message: 'params.task: task must not be empty' });
    await expect(client.request('buckley/cancelTask', {})).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('params.taskId') });
  });

  describe('against a Buckley-like coordinator (message-only events)', () => {
    it('shows each status line as progress, completes when the stream ends, and keeps the lines as its report, not an answer', async () => {
      const buckley = await startFakeBuckley();
      stops.push(() => buckley.stop());
      const client = await start({ ...optedIn(), env: { BUCKLEY_COORDINATOR: buckley.address } });
      const { uri, text } = await client.openFixture('workspace/retry.ts');
      const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
      const { taskId } = await client.request('buckley/executeTask', { task: 'tidy the imports', context: { activeFile: uri, selection } });
      const final = await ended(client, taskId);
      expect(final).toMatchObject({ status: 'completed' });
      // Each line Buckley sends is progress text (lines closer than the coalescing interval replace each other).
      const lines = ['Planning task…', 'Executing plan…', '✅ Task completed'];
      const shown = taskUpdates(client, taskId).slice(1, -1).map((u) => u.message);
      expect(shown.length).toBeGreaterThan(0);
      expect(shown.every((line) => lines.includes(line))).toBe(true);
      expect(await progressEnded(client, 'Buckley: tidy the imports')).toEqual({ kind: 'end', message: 'Done' });
      const progress = progressOf(client, 'Buckley: tidy the imports');
      expect(progress.some((value) => value.percentage !== undefined && value.percentage !== 100)).toBe(false);
      // Buckley reads only the query: the task, the file and the selected code are in it.
      const request = (await buckley.waitFor('StreamTask')).request;
      expect(request).toMatchObject({ task_id: taskId, agent_id: expect.stringMatching(/^buckley-lsp-[0-9a-f]{8}$/) });
      expect(request.query).toMatch(/^tidy the imports\n/);
      expect(request.query).toContain('(lines 17-18 of retry.ts)');
      expect(request.query).toContain('export function backoff(attempt: number): number {');
      // Its lines are its report, said as such: no answer was sent.
      const report = await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s report on "tidy the imports"'));
      expect(report.message).toContain('The coordinator sent no answer, only a report of what it did:\n\n> Planning task…\n> Executing plan…\n> ✅ Task completed');
    });

    it('ends the task as failed when the stream breaks', async () => {
      const buckley = await startFakeBuckley({ taskMessages: ['Planning task…'], taskError: 'planner crashed' });
      stops.push(() => buckley.stop());
      const client = await start({ ...optedIn(), env: { BUCKLEY_COORDINATOR: buckley.address } });
      const { taskId } = await client.request('buckley/executeTask', { task: 'tidy the imports' });
      expect(await ended(client, taskId)).toMatchObject({ status: 'failed', message: 'planner crashed' });
    });
  });
});
