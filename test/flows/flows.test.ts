/**
 * The flows, in-process: the features as the server assembles them (services.ts), a fake editor
 * that records and answers as Neovim does, and a fake coordinator session scripted per test. What
 * goes over stdio and into real editors is tested elsewhere; here each flow's logic, in milliseconds.
 */
import { writeFileSync } from 'node:fs';
import { CancellationTokenSource } from 'vscode-languageserver';
import { describe, expect, it } from 'vitest';
import { EDITORS, startFlows } from '../helpers/flows.js';
import { approval, taskEvent } from '../helpers/fakeSession.js';
import { FEATURE } from '../../src/wire/features.js';

const CODE = 'def total(xs):\n    return sum(xs)\n';
const SELECTION = { start: { line: 0, character: 0 }, end: { line: 1, character: 18 } };

describe('an ask', () => {
  it('sends the question with the selection, streams the answer, and opens the answer document', async () => {
    const { editor, session, services, file } = startFlows();
    const code = file('total.py');
    editor.open(code.uri, CODE);
    const result = await services.asks.ask({ question: 'What does it do?', uri: code.uri, range: SELECTION }, { partialResultToken: 'pieces' });

    // With a partial-result token the answer goes out in pieces only.
    expect(result.answer).toBe('');
    expect(session.asks[0]!.context.document?.selection).toEqual(SELECTION);
    expect(session.asks[0]!.context.document?.content).toContain('return sum(xs)');
    // The pieces reached the editor as partial results, in order.
    const pieces = editor.recorded.filter((entry) => entry.kind === 'progress' && (entry.params as { token: string }).token === 'pieces');
    expect(pieces.map((entry) => (entry.params as { value: { answer: string } }).value.answer).join('')).toBe('The answer to «What does it do?».');
    expect(editor.text(await editor.shown())).toContain('The answer to «What does it do?».');
    await editor.until(() => editor.messages().find((message) => message === 'answered «What does it do?»: answer opened'), 'the one-line message');
  });

  it('follows up in its conversation, with the answer appended to the open answer document', async () => {
    const { editor, session, services, file } = startFlows();
    const code = file('total.py');
    editor.open(code.uri, CODE);
    const first = await services.asks.ask({ question: 'What does it do?', uri: code.uri, range: SELECTION });
    const document = await editor.shown();

    // The user writes the follow-up below the document's last line and runs "Buckley: follow up".
    editor.type(document, `${editor.text(document)}And for an empty list?\n`);
    expect(services.asks.followUp({ uri: document })).toEqual({ started: true, conversation: first.conversation });
    await editor.until(() => editor.text(document)?.includes('The answer to «And for an empty list?».'), 'the follow-up appended');
    expect(session.asks[1]!.conversation).toBe(session.asks[0]!.conversation);
    expect(session.asks[1]!.question).toBe('And for an empty list?');
  });

  it('says what failed, in one line, when the coordinator cannot answer', async () => {
    const { editor, session, services } = startFlows();
    session.answer = async () => ({ status: 'failed', failure: { message: 'the agent exited with code 3', summary: 'the agent exited: see log' } });
    services.asks.askInBackground({ question: 'Why?' });
    await editor.until(() => editor.messages().find((message) => message === 'could not answer: the agent exited: see log'), 'the failure');
  });

  it("ends the editor's request as LSP says: a failure one error with its summary, a cancellation RequestCancelled", async () => {
    const { session, services } = startFlows();
    session.answer = async () => ({ status: 'failed', failure: { message: 'the agent exited with code 3', summary: 'the agent exited: see log' } });
    await expect(services.asks.ask({ question: 'Why?' })).rejects.toMatchObject({ code: -32803, message: 'Buckley could not answer: the agent exited with code 3', data: { summary: 'the agent exited: see log' } });
    session.answer = (call) => new Promise((resolve) => (call.signal.aborted ? resolve({ status: 'cancelled' }) : call.signal.addEventListener('abort', () => resolve({ status: 'cancelled' }))));
    const source = new CancellationTokenSource();
    const asked = services.asks.ask({ question: 'Why not?' }, { token: source.token });
    source.cancel();
    await expect(asked).rejects.toMatchObject({ code: -32800, message: 'the ask was cancelled' });
  });
});

describe('a task', () => {
  it('reports its progress and ends with exactly one final state', async () => {
    const { editor, services } = startFlows();
    const { taskId } = services.tasks.start({ task: 'Write tests' });
    const final = await editor.until(
      () => (editor.notifications('$/buckley/taskProgress') as { taskId: string; status: string }[]).find((state) => state.taskId === taskId && state.status === 'completed'),
      'the task completed',
    );
    expect(final).toMatchObject({ progress: 100, message: 'Done' });
    const finals = (editor.notifications('$/buckley/taskProgress') as { status: string }[]).filter((state) => ['completed', 'failed', 'cancelled'].includes(state.status));
    expect(finals).toHaveLength(1);
    expect(services.tasks.running()).toEqual([]);
  });

  it('is cancelled from the editor: the call is aborted and the task ends cancelled', async () => {
    const { editor, session, services } = startFlows();
    session.task = (call) => new Promise((resolve) => call.signal.addEventListener('abort', () => resolve({ status: 'cancelled' })));
    const { taskId } = services.tasks.start({ task: 'Refactor everything' });
    await editor.until(() => session.tasks.length === 1 || undefined, 'the task started');
    expect(services.tasks.cancel(taskId)).toBe(true);
    await editor.until(() => editor.messages().includes('cancelled «Refactor everything»'), 'the cancellation');
    expect(session.tasks[0]!.signal.aborted).toBe(true);
  });
});

describe('buckley.edit', () => {
  const INSTRUCTION = { instruction: 'say what it does', range: SELECTION };

  it("goes as a task where the coordinator edits through its agent's reviewed writes", async () => {
    const { session, services, file, editor } = startFlows();
    const code = file('total.py');
    editor.open(code.uri, CODE);
    expect(await services.edits.edit({ ...INSTRUCTION, uri: code.uri })).toMatchObject({ taskId: expect.any(String) });
    await editor.until(() => session.tasks.length === 1 || undefined, 'the task');
    expect(session.tasks[0]!.intent).toBe('edit');
  });

  it('is proposed by a coordinator that proposes edits itself, reviewed, and applied once approved', async () => {
    const { session, services, file, editor } = startFlows();
    session.features = [FEATURE.proposesEdits, FEATURE.streamTask];
    const code = file('total.py');
    editor.open(code.uri, CODE);
    editor.respond('buckley/approveTool', () => ({ approved: true }));
    const at = { line: 0, character: 0 };
    session.proposal = async () => ({ status: 'completed', proposal: { plan_id: 'p', task_id: '', summary: 'a comment', edits: [{ uri: code.uri, edits: [{ uri: code.uri, range: { start: at, end: at }, new_text: '# Sums xs.\n' }], summary: '', title: 'Say it', rank: 1 }] } });
    expect(await services.edits.edit({ ...INSTRUCTION, uri: code.uri })).toEqual({ proposed: 1, applied: [code.uri] });
    expect(editor.text(code.uri)).toBe(`# Sums xs.\n${CODE}`);
    expect(session.tasks).toEqual([]);
  });

  it("says why it failed where the coordinator could not propose, and ends the editor's request with the reason", async () => {
    const { session, services, file, editor } = startFlows();
    session.features = [FEATURE.proposesEdits];
    const code = file('total.py');
    editor.open(code.uri, CODE);
    session.proposal = async () => ({ status: 'failed', failure: { message: 'the planner crashed', summary: 'the planner crashed: see its log' } });
    await expect(services.edits.edit({ ...INSTRUCTION, uri: code.uri })).rejects.toMatchObject({ message: 'Buckley could not propose the edit: the planner crashed' });
    expect(editor.messages()).toContain('edit failed: the planner crashed: see its log');
  });
});

/** A task whose agent asks to run `rm -rf build` (destructive: never approved without the user), then ends. */
function taskAskingApproval(flows: ReturnType<typeof startFlows>) {
  flows.session.task = async (call) => {
    const decision = await flows.session.awaitApproval(call, approval({ execution_id: 'exec-1', tool: 'Run rm -rf build', kind: 'execute', parameters: { command: 'rm -rf build' }, risk: 'high' }));
    return { status: 'completed', answer: decision.approved ? 'Removed it.' : 'Left it.' };
  };
}

describe('an approval', () => {
  it('is asked with buckley/approveTool where the editor opted in', async () => {
    const flows = startFlows({ capabilities: EDITORS.optedIn });
    flows.editor.respond('buckley/approveTool', () => ({ approved: true }));
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up' });
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: true });
    expect(flows.editor.requests('buckley/approveTool')[0]).toMatchObject({ executionId: 'exec-1', tool: 'Run rm -rf build', risk: 'destructive' });
    expect(flows.editor.requests('window/showMessageRequest')).toEqual([]);
  });

  it('is asked with a prompt where the editor has prompts, and the choice is the decision', async () => {
    const flows = startFlows({ capabilities: EDITORS.prompts });
    flows.editor.respond('window/showMessageRequest', () => ({ title: 'Deny' }));
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up' });
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: false });
    const [prompt] = flows.editor.requests('window/showMessageRequest') as { message: string; actions: { title: string }[] }[];
    expect(prompt!.message).toContain('rm -rf build');
    // Destructive: no "Approve & trust".
    expect(prompt!.actions.map((action) => action.title)).toEqual(['Approve', 'Deny']);
  });

  it('falls back from buckley/approveTool to the prompt when the editor does not know the method', async () => {
    const flows = startFlows({ capabilities: { ...EDITORS.prompts, experimental: { buckley: { approveTool: true } } } });
    flows.editor.respond('window/showMessageRequest', () => ({ title: 'Approve' }));
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up' });
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: true });
    expect(flows.editor.requests('buckley/approveTool')).toHaveLength(1);
  });

  it('is a diagnostic with code actions where the editor has no prompts, and goes away once decided', async () => {
    const flows = startFlows({ capabilities: EDITORS.codeActions });
    const code = flows.file('build.py');
    flows.editor.open(code.uri, CODE);
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up', uri: code.uri, range: SELECTION });
    const [diagnostic] = await flows.editor.until(() => flows.editor.diagnosticsOf.get(code.uri)?.length ? flows.editor.diagnosticsOf.get(code.uri) : undefined, 'the diagnostic');
    expect(diagnostic).toMatchObject({ code: 'approval', data: { executionId: 'exec-1' }, source: 'buckley' });
    expect(flows.editor.messages()).toContain('build.py:1: approve or deny Run rm -rf build');
    expect(flows.services.approvals.commands().map((command) => command.title)).toEqual(expect.arrayContaining([expect.stringMatching(/^Buckley: approve/), expect.stringMatching(/^Buckley: deny/)]));

    expect(flows.services.approvals.decide('exec-1', true)).toBe(true);
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: true });
    expect(flows.editor.diagnosticsOf.get(code.uri)).toEqual([]);
  });

  it("says in one line what to do and the call's key facts first, the agent's words after them, cut at a word", async () => {
    const flows = startFlows({ capabilities: { ...EDITORS.codeActions, experimental: { buckley: { taskProgress: true } } } });
    const code = flows.file('package.json');
    flows.editor.open(code.uri, '{}\n', 'json');
    const title = 'Modifying critical configuration file to add the new dependency';
    flows.session.task = async (call) => {
      await flows.session.awaitApproval(call, approval({ execution_id: 'exec-2', tool: title, kind: 'edit', locations: [code.path], risk: 'medium' }));
      return { status: 'completed', answer: '' };
    };
    flows.services.tasks.start({ task: 'Add the dependency', uri: code.uri, range: SELECTION });
    await flows.editor.until(() => flows.editor.messages().includes('package.json:1: approve or deny edit package.json:…'), 'the message');
    const waiting = (flows.editor.notifications('$/buckley/taskProgress') as { status: string; message: string }[]).find((state) => state.status === 'awaiting_approval');
    expect(waiting?.message).toMatch(/^Waiting for your approval: edit package\.json \(medium\) — use the code action .*: Modifying critical/);
    flows.services.approvals.decide('exec-2', false);
  });

  it('runs a task under the auto-approval it started with: raised meanwhile (as a project settings file its agent wrote could), it still asks; lowered, it asks at once', async () => {
    const flows = startFlows({ capabilities: EDITORS.optedIn });
    flows.editor.respond('buckley/approveTool', () => ({ approved: false }));
    const edit = (id: string, risk: string) => approval({ execution_id: id, tool: 'Edit total.py', kind: 'edit', parameters: { path: 'total.py' }, risk });
    const asked = () => (flows.editor.requests('buckley/approveTool') as { executionId: string }[]).map((request) => request.executionId);
    const runTask = async (title: string, during: () => void, request: ReturnType<typeof approval>) => {
      flows.session.task = async (call) => {
        during();
        await flows.session.awaitApproval(call, request);
        return { status: 'completed', answer: '' };
      };
      flows.services.tasks.start({ task: title });
      return flows.editor.until(() => flows.session.decisions.get(request.execution_id), 'the decision');
    };
    expect(flows.config.approvals.autoApprove).toBe('low');
    // Raised while the task runs: its medium-risk edit is put to the user still.
    expect(await runTask('Tidy', () => (flows.config.approvals.autoApprove = 'high'), edit('raised', 'medium'))).toMatchObject({ approved: false });
    expect(asked()).toEqual(['raised']);
    // A task started after the raise runs under it.
    expect(await runTask('Tidy again', () => undefined, edit('after', 'medium'))).toMatchObject({ approved: true });
    expect(asked()).toEqual(['raised']);
    // Lowered while a task runs: at once.
    expect(await runTask('Tidy once more', () => (flows.config.approvals.autoApprove = 'none'), edit('lowered', 'low'))).toMatchObject({ approved: false });
    expect(asked()).toEqual(['raised', 'lowered']);
  });

  it('is denied by policy where the editor can be asked no way at all', async () => {
    const flows = startFlows({ capabilities: {} });
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up' });
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: false, reason: expect.stringContaining('the editor cannot be asked') });
  });

  it('is denied at its deadline when the editor never answers, and the prompt is withdrawn', async () => {
    const flows = startFlows({ capabilities: EDITORS.prompts, settings: { approvals: { timeoutMs: 300 } } });
    flows.editor.respond('window/showMessageRequest', () => new Promise(() => undefined));
    taskAskingApproval(flows);
    flows.services.tasks.start({ task: 'Clean up' });
    await flows.editor.until(() => flows.session.decisions.get('exec-1'), 'the decision');
    expect(flows.session.decisions.get('exec-1')).toMatchObject({ approved: false, reason: expect.stringContaining('no answer within') });
    await flows.editor.until(() => flows.editor.messages().find((message) => message.startsWith('denied Run rm -rf build: no answer in')), 'the timeout said');
  });
});

describe("an agent's write", () => {
  it('is made in the open buffer, listed in the review, and undone by "undo the task\'s edits"', async () => {
    const flows = startFlows();
    const { editor, session, services } = flows;
    const code = flows.file('total.py');
    writeFileSync(code.path, CODE);
    editor.open(code.uri, CODE);
    const changed = CODE.replace('sum(xs)', 'sum(xs) if xs else 0');
    session.task = async (call) => {
      const outcome = await call.files!.write({ path: code.path, base: CODE, content: changed });
      expect(outcome).toEqual({ open: true, applied: true, message: '' });
      call.onEvent?.(taskEvent({ file_changed: { path: code.path, before: CODE, after: changed, in_editor: true, unasked: false } }));
      return { status: 'completed', answer: 'Handled the empty list.' };
    };
    services.tasks.start({ task: 'Handle the empty list', uri: code.uri, range: SELECTION });
    await editor.until(() => editor.text(code.uri) === changed, 'the write in the buffer');
    expect(editor.text(await editor.shown())).toMatch(/Files it changed[\s\S]*total\.py/);
    expect(services.taskEdits.undoable(code.path)).toHaveLength(1);

    const undone = await services.tasks.undoEdits();
    expect(undone).toEqual({ undone: [code.path], kept: [] });
    expect(editor.text(code.uri)).toBe(CODE);
    expect(editor.messages()).toContain('undid the edits of «Handle the empty list»');
  });

  it('keeps what the user changed on the same lines since: the undo says so and leaves the buffer', async () => {
    const flows = startFlows();
    const { editor, session, services } = flows;
    const code = flows.file('total.py');
    editor.open(code.uri, CODE);
    const changed = CODE.replace('sum(xs)', 'sum(xs) if xs else 0');
    session.task = async (call) => {
      await call.files!.write({ path: code.path, base: CODE, content: changed });
      call.onEvent?.(taskEvent({ file_changed: { path: code.path, before: CODE, after: changed, in_editor: true, unasked: false } }));
      return { status: 'completed', answer: '' };
    };
    services.tasks.start({ task: 'Handle the empty list' });
    await editor.until(() => editor.text(code.uri) === changed, 'the write in the buffer');
    await editor.until(() => services.tasks.running().length === 0 || undefined, 'the task ended');
    const mine = changed.replace('else 0', 'else None');
    editor.type(code.uri, mine);
    const undone = await services.tasks.undoEdits();
    expect(undone.undone).toEqual([]);
    expect(undone.kept).toEqual([{ path: code.path, why: expect.stringContaining('changed the same lines') }]);
    expect(editor.text(code.uri)).toBe(mine);
  });
});
