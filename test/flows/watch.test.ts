/**
 * "Buckley: watch a task" in-process: a colleague's task chosen among those running (the editor's
 * own left out), followed with its progress — its approvals shown as its owner's to decide — to
 * its answer document; stopped from the progress without touching the task; said in words where
 * there is nothing to watch, or nothing to choose with.
 */
import { describe, expect, it } from 'vitest';
import { EDITORS, startFlows } from '../helpers/flows.js';
import { approval, taskEvent } from '../helpers/fakeSession.js';

const running = (taskId: string, owner: string, title: string, status = 'running') => ({ task_id: taskId, owner, title, status, replica: 'one', sequence: 1 });

describe('watching a task', () => {
  it("offers the team's running tasks, follows the one chosen, its approvals its owner's, and opens its answer", async () => {
    const { editor, session, services } = startFlows();
    session.teamTasks = [running('t-alice', 'alice', 'Fix the parser'), running('t-done', 'bob', 'Old one', 'completed')];
    editor.respond('window/showMessageRequest', (params) => (params as { actions: { title: string }[] }).actions[0]);
    session.watching = async (call) => {
      call.onEvent?.(taskEvent({ status: 'awaiting_approval', message: 'Waiting for approval: Edit parser.ts', approval: approval({ execution_id: 't-alice.1', tool: 'Edit parser.ts' }) }));
      await editor.until(() => editor.progressValues().some((value) => value.message === "Waiting for alice's approval: Edit parser.ts") || undefined, 'the approval shown as alice\'s');
      call.onDelta?.('Fixed the parser.');
      return { status: 'completed', answer: 'Fixed the parser.' };
    };
    expect(await services.watch.watch(undefined)).toEqual({ taskId: 't-alice', watching: true });
    // Only the running one was offered.
    expect(editor.requests('window/showMessageRequest')).toEqual([expect.objectContaining({ message: 'Watch which task?', actions: [{ title: 'alice: Fix the parser (running)' }] })]);
    const uri = await editor.shown();
    expect(editor.text(uri)).toContain('Fixed the parser.');
    const progress = editor.progressValues();
    expect(progress[0]).toMatchObject({ kind: 'begin', title: 'Buckley: watching «Fix the parser» (alice)' });
    expect(progress.at(-1)).toMatchObject({ kind: 'end', message: 'Done' });
    // Nothing was decided from here: the approval is alice's.
    expect(session.decisions.size).toBe(0);
  });

  it('leaves out the tasks this editor runs, and says when nothing else runs', async () => {
    const { editor, session, services } = startFlows();
    session.task = (call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve({ status: 'cancelled' })));
    const { taskId } = services.tasks.start({ task: 'Mine' });
    session.teamTasks = [running(taskId, 'me', 'Mine')];
    expect(await services.watch.watch(undefined)).toMatchObject({ taskId: null, watching: false });
    expect(editor.messages()).toContain('no task of your team runs on the coordinator now');
    services.tasks.cancel(taskId);
  });

  it('names the running tasks in the log where the editor cannot ask which', async () => {
    const { editor, session, services } = startFlows({ capabilities: EDITORS.codeActions });
    session.teamTasks = [running('t-1', 'alice', 'Fix the parser'), running('t-2', 'bob', 'Write the docs')];
    expect(await services.watch.watch(undefined)).toEqual({
      taskId: null,
      watching: false,
      running: [
        { taskId: 't-1', owner: 'alice', title: 'Fix the parser', status: 'running' },
        { taskId: 't-2', owner: 'bob', title: 'Write the docs', status: 'running' },
      ],
    });
    expect(editor.messages()).toContain('2 tasks running: see the log to watch one');
    expect(session.watched).toEqual([]);
  });

  it('says there is no such task, and stops watching (not the task) when the user cancels the progress', async () => {
    const { editor, session, services } = startFlows();
    session.teamTasks = [running('t-1', 'alice', 'Fix the parser')];
    expect(await services.watch.watch('t-nope')).toMatchObject({ taskId: null, watching: false });
    expect(editor.messages()).toContain('no task t-nope on the coordinator');
    session.watching = (call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve({ status: 'cancelled' })));
    await services.watch.watch('t-1');
    await editor.until(() => session.watched.length === 1 || undefined, 'the watch started');
    services.watch.cancelAll();
    await editor.until(() => editor.progressValues().find((value) => value.kind === 'end'), 'the watch ended');
    expect(editor.progressValues().at(-1)).toMatchObject({ kind: 'end', message: 'Stopped watching' });
    expect(session.tasks).toEqual([]);
  });
});
