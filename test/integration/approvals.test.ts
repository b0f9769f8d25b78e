/**
 * Tool approvals over stdio, with the scripted ACP agent and the SDK 1.9.0 example agent (both
 * ask permission): every way of asking the user, trust, the policy, timeouts and non-answers.
 * The agent's own answer says which permission outcome it received.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startingClients, type ClientOptions, type TestClient } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS, EXAMPLE_AGENT } from '../helpers/paths.js';
import { linesRange } from '../helpers/text.js';

const start = startingClients();

function payload(name: string) {
  return JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${name}.json`, 'utf8'));
}

/** A Neovim 0.10 payload opted in to the custom layer, answering buckley/approveTool with `answer`. */
function optedIn(answer: (request: any) => unknown, extra: Partial<ClientOptions> = {}): ClientOptions {
  const base = payload('neovim-0.10.4');
  return {
    client: 'neovim-0.10.4',
    initialize: { capabilities: { ...base.capabilities, experimental: { buckley: { taskProgress: true, approveTool: true } } } },
    handlers: { 'buckley/approveTool': answer },
    ...extra,
  };
}

/** Runs a task to its end; returns its id and the agent's answer as logged. */
async function runTask(client: TestClient, task: string, context?: unknown): Promise<{ answer: string; taskId: string }> {
  const { taskId } = await client.request('buckley/executeTask', { task, ...(context ? { context } : {}) });
  const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${task}"`));
  return { answer: logged.message, taskId };
}

describe('approvals', () => {
  it('asks an opted-in client with buckley/approveTool, in the brief shape; low-risk reads pass by policy', async () => {
    const client = await start(optedIn(() => ({ approved: true })));
    const { answer, taskId } = await runTask(client, 'Tidy the config');
    expect(answer).toContain('Permission to read: yes; permission to edit: yes.');
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    const requests = client.all('buckley/approveTool');
    expect(requests).toEqual([
      {
        executionId: expect.stringMatching(/^[0-9a-f]{32}$/),
        tool: 'Edit config.json',
        parameters: { path: 'config.json', content: '{}' },
        risk: 'medium',
        agent: { id: 'scripted-agent.mjs' },
        taskId: final.taskId,
        title: 'Edit config.json',
      },
    ]);
    // Only the edit waited for the user; the read was approved by policy without a waiting state.
    const waiting = client.all('$/buckley/taskProgress').filter((p) => p.status === 'awaiting_approval');
    expect(waiting.map((p) => p.message)).toEqual(['Waiting for your approval: Edit config.json (medium) — answer the prompt']);
    await client.waitFor('window/logMessage', (p) => /approval [0-9a-f]{32}: scripted-agent\.mjs wants Edit config\.json \(medium\) — approved by the user \(buckley\/approveTool\)/.test(p.message));
  });

  it('asks a Neovim-like client with showMessageRequest, showing command, risk and agent; Deny is denied', async () => {
    const client = await start({ client: 'neovim-0.10.4', answerMessageRequest: (params) => params.actions.find((a: any) => a.title === 'Deny') });
    const { answer } = await runTask(client, 'RUN npm publish --tag next');
    expect(answer).toContain('Permission to run `npm publish --tag next`: no.');
    const [prompt] = client.all('window/showMessageRequest');
    expect(prompt).toEqual({
      type: 2,
      message: 'Buckley: scripted-agent.mjs wants to run `npm publish --tag next` (risk: high).',
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
      message: expect.stringContaining('Buckley: scripted-agent.mjs wants to use Edit config.json (risk: medium).'),
    });
    await client.waitFor('window/showMessage', (p) => p.message === 'Buckley: approve or deny Edit config.json (code actions)');
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
    // Trusting picks the agent's "allow always" option; the next time it is allowed once, unasked.
    expect((await runTask(client, 'First edit')).answer).toContain('permission to edit: always');
    expect((await runTask(client, 'Second edit')).answer).toContain('permission to edit: yes');
    expect(client.all('window/showMessageRequest')).toHaveLength(1);
    const trust = JSON.parse(readFileSync(join(client.stateDir, 'buckley-lsp', 'trust.json'), 'utf8'));
    expect(trust.trusted).toEqual([{ agent: 'scripted-agent.mjs', tool: 'Edit config.json', since: expect.any(String) }]);
    await client.waitFor('window/logMessage', (p) => p.message.includes('approved by trust (Approve & trust earlier)'));
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
    expect(prompt.message).toContain('(risk: destructive)');
    expect(prompt.actions).toEqual([{ title: 'Approve' }, { title: 'Deny' }]);
    // The high-risk edit? No: editing config.json is medium, within "high", so it passed unasked.
    expect(client.all('window/showMessageRequest')).toHaveLength(1);
  });

  it('denies an approval nobody answers after the timeout, and says so', async () => {
    const client = await start(optedIn(() => new Promise(() => {}), { initialize: { ...optedIn(() => null).initialize, initializationOptions: { approvals: { timeoutMs: 400 } } } }));
    const { answer } = await runTask(client, 'Slow to decide');
    expect(answer).toContain('permission to edit: no');
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('Buckley: denied Edit config.json: no answer within 0.4 s'));
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
