/**
 * Tool approvals over stdio, with the scripted ACP agent and the SDK 1.9.0 example agent (both
 * ask permission): every way of asking the user, trust, the policy, timeouts and non-answers.
 * The agent's own answer says which permission outcome it received.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CancellationToken } from 'vscode-jsonrpc/node.js';
import { describe, expect, it } from 'vitest';
import { startingClients, type ClientOptions, type TestClient } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS, EXAMPLE_AGENT } from '../helpers/paths.js';
import { linesRange } from '../helpers/text.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();

function payload(name: string) {
  return JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${name}.json`, 'utf8'));
}

/** A Neovim 0.10 payload opted in to the custom layer, answering buckley/approveTool with `answer`. */
function optedIn(answer: (request: any, token: CancellationToken) => unknown, extra: Partial<ClientOptions> = {}): ClientOptions {
  const base = payload('neovim-0.10.4');
  return {
    client: 'neovim-0.10.4',
    initialize: { capabilities: { ...base.capabilities, experimental: { buckley: { taskProgress: true, approveTool: true } } } },
    handlers: { 'buckley/approveTool': answer },
    ...extra,
  };
}

/** Runs a task to its end; returns its id and the agent's answer as logged. */
/** The scripted agent's permission request for a tool call given as JSON ({kind, title, rawInput, …}). */
const tool = (call: object) => `TOOL ${JSON.stringify(call)}`;

async function runTask(client: TestClient, task: string, context?: unknown): Promise<{ answer: string; taskId: string }> {
  const { taskId } = await client.request('buckley/executeTask', { task, ...(context ? { context } : {}) });
  const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${task}"`));
  return { answer: logged.message, taskId };
}

describe('approvals', () => {
  it('asks an opted-in client with buckley/approveTool, in the brief shape; low-risk reads pass by policy', async () => {
    // The user answers once the task's progress says it waits (progress is coalesced, at most 10 a second).
    let client!: TestClient;
    client = await start(
      optedIn(async () => {
        await client.waitFor('$/buckley/taskProgress', (p) => p.status === 'awaiting_approval');
        return { approved: true };
      }),
    );
    const { answer, taskId } = await runTask(client, 'Tidy the config');
    expect(answer).toContain('Permission to read: yes; permission to edit: yes.');
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    const requests = client.all('buckley/approveTool');
    expect(requests).toEqual([
      {
        // The task's id, then the request's own.
        executionId: expect.stringMatching(/^[0-9a-f-]{36}\.[0-9a-f]{32}$/),
        tool: 'Edit config.json',
        parameters: { path: 'config.json', content: '{}' },
        risk: 'medium',
        agent: { id: 'scripted-agent.mjs' },
        taskId: final.taskId,
        title: 'Edit config.json',
        reason: 'edits files',
        subject: 'edit config.json',
        batch: 'edits',
      },
    ]);
    // Only the edit waited for the user; the read was approved by policy without a waiting state.
    const waiting = client.all('$/buckley/taskProgress').filter((p) => p.status === 'awaiting_approval');
    expect(waiting.map((p) => p.message)).toEqual(['Waiting for your approval: Edit config.json (medium) — answer the prompt']);
    await client.waitFor('window/logMessage', (p) => /approval [0-9a-f-]{36}\.[0-9a-f]{32}: scripted-agent\.mjs wants Edit config\.json \(medium\) — approved by the user \(buckley\/approveTool\)/.test(p.message));
  });

  it('asks a Neovim-like client with showMessageRequest, showing command, risk and agent; Deny is denied', async () => {
    const client = await start({ client: 'neovim-0.10.4', answerMessageRequest: (params) => params.actions.find((a: any) => a.title === 'Deny') });
    const { answer } = await runTask(client, 'RUN npm publish --tag next');
    expect(answer).toContain('Permission to run `npm publish --tag next`: no.');
    const [prompt] = client.all('window/showMessageRequest');
    expect(prompt).toEqual({
      type: 2,
      message: 'Buckley: scripted-agent.mjs wants to run `npm publish --tag next` (risk: high — runs a shell command).',
      actions: [{ title: 'Approve' }, { title: 'Approve & trust' }, { title: 'Deny' }],
    });
  });

  it('gives a Helix 25.01 client a diagnostic and code actions, and takes the decision through executeCommand', async () => {
    const client = await start({ client: 'helix-25.01.1' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy it', context: { activeFile: uri, selection } });

    const published = await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 1);
    expect(published.diagnostics[0]).toMatchObject({
      range: { start: selection.start, end: selection.start },
      severity: 2,
      source: 'buckley',
      message: expect.stringContaining('Buckley: scripted-agent.mjs wants to use Edit config.json (risk: medium — edits files).'),
    });
    await client.waitFor('window/showMessage', (p) => p.message === `retry.ts:${selection.start.line + 1}: approve or deny Edit config.json`);
    const status = await client.request('buckley/status', {});
    expect(status.approvals).toMatchObject([{ tool: 'Edit config.json', risk: 'medium', taskId }]);
    expect(status.tasks).toMatchObject([{ taskId, status: 'awaiting_approval', message: expect.stringContaining('use the code action "Buckley: approve…"') }]);

    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: selection.start, end: selection.start }, context: { diagnostics: published.diagnostics } });
    expect(actions.map((a: any) => a.title)).toEqual([
      'Buckley: approve «Edit config.json» (medium)',
      'Buckley: approve & trust «Edit config.json» (medium)',
      'Buckley: deny «Edit config.json» (medium)',
      'Buckley: cancel task «Tidy it»',
    ]);
    expect(await client.request('workspace/executeCommand', actions[0].command)).toEqual({ decided: true });
    await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 0);
    const answer = await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "Tidy it"'));
    expect(answer.message).toContain('permission to edit: yes');
    // Deciding again does nothing: one decision per approval.
    expect(await client.request('workspace/executeCommand', actions[2].command)).toEqual({ decided: false });
  });

  it('remembers "Approve & trust" (agent + tool) and then approves without asking', async () => {
    const client = await start({ client: 'neovim-0.10.4', answerMessageRequest: (params) => params.actions.find((a: any) => a.title === 'Approve & trust') });
    // Trust is ours to keep: the agent is allowed once each time (its "always" could change more than
    // this tool: its mode), and the next time it asks, it is allowed unasked.
    expect((await runTask(client, 'First edit')).answer).toContain('permission to edit: yes');
    expect((await runTask(client, 'Second edit')).answer).toContain('permission to edit: yes');
    expect(client.all('window/showMessageRequest')).toHaveLength(1);
    // Trusted at once, saved meanwhile: read once it is saved.
    await client.waitFor('window/logMessage', (p) => p.message.includes('trusted scripted-agent.mjs + Edit config.json: saved in'));
    const trust = JSON.parse(readFileSync(join(client.stateDir, 'buckley-lsp', 'trust.json'), 'utf8'));
    expect(trust.trusted).toEqual([{ agent: 'scripted-agent.mjs', tool: 'Edit config.json', since: expect.any(String) }]);
    await client.waitFor('window/logMessage', (p) => p.message.includes('approved by trust (Approve & trust earlier)'));
  });

  it('takes "Approve & trust" at once with a named pipe where the trust file should be, and says what is wrong', async () => {
    const stateDir = tempDir('buckley-test');
    mkdirSync(join(stateDir, 'buckley-lsp'), { recursive: true });
    execFileSync('mkfifo', [join(stateDir, 'buckley-lsp', 'trust.json')]);
    const client = await start({ client: 'neovim-0.10.4', stateDir, answerMessageRequest: (params) => params.actions.find((a: any) => a.title === 'Approve & trust') });
    await client.waitFor('window/showMessage', (p) => p.message === 'trust.json is a named pipe (see log)');
    // The decision reached the agent: nothing waited on the pipe.
    expect((await runTask(client, 'First edit')).answer).toContain('permission to edit: yes');
    await client.waitFor('window/showMessage', (p) => p.message === 'trust not saved: trust.json is a named pipe');
    await client.waitFor('window/logMessage', (p) => p.message.includes(`${join(stateDir, 'buckley-lsp', 'trust.json')} is a named pipe (FIFO), not a file; remove it`));
  });

  it('never auto-approves a destructive tool, whatever the policy, and offers no trust for it', async () => {
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: { initializationOptions: { approvals: { autoApprove: 'high' } } },
      answerMessageRequest: (params) => params.actions.find((a: any) => a.title === 'Approve'),
    });
    const { answer } = await runTask(client, 'RUN rm -rf build');
    expect(answer).toContain('Permission to run `rm -rf build`: yes.');
    const [prompt] = client.all('window/showMessageRequest');
    expect(prompt.message).toContain('(risk: destructive — deletes recursively (rm -rf)');
    expect(prompt.actions).toEqual([{ title: 'Approve' }, { title: 'Deny' }]);
    // The high-risk edit? No: editing config.json is medium, within "high", so it passed unasked.
    expect(client.all('window/showMessageRequest')).toHaveLength(1);
  });

  it('denies an approval nobody answers after the timeout, and says so', async () => {
    const client = await start(optedIn(() => new Promise(() => {}), { initialize: { ...optedIn(() => null).initialize, initializationOptions: { approvals: { timeoutMs: 400 } } } }));
    const { answer } = await runTask(client, 'Slow to decide');
    expect(answer).toContain('permission to edit: no');
    await client.waitFor('window/showMessage', (p) => p.message === 'denied Edit config.json: no answer in 0.4 s');
    await client.waitFor('window/logMessage', (p) => p.message.includes('denied by timeout: no answer within 0.4 s (setting buckley.approvals.timeoutMs)'));
  });

  it.each([
    ['null (as eglot answers unknown requests)', () => null],
    ['something that is not a decision', () => ({ ok: true })],
  ])('takes %s for no approval', async (_name, answer) => {
    const client = await start(optedIn(answer));
    expect((await runTask(client, 'Edit it')).answer).toContain('permission to edit: no');
  });

  it('takes a dismissed prompt for no approval', async () => {
    const client = await start({ client: 'neovim-0.10.4', answerMessageRequest: () => null });
    expect((await runTask(client, 'Edit it')).answer).toContain('permission to edit: no');
    await client.waitFor('window/logMessage', (p) => p.message.includes('denied by the user (prompt): the prompt was dismissed'));
  });

  it('lets the SDK 1.9.0 example agent edit after the user approves', async () => {
    const client = await start(optedIn(() => ({ approved: true }), { env: { BUCKLEY_AGENT: `${process.execPath} ${EXAMPLE_AGENT}` } }));
    const { answer } = await runTask(client, 'Update the database host');
    expect(answer).toContain("Perfect! I've successfully updated the configuration.");
    // It writes /home/user/project/config.json: outside this workspace, so destructive.
    expect(client.all('buckley/approveTool')).toMatchObject([{ tool: 'Modifying critical configuration file', risk: 'destructive', parameters: { path: '/home/user/project/config.json' } }]);
  });
});

describe('risk from what a tool does, not what the agent calls it', () => {
  /** A question or task that makes the scripted agent ask permission for exactly this tool call. */
  const fixtureRoot = fileURLToPath(new URL('../../fixtures/workspace/', import.meta.url));

  it.each([
    ['a "read" that runs rm -rf ~', { kind: 'read', title: 'Read', rawInput: { command: 'rm -rf ~' } }],
    ['a "search" that runs find -delete', { kind: 'search', title: 'Search', rawInput: { command: 'find / -name x -delete' } }],
    ['a read of file:///etc/shadow', { kind: 'read', title: 'Read', rawInput: { uri: 'file:///etc/shadow' } }],
    ["a read of /etc/shadow as gemini-cli's absolute_path", { kind: 'read', title: 'ReadFile', rawInput: { absolute_path: '/etc/shadow' } }],
    ['a read of /etc/shadow named only in its locations', { kind: 'read', title: 'Read', locations: [{ path: '/etc/shadow' }] }],
    ['a "read" whose diff writes a file', { kind: 'read', title: 'Read', content: [{ type: 'diff', path: `${fixtureRoot}retry.ts`, oldText: 'a', newText: 'b' }] }],
  ])('declines %s during an ask, without asking', async (_name, call) => {
    const client = await start(optedIn(() => ({ approved: true })));
    const { answer } = await client.request('buckley/ask', { question: tool(call) });
    expect(answer).toContain('Tool outcome: no.');
    expect(client.all('buckley/approveTool')).toEqual([]);
    await client.waitFor('window/logMessage', (p) => p.message.includes('declined') && p.message.includes('an ask is read-only'));
  });

  it('allows a read inside the workspace during an ask', async () => {
    const { answer } = await (await start()).request('buckley/ask', { question: tool({ kind: 'read', title: 'Read', rawInput: { file_path: `${fixtureRoot}retry.ts` } }) });
    expect(answer).toContain('Tool outcome: yes.');
  });

  it.each([
    ['medium', 'an edit of file:///etc/passwd', { kind: 'edit', title: 'Edit', rawInput: { uri: 'file:///etc/passwd', content: 'x' } }, 'writes file:///etc/passwd outside the workspace'],
    ['high', 'rm --recursive --force ~', { kind: 'execute', title: 'Run', rawInput: { command: 'rm --recursive --force ~' } }, 'deletes recursively'],
    ['high', 'find ~ -delete labelled a search', { kind: 'search', title: 'Find', rawInput: { command: 'find ~ -delete' } }, 'deletes what it finds (find -delete)'],
    ['high', 'a codex-acp argv with git push --force', { kind: 'execute', title: 'git push', rawInput: { command: ['bash', '-lc', 'git push --force'], cwd: fixtureRoot } }, 'rewrites or deletes remote history'],
    ['high', 'a command only in the title, as Gemini CLI sends its shell', { kind: 'execute', title: 'rm -rf build' }, 'deletes recursively'],
  ])('with autoApprove %s, still asks about %s, as destructive, and says why', async (autoApprove, _name, call, why) => {
    const client = await start(optedIn(() => ({ approved: false }), { initialize: { ...optedIn(() => null).initialize, initializationOptions: { approvals: { autoApprove } } } }));
    const { answer } = await runTask(client, tool(call));
    expect(answer).toContain('Tool outcome: no.');
    const [asked] = client.all('buckley/approveTool');
    expect(asked).toMatchObject({ risk: 'destructive', reason: expect.stringContaining(why) });
  });
});

describe('a call whose effect the rules cannot see', () => {
  it('is never approved unasked above low: not by autoApprove high, not by trust', async () => {
    const client = await start(optedIn(() => ({ approved: false }), { initialize: { ...optedIn(() => null).initialize, initializationOptions: { approvals: { autoApprove: 'high' } } } }));
    // A command shown nowhere: no input, no title.
    expect((await runTask(client, tool({ kind: 'execute', title: '' }))).answer).toContain('Tool outcome: no.');
    // The same command in its title is seen, high, and within autoApprove high: allowed unasked.
    expect((await runTask(client, tool({ kind: 'execute', title: 'ls -la' }))).answer).toContain('Tool outcome: yes.');
    expect(client.all('buckley/approveTool').map((asked) => asked.risk)).toEqual(['high']);
  });
});

describe('an approval outlives nothing', () => {
  /** A prompt the user never answers; `withdrawn` resolves with what it showed once the server withdraws it. */
  function unanswered() {
    let withdraw!: (shown: string) => void;
    const withdrawn = new Promise<string>((resolve) => (withdraw = resolve));
    const handler = (params: any, token: CancellationToken) =>
      new Promise((resolve) =>
        token.onCancellationRequested(() => {
          withdraw(params.message ?? params.tool);
          resolve(null);
        }),
      );
    return { handler, withdrawn };
  }

  it('withdraws the prompt, and its timer, when the task is cancelled', async () => {
    const prompt = unanswered();
    const client = await start({
      client: 'neovim-0.10.4',
      answerMessageRequest: prompt.handler,
      initialize: { initializationOptions: { approvals: { timeoutMs: 600 } } },
    });
    const { taskId } = await client.request('buckley/executeTask', { task: 'RUN make deploy' });
    await client.waitFor('window/showMessageRequest');
    const [approval] = (await client.request('buckley/status', {})).approvals;
    expect(await client.request('buckley/cancelTask', { taskId })).toEqual({ cancelled: true });
    // The editor got $/cancelRequest for the prompt (Neovim 0.7.2 would keep blocking on it otherwise).
    expect(await prompt.withdrawn).toContain('wants to run `make deploy`');
    expect((await client.request('buckley/status', {})).approvals).toEqual([]);
    await client.waitFor('window/logMessage', (p) => p.message.includes(`approval ${approval.executionId} for Run a command: withdrawn, its task was cancelled`));

    // A second approval's timeout runs out after the first one's would have: the first never fired.
    await client.request('buckley/executeTask', { task: 'RUN make clean' });
    await client.waitFor('window/logMessage', (p) => p.message.includes('denied by timeout'));
    const timeouts = client.all('window/logMessage').filter((p) => p.message.includes('denied by timeout'));
    expect(timeouts).toHaveLength(1);
    expect(timeouts[0].message).not.toContain(approval.executionId);
  });

  it('withdraws buckley/approveTool when the task ends another way', async () => {
    const prompt = unanswered();
    const client = await start(optedIn(prompt.handler));
    const { taskId } = await client.request('buckley/executeTask', { task: 'RUN make deploy' });
    await client.waitFor('buckley/approveTool');
    await client.request('workspace/executeCommand', { command: 'buckley.cancelTask', arguments: [{ taskId }] });
    expect(await prompt.withdrawn).toBe('Run a command');
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'cancelled');
  });

  it('clears the code-action diagnostic when the task is cancelled', async () => {
    const client = await start({ client: 'helix-25.01.1' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const { taskId } = await client.request('buckley/executeTask', { task: 'RUN make deploy', context: { activeFile: uri, selection } });
    await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 1);
    await client.request('buckley/cancelTask', { taskId });
    await client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 0);
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: selection.start, end: selection.start }, context: { diagnostics: [] } });
    expect(actions.map((a: any) => a.title).filter((title: string) => title.includes('approve'))).toEqual([]);
  });
});
