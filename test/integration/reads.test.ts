/**
 * The agent reads what the user sees: ACP fs/read_text_file through our coordinator gives the
 * editor's buffer of an open file (unsaved edits included), the disk otherwise, and outside the
 * workspace only what the turn's policy allows. Over real stdio, with the embedded coordinator
 * and with a standalone one, and our scripted agent's READ.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startCoordinatorProcess, type CoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { REPO, SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();
const RETRY = `${REPO}fixtures/workspace/retry.ts`;
const onDisk = readFileSync(RETRY, 'utf8');
/** The user's unsaved edit: in the editor's buffer, not on disk. */
const UNSAVED = '// an unsaved line, only in the editor\n';

/** A file outside the workspace, with words of its own. */
const outsideDir = mkdtempSync(join(tmpdir(), 'buckley-reads-'));
const OUTSIDE = join(outsideDir, 'notes.txt');
writeFileSync(OUTSIDE, 'outside the workspace\n');
const workspaces: string[] = [];
afterAll(() => {
  for (const dir of [outsideDir, ...workspaces]) rmSync(dir, { recursive: true, force: true });
});

/** What the agent read, from its answer ("read <path>:" and a ~~~~ fence), or its error line. */
function readOf(answer: string): string {
  const fenced = /~~~~\n([\s\S]*)\n~~~~/.exec(answer);
  if (fenced) return fenced[1]!;
  const failed = /read failed \(.*/.exec(answer);
  if (failed) return failed[0];
  throw new Error(`the agent did not say what it read: ${answer}`);
}

async function ask(client: TestClient, question: string): Promise<string> {
  const { answer } = await client.request('buckley/ask', { question });
  return readOf(answer);
}

/** Runs a task to its end; the agent's answer as logged. */
async function task(client: TestClient, query: string): Promise<string> {
  await client.request('buckley/executeTask', { task: query });
  const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${query}"`));
  return readOf(logged.message);
}

describe('what the agent reads', () => {
  it('is the buffer of a file open in the editor, unsaved edits included, and lines of it when asked', async () => {
    const client = await start();
    await client.open(RETRY, UNSAVED + onDisk);

    expect(await ask(client, `READ ${RETRY}`)).toBe(UNSAVED + onDisk);
    // line and limit: 1-based lines of the buffer, not of the disk.
    const lines = (UNSAVED + onDisk).split('\n');
    expect(await ask(client, `READ ${RETRY} 2 3`)).toBe(`${lines.slice(1, 4).join('\n')}\n`);
    expect(readFileSync(RETRY, 'utf8')).toBe(onDisk);
  });

  it('follows the buffer as the user types', async () => {
    const client = await start();
    const uri = await client.open(RETRY, onDisk);
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: UNSAVED }] });
    expect(await ask(client, `READ ${RETRY} 1 1`)).toBe(UNSAVED);
  });

  it('of a buffer too big to read whole (a new file, never saved): refused with how to read it, and read in parts', async () => {
    const client = await start();
    const path = `${REPO}fixtures/workspace/big-and-unsaved.ts`;
    const line = `${'x'.repeat(99)}\n`;
    await client.open(path, `first line\n${line.repeat(180_000)}`);
    expect(await ask(client, `READ ${path}`)).toBe(`read failed (-32603): ${path} is 17 MB: read it in parts (line and limit)`);
    expect(await ask(client, `READ ${path} 1 2`)).toBe(`first line\n${line}`);
  });

  it('is the file on disk when it is not open, and "not found" when there is none', async () => {
    const client = await start();
    expect(await ask(client, `READ ${RETRY}`)).toBe(onDisk);
    expect(await ask(client, `READ ${REPO}fixtures/workspace/no-such-file.ts`)).toBe(
      `read failed (-32002): ${REPO}fixtures/workspace/no-such-file.ts does not exist`,
    );
  });

  it('outside the workspace: refused in an ask, without asking anyone, and the agent reads why', async () => {
    const client = await start({ client: 'neovim-0.10.4', initialize: { capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } }, handlers: { 'buckley/approveTool': () => ({ approved: true }) } });
    expect(await ask(client, `READ ${OUTSIDE}`)).toBe(`read failed (-32603): reading ${OUTSIDE} was refused: reads ${OUTSIDE} outside the workspace`);
    expect(client.all('buckley/approveTool')).toEqual([]);
  });

  it('is judged as any read is: a link in the workspace to a file outside it, and credentials inside it, are not read in an ask', async () => {
    const root = mkdtempSync(join(tmpdir(), 'buckley-reads-ws-'));
    workspaces.push(root);
    symlinkSync(OUTSIDE, join(root, 'innocent.txt'));
    writeFileSync(join(root, '.env'), 'API_KEY=secret\n');
    writeFileSync(join(root, 'plain.txt'), 'plain words\n');
    const client = await start({ initialize: { rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }] } });
    expect(await ask(client, `READ ${join(root, 'plain.txt')}`)).toBe('plain words\n');
    // Refused as what it leads to, named.
    expect(await ask(client, `READ ${join(root, 'innocent.txt')}`)).toBe(`read failed (-32603): reading ${join(root, 'innocent.txt')} was refused: reads ${OUTSIDE} outside the workspace`);
    expect(await ask(client, `READ ${join(root, '.env')}`)).toMatch(/^read failed \(-32603\): reading .*\.env was refused: .*secrets/);
  });

  it('outside the workspace in a task: the user decides, and a denial reaches the agent as an error', async () => {
    let answer = true;
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: { capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } },
      handlers: { 'buckley/approveTool': () => ({ approved: answer }) },
    });
    expect(await task(client, `READ ${OUTSIDE}`)).toBe('outside the workspace\n');
    expect(client.all('buckley/approveTool')).toMatchObject([{ tool: `Read ${OUTSIDE}`, risk: 'medium', parameters: { path: OUTSIDE } }]);

    answer = false;
    expect(await task(client, `READ ${OUTSIDE} 1 1`)).toBe(`read failed (-32603): reading ${OUTSIDE} was refused: reads ${OUTSIDE} outside the workspace`);
    expect(client.all('buckley/approveTool')).toHaveLength(2);
  });

  describe('with a standalone coordinator', () => {
    let coordinator: CoordinatorProcess;
    afterAll(() => coordinator?.stop());

    it('is the buffer too: the bridge gives it over the wire (file_request, ProvideFile)', async () => {
      coordinator = await startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT]);
      const client = await start({ args: ['--coordinator', coordinator.address], env: { BUCKLEY_AGENT: undefined } });
      await client.open(RETRY, UNSAVED + onDisk);
      expect(await ask(client, `READ ${RETRY}`)).toBe(UNSAVED + onDisk);
      const status = await client.request('buckley/status', {});
      expect(status.coordinator.features).toContain('editor_buffers');
      expect(status.features['coordinator.editorBuffers']).toBe(true);
      expect(status.coordinator.files.read).toContain("the editor's buffer of a file open here (unsaved edits included)");
    });
  });
});
