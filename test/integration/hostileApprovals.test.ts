/**
 * An agent that asks a thousand permissions at once: the editor gets one prompt of the task at a
 * time, saying how many wait, and a way to decide the rest of one kind at once (never the
 * destructive ones); the task's progress stays within 10 notifications a second. Over real stdio,
 * with the embedded coordinator and our scripted agent's PERMISSIONS.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS } from '../helpers/paths.js';

const start = startingClients();
const root = mkdtempSync(join(tmpdir(), 'buckley-approvals-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const workspace = { rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }] };

async function runTask(client: TestClient, task: string): Promise<{ answer: string; taskId: string; ms: number }> {
  const began = Date.now();
  const { taskId } = await client.request('buckley/executeTask', { task });
  const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${task}"`));
  return { answer: logged.message, taskId, ms: Date.now() - began };
}

/** Resolves once the task's progress says `count` of its approvals wait: all the agent asked have arrived. */
const allWaiting = (client: TestClient, count: number) => client.waitFor('$/buckley/taskProgress', (p) => p.message?.startsWith(`Waiting for your approval (${count.toLocaleString('en')} waiting): `));
/** A Neovim that answers prompts, and hears the task's progress. */
const neovim = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}neovim-0.10.4.json`, 'utf8'));
const promptingEditor = { ...workspace, capabilities: { ...neovim.capabilities, experimental: { buckley: { taskProgress: true } } } };

/**
 * A prompt handler that records how many prompts were open at once, and answers with `choose`;
 * the first prompt is answered once `ready` resolves (the user reads it while the rest arrive).
 */
function prompts(choose: (params: any, index: number) => string, ready: () => Promise<unknown>) {
  const seen: any[] = [];
  let open = 0;
  let mostOpen = 0;
  return {
    seen,
    mostOpen: () => mostOpen,
    answer: async (params: any) => {
      open++;
      mostOpen = Math.max(mostOpen, open);
      seen.push(params);
      await (seen.length === 1 ? ready() : new Promise((resolve) => setImmediate(resolve)));
      open--;
      const title = choose(params, seen.length - 1);
      return params.actions.find((action: any) => action.title === title) ?? null;
    },
  };
}

describe('a thousand permissions at once', () => {
  it('one prompt of the task at a time, saying how many wait; "Approve all edits of this task" decides the rest; progress within 10 a second', async () => {
    let client!: TestClient;
    const user = prompts((_, index) => (index < 3 ? 'Deny' : 'Approve all edits of this task'), () => allWaiting(client, 1000));
    client = await start({ client: 'neovim-0.10.4', initialize: promptingEditor, answerMessageRequest: user.answer });
    const { answer, taskId, ms } = await runTask(client, 'PERMISSIONS 1000 edit');
    expect(answer).toContain('permissions: 997 allowed, 3 denied, 0 cancelled');
    expect(user.mostOpen()).toBe(1);
    expect(user.seen).toHaveLength(4);
    // Each prompt after the first says where it stands: the first of all that wait.
    expect(user.seen.slice(1).map((prompt) => /^Buckley \(1 of ([\d,]+)\):/.exec(prompt.message)?.[1])).toEqual(['999', '998', '997']);
    expect(user.seen[3].actions.map((action: any) => action.title)).toEqual(['Approve', 'Approve & trust', 'Deny', 'Approve all edits of this task', 'Deny all 997 waiting']);
    // The task's progress: bounded, whatever the agent does (2,000 changes of status).
    const notifications = client.all('$/buckley/taskProgress').filter((p) => p.taskId === taskId);
    expect(notifications.length).toBeLessThanOrEqual(10 * (ms / 1000 + 1));
    await client.waitFor('window/logMessage', (p) => /approved by the user \(prompt\): all edits of this task/.test(p.message));
  });

  it('destructive calls are never approved all at once: the prompt offers to deny them all, and that denies every one waiting', async () => {
    let client!: TestClient;
    const user = prompts((params, index) => (index === 0 ? 'Deny' : params.actions.at(-1).title), () => allWaiting(client, 50));
    client = await start({ client: 'neovim-0.10.4', initialize: promptingEditor, answerMessageRequest: user.answer });
    const { answer } = await runTask(client, 'PERMISSIONS 50 delete');
    expect(answer).toContain('permissions: 0 allowed, 50 denied, 0 cancelled');
    expect(user.seen).toHaveLength(2);
    expect(user.seen[1].message).toMatch(/^Buckley \(1 of 49\): .* \(risk: destructive/);
    expect(user.seen[1].actions.map((action: any) => action.title)).toEqual(['Approve', 'Deny', 'Deny all 49 waiting']);
  });

  it('with buckley/approveTool: the request says how many wait and what approving for the task covers; forTask approves the rest of that kind', async () => {
    const requests: any[] = [];
    let client!: TestClient;
    client = await start({
      client: 'neovim-0.10.4',
      initialize: { ...workspace, capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } },
      handlers: {
        'buckley/approveTool': async (request: any) => {
          requests.push(request);
          if (requests.length === 1) await allWaiting(client, 200);
          return { approved: true, forTask: requests.length === 2 };
        },
      },
    });
    const { answer } = await runTask(client, 'PERMISSIONS 200 edit');
    expect(answer).toContain('permissions: 200 allowed, 0 denied, 0 cancelled');
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatchObject({ batch: 'edits', risk: 'medium' });
    expect(requests[1]).toMatchObject({ waiting: 199, batch: 'edits' });
  });

  it('a command of 50,000 characters: the prompt carries its start and its length, and the risk is judged on all of it', async () => {
    const user = prompts(() => 'Deny', async () => undefined);
    const client = await start({ client: 'neovim-0.10.4', initialize: promptingEditor, answerMessageRequest: user.answer });
    const command = `echo ${'a'.repeat(50_000)} && rm -rf ~`;
    const { answer } = await runTask(client, `TOOL ${JSON.stringify({ kind: 'execute', title: 'Run a command', rawInput: { command } })}`);
    expect(answer).toContain('Tool outcome: no.');
    const [prompt] = user.seen;
    expect(prompt.message.length).toBeLessThan(5_000);
    expect(prompt.message).toContain(`… (${command.length.toLocaleString('en')} characters in all)`);
    expect(prompt.message).toContain('(risk: destructive');
    expect(prompt.actions.map((action: any) => action.title)).toEqual(['Approve', 'Deny']);
  });

  it('more than 1,000 at once: the rest are denied at once, said once — what an agent holds open is bounded', async () => {
    let client!: TestClient;
    // The user answers once the five over the limit were denied (the log says so of each).
    const overLimit = () => client.all('window/logMessage').filter((p) => p.message.includes('denied by the limit')).length;
    const user = prompts(
      (_, index) => (index === 0 ? 'Approve' : 'Approve all edits of this task'),
      async () => {
        while (overLimit() < 5) await client.waitForNext('window/logMessage');
      },
    );
    client = await start({ client: 'neovim-0.10.4', initialize: promptingEditor, answerMessageRequest: user.answer });
    const { answer } = await runTask(client, 'PERMISSIONS 1005 edit');
    expect(user.seen).toHaveLength(2);
    expect(answer).toContain('permissions: 1000 allowed, 5 denied, 0 cancelled');
    expect(client.all('window/showMessage').filter((p) => p.message.includes('approvals at once'))).toEqual([
      { type: 2, message: 'the agent asks more than 1,000 approvals at once in one task: the rest are denied until those are decided' },
    ]);
  }, 120_000);

  it('in Helix (code actions): one diagnostic for the first, saying how many wait, and a code action approves all edits of the task', async () => {
    const client = await start({ client: 'helix-25.01.1', initialize: workspace });
    const { uri } = await client.openFixture('workspace/retry.ts');
    const selection = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
    const task = 'PERMISSIONS 30 edit';
    await client.request('buckley/executeTask', { task, context: { activeFile: uri, selection } });
    // The first is asked at once; once the rest wait, the user decides the first and then sees the count.
    const first = await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 1);
    await client.waitFor('$/progress', (p) => p.value?.kind === 'report' && String(p.value.message).startsWith('Waiting for your approval (30 waiting)'));
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: selection, context: { diagnostics: first.diagnostics } });
    await client.request('workspace/executeCommand', actions.find((a: any) => a.title.startsWith('Buckley: deny «')).command);
    const next = await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 1 && p.diagnostics[0].message.startsWith('Buckley (1 of 29)'));
    const offered = await client.request('textDocument/codeAction', { textDocument: { uri }, range: selection, context: { diagnostics: next.diagnostics } });
    const titles = offered.map((a: any) => a.title);
    expect(titles).toContain('Buckley: approve all edits of this task');
    expect(titles).toContain('Buckley: deny all 29 waiting of this task');
    expect(await client.request('workspace/executeCommand', offered.find((a: any) => a.title === 'Buckley: approve all edits of this task').command)).toEqual({ decided: true });
    const answer = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${task}"`));
    expect(answer.message).toContain('permissions: 29 allowed, 1 denied, 0 cancelled');
  });
});
