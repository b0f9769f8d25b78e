/**
 * Review per change after a task, over stdio: each change the task made to a file is marked with
 * a diagnostic on its lines, with code actions to keep or undo it (or all of the task's); an undo
 * lands in the open buffer (or on disk), carried over the user's edits; the marks follow the
 * user's typing. The scripted agent's WRITE changes two lines far apart: two changes.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { editorWithBuffers, openIn, type } from '../helpers/buffers.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { REPO } from '../helpers/paths.js';

const start = startingClients();
const workspaces: string[] = [];
afterEach(() => {
  for (const dir of workspaces.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workspace(): { root: string; file: string; original: string; changed: string } {
  const root = mkdtempSync(join(tmpdir(), 'buckley-review-'));
  workspaces.push(root);
  const file = join(root, 'retry.ts');
  copyFileSync(`${REPO}fixtures/workspace/retry.ts`, file);
  const original = readFileSync(file, 'utf8');
  const changed = original.replace('tries = 3', 'tries = 5').replace('return 2 ** attempt * 100;', 'return 2 ** attempt * 200;');
  expect(changed).not.toBe(original);
  return { root, file, original, changed };
}

/** Runs the task that writes `content` to `file`, to its end. */
async function write(client: TestClient, file: string, content: string): Promise<void> {
  const query = `WRITE ${file} ${JSON.stringify(content)}`;
  const answers = () => client.all('window/logMessage').filter((p) => p.message.startsWith(`Buckley's answer to "WRITE`));
  const before = answers().length;
  await client.request('buckley/executeTask', { task: query });
  // This task's answer: the ones of earlier tasks came before it.
  await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "WRITE`) && answers().indexOf(p) >= before);
}

/** How many times the server has published diagnostics for `uri`. */
const published = (client: TestClient, uri: string) => client.all('textDocument/publishDiagnostics').filter((p) => p.uri === uri);

/** The server's diagnostics for `uri` once it has published `count` of them, in a publication after the `after`th. */
async function marks(client: TestClient, uri: string, count: number, after = 0): Promise<any[]> {
  const found = await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === count && published(client, uri).indexOf(p) >= after && published(client, uri).at(-1) === p);
  return found.diagnostics;
}

/** Runs a code action's command as the editor does. */
const run = (client: TestClient, command: { command: string; arguments?: unknown[] }) => client.request('workspace/executeCommand', { command: command.command, arguments: command.arguments });

async function actionsAt(client: TestClient, uri: string, line: number): Promise<any[]> {
  const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line, character: 0 }, end: { line, character: 0 } }, context: { diagnostics: [] } });
  // Commands, or code actions carrying one.
  return actions.map((action: any) => (typeof action.command === 'string' ? action : action.command));
}

const lineOf = (text: string, needle: string) => text.split('\n').findIndex((line) => line.includes(needle));

describe('review per change', () => {
  it('marks each change in the open buffer; undo one, keep the other, each with its own code action', async () => {
    const { root, file, original, changed } = workspace();
    const session = await editorWithBuffers(start, root, () => true);
    const uri = await openIn(session, file, original);
    await write(session.client, file, changed);
    expect(session.buffers.get(uri)!.getText()).toBe(changed);

    const [tries, backoff] = await marks(session.client, uri, 2);
    expect(tries).toMatchObject({ severity: 3, source: 'buckley', range: { start: { line: lineOf(changed, 'tries = 5') } } });
    expect(tries.message).toMatch(/^changed by «WRITE .*» \(\+1 −1\): keep or undo it with the code actions "Buckley: keep this change" \/ "Buckley: undo this change"$/);
    expect(backoff.range.start.line).toBe(lineOf(changed, '* 200'));

    // The user types a line at the top: the marks move with it.
    const before = published(session.client, uri).length;
    await type(session, uri, { line: 0, character: 0 }, '// mine\n');
    const moved = await marks(session.client, uri, 2, before);
    expect(moved.map((mark) => mark.range.start.line)).toEqual([tries.range.start.line + 1, backoff.range.start.line + 1]);

    const offered = await actionsAt(session.client, uri, moved[1].range.start.line);
    expect(offered.map((command) => command.title).filter((title: string) => / change/.test(title))).toEqual([
      'Buckley: keep this change (+1 −1)',
      'Buckley: undo this change (+1 −1)',
      expect.stringMatching(/^Buckley: keep all changes of «WRITE /),
      expect.stringMatching(/^Buckley: undo all changes of «WRITE /),
    ]);
    const undo = offered.find((command) => command.title === 'Buckley: undo this change (+1 −1)');
    expect(await run(session.client, undo)).toEqual({ undone: 1, kept: [] });
    // That change only, in the buffer (an edit the user can undo), the user's line kept.
    expect(session.buffers.get(uri)!.getText()).toBe(`// mine\n${original.replace('tries = 3', 'tries = 5')}`);
    const [left] = await marks(session.client, uri, 1);
    expect(left.range.start.line).toBe(moved[0].range.start.line);

    const keep = (await actionsAt(session.client, uri, left.range.start.line)).find((command) => command.title === 'Buckley: keep this change (+1 −1)');
    expect(await run(session.client, keep)).toEqual({ kept: 1 });
    await marks(session.client, uri, 0);
    expect(session.buffers.get(uri)!.getText()).toBe(`// mine\n${original.replace('tries = 3', 'tries = 5')}`);
    // Nothing left under review there.
    expect((await actionsAt(session.client, uri, left.range.start.line)).filter((command) => / change/.test(command.title))).toEqual([]);
  });

  it('marks a file not open too; opened, undo all of the task takes it back; a change whose lines the user edited since is kept, and said why', async () => {
    const { root, file, original, changed } = workspace();
    const session = await editorWithBuffers(start, root, () => true);
    await write(session.client, file, changed);
    expect(readFileSync(file, 'utf8')).toBe(changed);
    const uri = pathToFileURL(file).href;
    await marks(session.client, uri, 2);
    // The user opens it: the code actions are there.
    expect(await openIn(session, file, changed)).toBe(uri);
    const all = (await actionsAt(session.client, uri, lineOf(changed, 'tries = 5'))).find((command) => command.title.startsWith('Buckley: undo all changes of'));
    expect(await run(session.client, all)).toEqual({ undone: 2, kept: [] });
    expect(session.buffers.get(uri)!.getText()).toBe(original);
    await marks(session.client, uri, 0);

    // Again, and the user edits a changed line before undoing it: refused, in words.
    await write(session.client, file, changed);
    expect(session.buffers.get(uri)!.getText()).toBe(changed);
    const line = lineOf(changed, 'tries = 5');
    const typed = published(session.client, uri).length;
    await type(session, uri, { line, character: 0 }, '/* mine */ ');
    const [mark] = (await marks(session.client, uri, 2, typed)).filter((diagnostic) => diagnostic.range.start.line === line);
    const undo = (await actionsAt(session.client, uri, mark.range.start.line)).find((command) => command.title === 'Buckley: undo this change (+1 −1)');
    expect(await run(session.client, undo)).toEqual({ undone: 0, kept: [{ path: file, why: 'the user changed the same lines in the editor since; the buffer was left as the user has it' }] });
    expect(session.buffers.get(uri)!.getText()).toContain('/* mine */ export async function withRetry');
  });

  it("tells the agent what the user undid with the task's next turn: a follow-up in the task's answer document runs as a task in its conversation", async () => {
    const { root, file, original, changed } = workspace();
    const session = await editorWithBuffers(start, root, () => true);
    const uri = await openIn(session, file, original);
    await write(session.client, file, changed);
    const [, backoff] = await marks(session.client, uri, 2);
    const undo = (await actionsAt(session.client, uri, backoff.range.start.line)).find((command) => command.title === 'Buckley: undo this change (+1 −1)');
    expect(await run(session.client, undo)).toEqual({ undone: 1, kept: [] });

    // The task is a conversation, its answer document a place to follow it up.
    const [task] = (await session.client.request('buckley/status', {})).conversations;
    expect(task).toMatchObject({ title: expect.stringMatching(/^WRITE /), turns: 1, document: expect.stringMatching(/^file:/) });
    const document = () => session.buffers.get(task.document)?.getText() ?? readFileSync(fileURLToPath(task.document), 'utf8');
    expect(document()).toContain('*Follow up: write your question below this line');
    const followUp = async (question: string) => {
      expect(await run(session.client, { command: 'buckley.followUp', arguments: [{ conversation: task.id, question }] })).toEqual({ started: true, conversation: task.id });
      return (await session.client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${question}"`))).message as string;
    };
    const told = await followUp('ECHO PROMPT once');
    // In the task's agent session (its second turn), told after the question.
    expect(told).toMatch(/turn 2 of session/);
    expect(told).toContain('Since your last turn, the user undid these changes of yours');
    const line = lineOf(original, 'return 2 ** attempt * 100;') + 1;
    // That change alone: the other one stays.
    expect(told.split('\n').filter((text) => text.startsWith('- `retry.ts`'))).toEqual([`- \`retry.ts\` line ${line} (+1 −1): back to ${JSON.stringify(original.split('\n')[line - 1]!.trim())}`]);
    // Appended to the task's document (said once it is there).
    await session.client.waitFor('window/showMessage', (p) => p.message.startsWith('done «ECHO PROMPT once»'));
    expect(document()).toMatch(/## ECHO PROMPT once[\s\S]*turn 2 of session/);
    // Told once.
    expect(await followUp('ECHO PROMPT twice')).not.toContain('the user undid');

    // "Undo the task's edits": the rest of it, told as all of the file.
    expect(await run(session.client, { command: 'buckley.undoTaskEdits', arguments: [] })).toMatchObject({ undone: [file] });
    expect(session.buffers.get(uri)!.getText()).toBe(original);
    // A turn that does not complete (cancelled here) leaves it to be told with the next one.
    expect(await run(session.client, { command: 'buckley.followUp', arguments: [{ conversation: task.id, question: 'HANG on' }] })).toEqual({ started: true, conversation: task.id });
    await session.client.waitFor('window/logMessage', (p) => /task .* started: "HANG on"/.test(p.message));
    expect(await run(session.client, { command: 'buckley.cancelTask', arguments: [] })).toMatchObject({ cancelled: true });
    await session.client.waitFor('window/showMessage', (p) => p.message.startsWith('cancelled «HANG on»'));
    expect(await followUp('ECHO PROMPT thrice')).toMatch(/- `retry.ts`: all your changes to it, back to what it was before «WRITE /);
  });

  it("marks two tasks' changes to one file apart: each undone with its own task's code action, the other task's change kept", async () => {
    const { root, file, original } = workspace();
    const session = await editorWithBuffers(start, root, () => true);
    const uri = await openIn(session, file, original);
    await write(session.client, file, original.replace('tries = 3', 'tries = 5'));
    await marks(session.client, uri, 1);
    const replace = `REPLACE ${file} ${JSON.stringify('* 100;')} ${JSON.stringify('* 300;')}`;
    await session.client.request('buckley/executeTask', { task: replace });
    await session.client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "REPLACE'));
    const both = original.replace('tries = 3', 'tries = 5').replace('2 ** attempt * 100;', '2 ** attempt * 300;');
    expect(session.buffers.get(uri)!.getText()).toBe(both);
    const [first, second] = await marks(session.client, uri, 2);
    expect(first.message).toMatch(/^changed by «WRITE /);
    expect(second.message).toMatch(/^changed by «REPLACE /);
    // Each line offers its own task's change only.
    const titles = async (line: number) => (await actionsAt(session.client, uri, line)).map((command) => command.title).filter((title: string) => / change/.test(title));
    expect(await titles(first.range.start.line)).toEqual(['Buckley: keep this change (+1 −1)', 'Buckley: undo this change (+1 −1)', expect.stringMatching(/^Buckley: keep all changes of «WRITE /), expect.stringMatching(/^Buckley: undo all changes of «WRITE /)]);
    expect(await titles(second.range.start.line)).toEqual(['Buckley: keep this change (+1 −1)', 'Buckley: undo this change (+1 −1)', expect.stringMatching(/^Buckley: keep all changes of «REPLACE /), expect.stringMatching(/^Buckley: undo all changes of «REPLACE /)]);

    // The first task's change undone: the second task's stays, and so does its mark.
    const undoFirst = (await actionsAt(session.client, uri, first.range.start.line)).find((command) => command.title === 'Buckley: undo this change (+1 −1)');
    expect(await run(session.client, undoFirst)).toEqual({ undone: 1, kept: [] });
    expect(session.buffers.get(uri)!.getText()).toBe(original.replace('2 ** attempt * 100;', '2 ** attempt * 300;'));
    const [left] = await marks(session.client, uri, 1);
    expect(left.message).toMatch(/^changed by «REPLACE /);
    const undoSecond = (await actionsAt(session.client, uri, left.range.start.line)).find((command) => command.title === 'Buckley: undo this change (+1 −1)');
    expect(await run(session.client, undoSecond)).toEqual({ undone: 1, kept: [] });
    expect(session.buffers.get(uri)!.getText()).toBe(original);
    await marks(session.client, uri, 0);
  });

  it("says which later task's change stands in the way of undoing an earlier task's change of the same lines", async () => {
    const { root, file, original } = workspace();
    const session = await editorWithBuffers(start, root, () => true);
    const uri = await openIn(session, file, original);
    await write(session.client, file, original.replace('tries = 3', 'tries = 5'));
    await marks(session.client, uri, 1);
    const replace = `REPLACE ${file} ${JSON.stringify('tries = 5')} ${JSON.stringify('tries = 7')}`;
    await session.client.request('buckley/executeTask', { task: replace });
    await session.client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "REPLACE'));
    const line = lineOf(original, 'tries = 3');
    await marks(session.client, uri, 2);
    const undoAll = async (task: string) => (await actionsAt(session.client, uri, line)).find((command) => command.title.startsWith(`Buckley: undo all changes of «${task}`));
    expect(await run(session.client, await undoAll('WRITE'))).toEqual({ undone: 0, kept: [{ path: file, why: expect.stringMatching(/^the same lines were changed since, by the task «REPLACE .*» too: undo its change there first$/) }] });
    expect(session.buffers.get(uri)!.getText()).toBe(original.replace('tries = 3', 'tries = 7'));
    // In that order, both go.
    expect(await run(session.client, await undoAll('REPLACE'))).toEqual({ undone: 1, kept: [] });
    expect(await run(session.client, await undoAll('WRITE'))).toEqual({ undone: 1, kept: [] });
    expect(session.buffers.get(uri)!.getText()).toBe(original);
  });
});
