/**
 * The agent writes through the editor: ACP fs/write_text_file in a task becomes a change the user
 * approves with it in view, then an edit of the open buffer (only the lines that change, the
 * user's own edits kept) or, for a file not open, a write to disk; never in an ask; a denial or a
 * clash with the user's edits reaches the agent as an error it reads. Over real stdio, with the
 * embedded coordinator and our scripted agent's REPLACE (read, replace, write back).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { editorWithBuffers, openIn, type } from '../helpers/buffers.js';
import { sseServer } from '../helpers/openai.js';
import { startFakeBuckley } from '../helpers/coordinators.js';
import { REPO } from '../helpers/paths.js';

const start = startingClients();
const workspaces: string[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const dir of workspaces.splice(0)) rmSync(dir, { recursive: true, force: true });
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** A workspace of its own holding a copy of retry.ts: writes land in it, not in the fixtures. */
function workspace(): { root: string; file: string; original: string } {
  const root = mkdtempSync(join(tmpdir(), 'buckley-writes-'));
  workspaces.push(root);
  const file = join(root, 'retry.ts');
  copyFileSync(`${REPO}fixtures/workspace/retry.ts`, file);
  const original = readFileSync(file, 'utf8');
  // The agent's REPLACE must change something: a no-op write is no write.
  expect(original).toContain('tries = 3');
  return { root, file, original };
}

const editor = (root: string, approve: (request: any) => boolean | Promise<boolean>, workspaceCapabilities?: object, initializationOptions?: object) =>
  editorWithBuffers(start, root, approve, workspaceCapabilities, initializationOptions);

/** buckley.edit on the three lines of `backoff` in `text`, as told. */
async function editBackoff(client: TestClient, uri: string, text: string, instruction: string): Promise<void> {
  const first = text.split('\n').findIndex((line) => line.startsWith('export function backoff'));
  await client.request('workspace/executeCommand', {
    command: 'buckley.edit',
    arguments: [{ instruction, uri, range: { start: { line: first, character: 0 }, end: { line: first + 3, character: 0 } } }],
  });
}

/** Runs a task to its end: the agent's answer as logged. */
async function task(client: TestClient, query: string): Promise<string> {
  await client.request('buckley/executeTask', { task: query });
  const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${query}"`));
  return logged.message;
}

const REPLACE = (file: string) => `REPLACE ${file} "tries = 3" "tries = 5"`;

describe('what the agent writes', () => {
  it('in a task, is approved with the change in view, then made in the open buffer — only the changed line, undoable — and the disk is left to the user', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    const mine = `// the user's unsaved line\n${original}`;
    const uri = await openIn(session, file, mine);

    expect(await task(session.client, REPLACE(file))).toContain(`wrote ${file}`);

    // The approval: a write of one file, +1 −1, the risk of an edit, and the diff opened beside it.
    const [approval] = session.client.all('buckley/approveTool');
    expect(approval).toMatchObject({ tool: 'Write retry.ts', title: 'Write retry.ts (+1 −1)', risk: 'medium', parameters: { path: file, change: '+1 −1 lines' }, change: { linesAdded: 1, linesRemoved: 1 } });
    expect(approval.change.diff).toContain('-export async function withRetry');
    const shown = session.client.all('window/showDocument').find((p) => p.uri.endsWith('.diff'));
    expect(readFileSync(fileURLToPath(shown.uri), 'utf8')).toBe(approval.change.diff);

    // One versioned edit of the one line that changed: the user's line and the rest untouched.
    expect(session.edits).toHaveLength(1);
    const [change] = session.edits[0].documentChanges;
    const line = mine.split('\n').findIndex((text) => text.includes('tries = 3'));
    expect(change.edits).toEqual([{ range: { start: { line, character: 0 }, end: { line: line + 1, character: 0 } }, newText: `${mine.split('\n')[line]!.replace('tries = 3', 'tries = 5')}\n` }]);
    expect(session.buffers.get(uri)!.getText()).toBe(mine.replace('tries = 3', 'tries = 5'));
    expect(readFileSync(file, 'utf8')).toBe(original);
    // The agent's next read sees its change.
    expect(await task(session.client, `READ ${file} ${line + 1} 1`)).toContain('tries = 5): Promise<T> {');
  });

  it('keeps what the user typed elsewhere while they decided, and refuses where they changed the same lines', async () => {
    const { root, file, original } = workspace();
    let uri = '';
    let userTypes: () => Promise<void> = async () => {};
    const session = await editor(root, async () => {
      await userTypes();
      return true;
    });
    uri = await openIn(session, file, original);

    // Elsewhere: a line at the top, typed while the prompt was open.
    userTypes = () => type(session, uri, { line: 0, character: 0 }, '// typed meanwhile\n');
    expect(await task(session.client, REPLACE(file))).toContain(`wrote ${file}`);
    expect(session.buffers.get(uri)!.getText()).toBe(`// typed meanwhile\n${original.replace('tries = 3', 'tries = 5')}`);

    // The same line: the user's edit wins, the agent is told.
    const line = session.buffers.get(uri)!.getText().split('\n').findIndex((text) => text.includes('tries = 5'));
    userTypes = () => type(session, uri, { line, character: 0 }, '/* mine */ ');
    const before = () => session.buffers.get(uri)!.getText();
    const answer = await task(session.client, `REPLACE ${file} "tries = 5" "tries = 7"`);
    expect(answer).toContain(`write failed (-32603): ${file} was not changed: the user changed the same lines in the editor since approving it`);
    expect(before()).toContain('/* mine */ ');
    expect(before()).not.toContain('tries = 7');
  });

  it("built on the disk rather than the buffer (an agent that read the file itself, as opencode does): its change lands over the user's unsaved edits, which stay; refused where they touch the same lines", async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    const mine = `// the user's unsaved line\n${original}`;
    const uri = await openIn(session, file, mine);
    // The whole file as the disk has it, the change made: WRITE sends it without reading the buffer.
    const written = original.replace('tries = 3', 'tries = 5');
    expect(await task(session.client, `WRITE ${file} ${JSON.stringify(written)}`)).toContain(`wrote ${file}`);
    expect(session.buffers.get(uri)!.getText()).toBe(mine.replace('tries = 3', 'tries = 5'));
    // Asked about as it lands: the user's line is there, as context.
    const [approval] = session.client.all('buckley/approveTool');
    expect(approval).toMatchObject({ title: 'Write retry.ts (+1 −1)' });
    expect(readFileSync(file, 'utf8')).toBe(original);
    // The user changed that very line, unsaved: the agent is told to read it again.
    const line = mine.split('\n').findIndex((text) => text.includes('tries = 3'));
    await type(session, uri, { line, character: 0 }, '/* mine */ ');
    const answer = await task(session.client, `WRITE ${file} ${JSON.stringify(original.replace('tries = 3', 'tries = 9'))}`);
    expect(answer).toContain(`write failed (-32603): ${file} was not changed: the change was made on the file as saved, and the user has unsaved edits on the same lines`);
    expect(session.buffers.get(uri)!.getText()).not.toContain('tries = 9');
  });

  it("written on disk by the agent itself and then the same through the editor (opencode's way): the buffer gets the change over the unsaved line, the disk its text back", async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    const mine = `// the user's unsaved line\n${original}`;
    const uri = await openIn(session, file, mine);
    const written = original.replace('tries = 3', 'tries = 5');
    expect(await task(session.client, `SELF WRITE ${file} ${JSON.stringify(written)}`)).toContain(`wrote ${file}, on disk and through the client`);
    expect(session.buffers.get(uri)!.getText()).toBe(mine.replace('tries = 3', 'tries = 5'));
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('denied: nothing changes and the agent reads why', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => false);
    await openIn(session, file, original);
    expect(await task(session.client, REPLACE(file))).toContain(`write failed (-32603): writing ${file} was not approved (denied, or no answer in time)`);
    expect(session.edits).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('to a file not open in the editor: on disk, after approval', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    expect(await task(session.client, REPLACE(file))).toContain(`wrote ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(original.replace('tries = 3', 'tries = 5'));
    expect(session.edits).toEqual([]);
  });

  it('shown in a tool call first (ACP diff content): approved there with the diff in view, and its write is not asked again', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    const uri = await openIn(session, file, original);
    expect(await task(session.client, `EDIT ${file} "tries = 3" "tries = 4"`)).toContain(`edited ${file}`);
    const approvals = session.client.all('buckley/approveTool');
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ tool: `Edit ${file}`, change: { linesAdded: 1, linesRemoved: 1 } });
    // The change to the whole file, not the snippet the agent showed: the real line, its number,
    // context around it, the path as the user reads it.
    const line = original.split('\n').findIndex((text) => text.includes('tries = 3'));
    const diff: string = approvals[0].change.diff;
    expect(diff).toContain('--- a/retry.ts\n+++ b/retry.ts\n');
    const from = Math.max(1, line + 1 - 3);
    expect(diff).toMatch(new RegExp(`^@@ -${from},\\d+ \\+${from},\\d+ @@$`, 'm'));
    expect(diff).toContain(`\n-${original.split('\n')[line]}\n+${original.split('\n')[line]!.replace('tries = 3', 'tries = 4')}\n`);
    expect(session.buffers.get(uri)!.getText()).toBe(original.replace('tries = 3', 'tries = 4'));
  });

  it('shown in a tool call first, asked with a prompt: the prompt says how big the change is', async () => {
    const { root, file } = workspace();
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: { rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }] },
      answerMessageRequest: (params) => params.actions.find((action: { title: string }) => action.title === 'Deny'),
    });
    expect(await task(client, `EDIT ${file} "tries = 3" "tries = 4"`)).toContain('edit declined');
    const [prompt] = client.all('window/showMessageRequest');
    expect(prompt.message).toMatch(new RegExp(`^Buckley: scripted-agent\\.mjs wants to use Edit ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\+1 −1\\) \\(risk: medium`));
  });

  it('in an editor that cannot apply edits: on disk after approval, where the buffer holds what the disk does', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true, { applyEdit: false });
    await openIn(session, file, original);
    expect(await task(session.client, REPLACE(file))).toContain(`wrote ${file}`);
    expect(readFileSync(file, 'utf8')).toBe(original.replace('tries = 3', 'tries = 5'));
    expect(session.edits).toEqual([]);

    // With unsaved edits in the buffer, the disk is not what the user approved against: refused.
    const { root: other, file: second, original: text } = workspace();
    const dirty = await editor(other, () => true, { applyEdit: false });
    await openIn(dirty, second, `// unsaved\n${text}`);
    expect(await task(dirty.client, REPLACE(second))).toContain(`write failed (-32603): ${second} was not changed: it changed on disk since the change was approved`);
    expect(readFileSync(second, 'utf8')).toBe(text);
  });

  it('outside the workspace: the read and the write are asked (the write as destructive), and it is written only if approved', async () => {
    const { root } = workspace();
    const { file: outside, original } = workspace();
    let writes = false;
    const session = await editor(root, (request) => request.tool.startsWith('Read') || writes);
    expect(await task(session.client, REPLACE(outside))).toContain(`write failed (-32603): writing ${outside} was not approved (denied, or no answer in time)`);
    expect(readFileSync(outside, 'utf8')).toBe(original);
    writes = true;
    expect(await task(session.client, `REPLACE ${outside} "tries = 3" "tries = 6"`)).toContain(`wrote ${outside}`);
    expect(readFileSync(outside, 'utf8')).toBe(original.replace('tries = 3', 'tries = 6'));
    const approvals = session.client.all('buckley/approveTool');
    // Reading outside the workspace is asked too (medium); writing there is destructive.
    expect(approvals.map((a: any) => [a.tool, a.risk])).toEqual([
      [`Read ${outside}`, 'medium'],
      [`Write ${outside}`, 'destructive'],
      [`Read ${outside}`, 'medium'],
      [`Write ${outside}`, 'destructive'],
    ]);
  });

  it('in Zed, which opens no documents, the prompt holds the diff (markdown), and Approve writes it', async () => {
    const { root, file, original } = workspace();
    const zed = JSON.parse(readFileSync(`${REPO}fixtures/clients/zed-1.6.0.from-source.json`, 'utf8'));
    const client = await start({ client: 'zed-1.6.0.from-source', initialize: { rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }], capabilities: zed.capabilities } });
    expect(await task(client, REPLACE(file))).toContain(`wrote ${file}`);
    const prompt = client.all('window/showMessageRequest').find((p) => p.message.includes('Write retry.ts'));
    expect(prompt.message).toMatch(/\n\n```diff\n--- a\/retry\.ts\n\+\+\+ b\/retry\.ts\n@@[\s\S]*-export async function withRetry<T>\(attempt: \(\) => Promise<T>, tries = 3\)[\s\S]*\n```$/);
    expect(client.all('window/showDocument')).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(original.replace('tries = 3', 'tries = 5'));
  });

  it('to an editor that never applies it: fails within its deadline, and the agent is told', async () => {
    const { root, file, original } = workspace();
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: {
        rootUri: pathToFileURL(root).href,
        workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }],
        capabilities: { workspace: { applyEdit: true }, experimental: { buckley: { taskProgress: true, approveTool: true } } },
      },
      handlers: { 'buckley/approveTool': () => ({ approved: true }), 'workspace/applyEdit': () => new Promise(() => {}) },
    });
    await client.open(file, original);
    expect(await task(client, REPLACE(file))).toContain(`write failed (-32603): ${file} was not changed: the editor did not apply it: no answer within 20000 ms`);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('never in an ask: refused without asking anyone', async () => {
    const { root, file, original } = workspace();
    const session = await editor(root, () => true);
    await openIn(session, file, original);
    const { answer } = await session.client.request('buckley/ask', { question: REPLACE(file) });
    expect(answer).toContain(`write failed (-32603): writing ${file} was refused: an ask is read-only`);
    expect(session.client.all('buckley/approveTool')).toEqual([]);
    expect(session.edits).toEqual([]);
  });

  describe('edit from a selection', () => {
    it('"# edit: …" on its first line offers "Buckley: edit «…»": the agent\'s change is previewed as a diff and applied by approving it', async () => {
      const { root, file, original } = workspace();
      const session = await editor(root, () => true);
      const text = original.replace('export async function withRetry', '// edit: say what it retries\nexport async function withRetry');
      const uri = await openIn(session, file, text);
      const lines = text.split('\n');
      const first = lines.findIndex((line) => line.startsWith('// edit:'));
      const last = lines.findIndex((line) => line === '}');
      const range = { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } };
      const actions = await session.client.request('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } });
      const edit = actions.find((action: any) => action.title === 'Buckley: edit «say what it retries»');
      expect(edit).toMatchObject({ command: 'buckley.edit', arguments: [{ instruction: 'say what it retries', uri, range }] });
      // An instruction is not a question: no ask or task «…» for that line.
      expect(actions.map((action: any) => action.title)).not.toContain('Buckley: ask «say what it retries»');

      await session.client.request('workspace/executeCommand', { command: edit.command, arguments: edit.arguments });
      const logged = await session.client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Edit: say what it retries"`));
      expect(logged.message).toContain('edited retry.ts');
      const [approval] = session.client.all('buckley/approveTool');
      expect(approval).toMatchObject({ tool: 'Write retry.ts', change: { linesAdded: 1, linesRemoved: 0 } });
      expect(approval.change.diff).toContain('+// say what it retries\n // edit: say what it retries');
      expect(session.buffers.get(uri)!.getText()).toBe(text.replace('// edit:', '// say what it retries\n// edit:'));
    });

    it('an agent that answers the edit in text (the lines in a code block, nothing written): its answer is the proposal, previewed and applied by approving it', async () => {
      const { root, file, original } = workspace();
      const session = await editor(root, () => true);
      const uri = await openIn(session, file, original);
      await editBackoff(session.client, uri, original, 'IN TEXT cap the delay');
      const logged = await session.client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Edit: IN TEXT cap the delay"`));
      expect(logged.message).toContain('The change to retry.ts was made.');
      const [approval] = session.client.all('buckley/approveTool');
      expect(approval).toMatchObject({ tool: 'Write retry.ts', change: { linesAdded: 1, linesRemoved: 0 } });
      expect(approval.change.diff).toContain('+// cap the delay\n export function backoff');
      expect(session.buffers.get(uri)!.getText()).toBe(original.replace('export function backoff', '// cap the delay\nexport function backoff'));
    });

    it('buckley.edit takes the instruction, file and lines itself, and a denied preview changes nothing', async () => {
      const { root, file, original } = workspace();
      const session = await editor(root, () => false);
      const uri = await openIn(session, file, original);
      await editBackoff(session.client, uri, original, 'cap the delay');
      const logged = await session.client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Edit: cap the delay"`));
      expect(logged.message).toContain("was not approved (denied, or no answer in time)");
      expect(session.client.all('buckley/approveTool')[0].change.diff).toContain('+// cap the delay\n export function backoff');
      expect(session.buffers.get(uri)!.getText()).toBe(original);
      await expect(session.client.request('workspace/executeCommand', { command: 'buckley.edit', arguments: [{ instruction: ' ', uri, range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } } }] })).rejects.toThrow(
        'instruction must not be empty',
      );
    });
  });

  describe('edit from a selection, by a model (OpenAI-compatible, no file tools)', () => {
    it("asks it for the new lines only, and its answer becomes the change, approved with the diff in view", async () => {
      const { root, file, original } = workspace();
      const asked: string[] = [];
      const model = await sseServer(async (_req, body) => {
        asked.push(body.messages.at(-1).content);
        return ['Capped:\n', '```ts\n', 'export function backoff(attempt: number): number {\n', '  return Math.min(2 ** attempt * 100, 10_000); // 🚀 grows fast\n', '}\n', '```\n'];
      });
      const session = await editor(root, () => true, undefined, { agent: { driver: 'openai', openai: { baseUrl: `${model.url}/v1`, model: 'test-model' } } });
      const uri = await openIn(session, file, original);
      await editBackoff(session.client, uri, original, 'cap the delay at ten seconds');
      const logged = await session.client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Edit: cap the delay at ten seconds"`));
      expect(logged.message).toContain('The change to retry.ts was made.');
      expect(asked[0]).toContain('Edit the selected code: cap the delay at ten seconds');
      expect(asked[0]).toContain('reply with the new text of the selected lines only');
      const [approval] = session.client.all('buckley/approveTool');
      expect(approval).toMatchObject({ tool: 'Write retry.ts', change: { linesAdded: 1, linesRemoved: 1 } });
      expect(session.buffers.get(uri)!.getText()).toBe(original.replace('return 2 ** attempt * 100;', 'return Math.min(2 ** attempt * 100, 10_000);'));
    });
  });

  describe("edit from a selection, with Buckley's coordinator (propose_edits)", () => {
    it('takes its proposal, shows it as a diff to approve, and applies it in the buffer', async () => {
      const buckley = await startFakeBuckley();
      stops.push(() => buckley.stop());
      const { root, file, original } = workspace();
      const session = await editor(root, () => true, undefined, { coordinator: { address: buckley.address } });
      const uri = await openIn(session, file, original);
      const first = original.split('\n').findIndex((line) => line.startsWith('export function backoff'));
      const range = { start: { line: first, character: 0 }, end: { line: first + 3, character: 0 } };
      const result = await session.client.request('workspace/executeCommand', { command: 'buckley.edit', arguments: [{ instruction: 'say what it waits', uri, range }] });
      expect(result).toEqual({ proposed: 1, applied: [uri] });
      const proposed = await buckley.waitFor('ProposeEdits');
      expect(proposed.request).toMatchObject({ instruction: 'say what it waits', apply: false, context: { document: { uri, selection: range } } });
      const [approval] = session.client.all('buckley/approveTool');
      expect(approval).toMatchObject({ tool: 'Apply the proposed edit to retry.ts', title: 'Say what it does', risk: 'medium', change: { linesAdded: 1, linesRemoved: 0 } });
      expect(session.buffers.get(uri)!.getText()).toBe(original.replace('export function backoff', '// say what it waits\nexport function backoff'));
      expect(readFileSync(file, 'utf8')).toBe(original);
    });

    /** buckley.edit on `file`, not open in the editor, with Buckley's coordinator; `approve` decides (and may change the disk meanwhile). */
    async function proposeOnDisk(file: string, root: string, approve: () => boolean) {
      const buckley = await startFakeBuckley();
      stops.push(() => buckley.stop());
      const session = await editor(root, approve, undefined, { coordinator: { address: buckley.address } });
      // Asked from another file, open; proposed for `file` (Buckley proposes edits to any file of the workspace).
      const asked = join(root, 'asked.ts');
      writeFileSync(asked, 'one\ntwo\nthree\nfour\n');
      const uri = await openIn(session, asked, 'one\ntwo\nthree\nfour\n');
      const range = { start: { line: 2, character: 0 }, end: { line: 4, character: 0 } };
      const result = await session.client.request('workspace/executeCommand', { command: 'buckley.edit', arguments: [{ instruction: `say what it waits in ${pathToFileURL(file).href}`, uri, range }] });
      return { session, result };
    }

    it('applies an approved proposal to a file not open in the editor on disk — not where the file changed on disk while the user reviewed it', async () => {
      const { root, file, original } = workspace();
      const lines = original.split('\n');
      const applied = await proposeOnDisk(file, root, () => true);
      expect(applied.result).toMatchObject({ proposed: 1, applied: [pathToFileURL(file).href] });
      expect(readFileSync(file, 'utf8')).toBe([...lines.slice(0, 2), `// say what it waits in ${pathToFileURL(file).href}`, ...lines.slice(2)].join('\n'));
      // The user (or a formatter) saved the file while the diff was in view: what was approved is not what it would do.
      const again = workspace();
      const changed = await proposeOnDisk(again.file, again.root, () => (writeFileSync(again.file, `// saved meanwhile\n${again.original}`), true));
      expect(changed.result).toMatchObject({ proposed: 1, applied: [] });
      expect(readFileSync(again.file, 'utf8')).toBe(`// saved meanwhile\n${again.original}`);
      await changed.session.client.waitFor('window/showMessage', (p) => p.message === 'retry.ts changed on disk during your review: not applied');
    });

    it('does not wait on a named pipe put where the proposal is (nor read a device without end): said, nothing written, the server goes on', async () => {
      const { root } = workspace();
      const pipe = join(root, 'pipe.ts');
      execFileSync('mkfifo', [pipe]);
      const { session, result } = await proposeOnDisk(pipe, root, () => true);
      expect(result).toMatchObject({ proposed: 1, applied: [] });
      await session.client.waitFor('window/showMessage', (p) => p.message === 'pipe.ts is a named pipe (FIFO), not a file: edit not shown');
      expect(session.client.all('buckley/approveTool')).toEqual([]);
      expect(await session.client.request('buckley/status', {})).toBeTruthy();
    });
  });

  describe('after the task', () => {
    it("lists the files it changed in its answer, and the task's undo restores the buffer and the disk", async () => {
      const { root, file: open, original } = workspace();
      const onDisk = join(root, 'other.ts');
      copyFileSync(open, onDisk);
      const session = await editor(root, () => true);
      const uri = await openIn(session, open, original);

      const first = await task(session.client, REPLACE(open));
      expect(first).toContain(
        '**Files it changed** — each change is marked in its file: keep or undo it there with the code actions "Buckley: keep this change" / "Buckley: undo this change"; undo them all with "Buckley: undo the task\'s edits" or the command `buckley.undoTaskEdits`:',
      );
      expect(first).toContain('- `retry.ts` +1 −1, in the editor, not saved yet');
      const second = await task(session.client, `REPLACE ${onDisk} "tries = 3" "tries = 9"`);
      expect(second).toContain('- `other.ts` +1 −1, on disk');

      // Offered where the task changed the file, newest first.
      const actions = await session.client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
      const offered = actions.find((action: any) => action.title.startsWith("Buckley: undo the task's edits «REPLACE"));
      const undo = { command: offered.command };
      expect(undo.command).toBe('buckley.undoTaskEdits');

      // The newest task's: the disk.
      expect(await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] })).toEqual({ undone: [onDisk], kept: [] });
      expect(readFileSync(onDisk, 'utf8')).toBe(original);
      // The first task's: the buffer, as an edit the user can undo in turn.
      expect(await session.client.request('workspace/executeCommand', { command: offered.command, arguments: offered.arguments })).toEqual({ undone: [open], kept: [] });
      expect(session.buffers.get(uri)!.getText()).toBe(original);
      await session.client.waitFor('window/showMessage', (p) => p.message.startsWith('undid the edits of «REPLACE '));
      // Nothing left to undo.
      expect(await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] })).toEqual({ undone: [], kept: [] });
    });

    it('keeps, and says so, a file whose changed lines the user has changed since', async () => {
      const { root, file, original } = workspace();
      const session = await editor(root, () => true);
      const uri = await openIn(session, file, original);
      await task(session.client, REPLACE(file));
      const line = original.split('\n').findIndex((text) => text.includes('tries = 3'));
      await type(session, uri, { line, character: 0 }, '/* mine */ ');
      const { kept } = await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] });
      expect(kept).toEqual([{ path: file, why: 'the user changed the same lines in the editor since; the buffer was left as the user has it' }]);
      expect(session.buffers.get(uri)!.getText()).toContain('/* mine */ export async function withRetry<T>(attempt: () => Promise<T>, tries = 5)');
      await session.client.waitFor('window/showMessage', (p) => p.type === 2 && p.message === 'undo: retry.ts kept — changed since (see log)');
    });
  });
});
