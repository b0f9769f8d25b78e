/**
 * The bridge against each kind of coordinator and agent: our coordinator as a separate process,
 * a Buckley-like coordinator (SendMessage, no answer streaming), one that never answers, the
 * SDK 1.9.0 example ACP agent, an OpenAI-compatible server streaming real SSE, and no agent.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sseServer } from '../helpers/openai.js';
import { startCoordinatorProcess, startFakeBuckley, type CoordinatorProcess, type FakeBuckley, type FakeBuckleyOptions } from '../helpers/coordinators.js';
import { TestClient } from '../helpers/lspClient.js';
import { EXAMPLE_AGENT, SCRIPTED_AGENT } from '../helpers/paths.js';
import { linesRange, rangeOf } from '../helpers/text.js';
import { tempDir } from '../helpers/temp.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});
async function start(...args: Parameters<typeof TestClient.start>): Promise<TestClient> {
  const client = await TestClient.start(...args);
  cleanups.push(() => client.shutdown());
  return client;
}
async function coordinatorProcess(args: string[]): Promise<CoordinatorProcess> {
  const coordinator = await startCoordinatorProcess(args);
  cleanups.push(() => coordinator.stop());
  return coordinator;
}
async function fakeBuckley(options?: FakeBuckleyOptions): Promise<FakeBuckley> {
  const buckley = await startFakeBuckley(options);
  cleanups.push(() => buckley.stop());
  return buckley;
}

describe('coordinators', () => {
  it("judges a tool call's risk itself: a coordinator's low label never lets rm -rf ~ through unasked", async () => {
    const buckley = await fakeBuckley({ approval: { tool: 'Bash', kind: 'read', parameters: { command: 'rm -rf ~' }, risk: 'low' } });
    const client = await start({
      env: { BUCKLEY_COORDINATOR: buckley.address },
      initialize: { capabilities: { experimental: { buckley: { approveTool: true, taskProgress: true } } } },
      handlers: { 'buckley/approveTool': () => ({ approved: false }) },
    });
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy up' });
    const asked = await client.waitFor('buckley/approveTool');
    expect(asked).toMatchObject({ tool: 'Bash', risk: 'destructive', reason: expect.stringContaining('deletes recursively (rm -rf)') });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    await buckley.waitFor('RejectToolExecution');
  });

  it('says a decision came too late when the coordinator had stopped waiting for it (NOT_FOUND): the answer changed nothing', async () => {
    const buckley = await fakeBuckley({ approval: { tool: 'Bash', kind: 'execute', parameters: { command: 'npm test' }, risk: 'high' }, approvalExpired: true });
    const client = await start({
      env: { BUCKLEY_COORDINATOR: buckley.address },
      initialize: { capabilities: { experimental: { buckley: { approveTool: true, taskProgress: true } } } },
      handlers: { 'buckley/approveTool': () => ({ approved: true }) },
    });
    await client.request('buckley/executeTask', { task: 'Run the tests' });
    const said = await client.waitFor('window/showMessage', (p) => p.message.startsWith('too late, '));
    expect(said).toEqual({ type: 2, message: 'too late, denied already (see log): run `npm test`: Bash' });
    await client.waitFor('window/logMessage', (p) => p.message.includes('the coordinator did not take the decision') && p.message.includes('NOT_FOUND'));
  });

  it('asks through `buckley-lsp coordinator` running as its own process', async () => {
    const coordinator = await coordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT]);
    const client = await start({ args: ['--coordinator', coordinator.address], env: { BUCKLEY_AGENT: undefined } });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const result = await client.request('buckley/ask', { question: 'Who runs you?', context: { activeFile: uri, selection: rangeOf(text, 'let lastError: unknown;') } });
    expect(result.answer).toContain('You asked: Who runs you?');
    const status = await client.request('buckley/status', {});
    expect(status.coordinator).toMatchObject({
      mode: 'remote',
      address: coordinator.address,
      state: 'ready',
      features: ['chat', 'stream_task', 'answer_stream', 'tool_approval', 'approval_events', 'editor_context', 'ask_read_only', 'ask_intent', 'editor_buffers', 'edit_selection', 'conversations', 'usage', 'plan', 'thoughts', 'questions', 'task_events', 'prompt_images', 'client_terminals', 'agent_controls', 'agent_modes'],
    });
    // It reads the context and keeps asks read-only: the question goes as it is, and no notice.
    const streamed = (await client.request('buckley/status', {})).features;
    expect(streamed).toMatchObject({ 'coordinator.readsContext': true, 'coordinator.readOnlyAsks': true });
    expect(client.all('window/showMessage').map((p) => p.message)).not.toContain('asks may edit files here: see buckley.ask.requireReadOnly');
  });

  it('talks to Buckley: identity metadata, one session, open/close as UpdateSessionContext, the selection in the message it reads, its receipt shown as a report', async () => {
    const project = tempDir('buckley-project');
    const buckley = await fakeBuckley({ projectRoot: project });
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_COORDINATOR: buckley.address } });
    // At initialize its features are not known yet; once it has answered, the editor is told.
    expect(client.buckley.features.coordinator).toMatchObject({ known: false, chat: false });
    const known = await client.waitFor('$/buckley/features', (p) => p.coordinator.known);
    expect(known.coordinator).toMatchObject({ chat: true, toolApproval: true, readsContext: false, readOnlyAsks: false, inlineCompletion: true, unused: ['context_handles', 'apply_edits', 'editor_state'] });
    await client.waitFor('window/logMessage', (p) => p.message.includes("the coordinator's features are known: the bridge uses chat, streamTask, toolApproval, proposesEdits, inlineCompletion; not (yet): context_handles, apply_edits, editor_state"));
    const session = await buckley.waitFor('CreateSession');
    // Buckley keys sessions by agent id: each editor has its own unless the settings say otherwise.
    expect(session.request.agent_id).toMatch(/^buckley-lsp-[0-9a-f]{8}$/);
    expect(session.metadata['x-buckley-agent-id']).toBe(session.request.agent_id);

    // Before the first ask, once: Buckley does not keep asks read-only.
    const notice = await client.waitFor('window/showMessage', (p) => p.type === 2);
    expect(notice.message).toBe('asks may edit files here: see buckley.ask.requireReadOnly');
    await client.waitFor('window/logMessage', (p) => p.message.includes(`the coordinator at ${buckley.address} does not keep asks read-only`));

    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const opened = await buckley.waitFor('UpdateSessionContext', (r) => r.added_files.includes(uri));
    expect(opened.request.session_id).toBe(`acp-send-${session.request.agent_id}`);

    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const result = await client.request('buckley/ask', { question: 'Explain', context: { activeFile: uri, selection } });
    // What its model read: the question, the file relative to the workspace, its language, the selection.
    const [read] = buckley.modelInputs;
    expect(read).toMatch(/^Explain\n/);
    expect(read).toContain('The selected code (lines 17-18 of retry.ts):\n```typescript\nexport function backoff(attempt: number): number {');
    expect(read).toMatch(/The file retry.ts( \(an excerpt: lines \d+-\d+\))?:\n```typescript\n/);
    const sent = await buckley.waitFor('SendMessage');
    expect(sent.metadata['x-buckley-agent-id']).toBe(sent.request.agent_id);
    expect(sent.metadata['x-buckley-intent']).toBeUndefined();
    expect(sent.request.context.document).toMatchObject({ uri, language_id: 'typescript', selection });
    // Its fixed reply is a receipt, shown as its report, not as the model's answer.
    expect(result.answer).toContain('The coordinator sent no answer, only a report of what it did:\n\n> Plan plan-1 executed for request: «Explain»');
    expect(result.answer).not.toContain('export function backoff');
    expect(result.report).toBe(true);
    await client.waitFor('window/showMessage', (p) => p.message === 'no answer to «Explain»: report opened');
    // And it did run its tools, unasked: what the notice warned of.
    expect(buckley.ranUnasked).toEqual(['write_file docs/plans/plan-1.md']);

    await client.notify('textDocument/didClose', { textDocument: { uri } });
    await buckley.waitFor('UpdateSessionContext', (r) => r.removed_files.includes(uri));
    expect(buckley.calls.filter((call) => call.method === 'CreateSession')).toHaveLength(1);

    const status = await client.request('buckley/status', {});
    // Buckley has the approval RPCs but announces no approvals, no context reading, no read-only asks.
    expect(status.features).toMatchObject({
      'coordinator.chat': true,
      'coordinator.answerStream': false,
      'coordinator.toolApproval': true,
      'coordinator.approvalEvents': false,
      'coordinator.readsContext': false,
      'coordinator.readOnlyAsks': false,
      'coordinator.editorBuffers': false,
    });
    expect(status.coordinator.unusedFeatures).toEqual(['context_handles', 'apply_edits', 'editor_state']);
    // Its agent reads the disk: the user is told that unsaved edits are not what it sees.
    expect(status.coordinator.files.read).toContain('not your unsaved edits');
    expect(client.all('window/showMessage').filter((p) => p.message === notice.message)).toHaveLength(1);
  });

  it("tells Buckley's receipt from an answer however it spells the request back: the result says it is a report", async () => {
    const buckley = await fakeBuckley({ spellsBack: (content) => content.replace(/\s+/g, ' ') });
    const client = await start({ env: { BUCKLEY_COORDINATOR: buckley.address } });
    const result = await client.request('buckley/ask', { question: 'What does this function do?\nAnd why?' });
    expect(result).toMatchObject({ report: true, answer: expect.stringContaining('> Plan plan-1 executed for request: «What does this function do? And why?»') });
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('no answer to «What does this'));
  });

  it('refuses asks where Buckley cannot keep them read-only, when buckley.ask.requireReadOnly says so', async () => {
    const buckley = await fakeBuckley();
    const client = await start({ env: { BUCKLEY_COORDINATOR: buckley.address }, initialize: { initializationOptions: { ask: { requireReadOnly: true } } } });
    await expect(client.request('buckley/ask', { question: 'Read only?' })).rejects.toMatchObject({
      message: expect.stringContaining('buckley.ask.requireReadOnly is true, so asks are refused here'),
      data: { summary: 'asks refused: buckley.ask.requireReadOnly' },
    });
    expect(buckley.calls.filter((call) => call.method === 'SendMessage')).toEqual([]);
    expect(buckley.ranUnasked).toEqual([]);
    await client.waitFor('window/showMessage', (p) => p.message === 'asks refused here: buckley.ask.requireReadOnly');
  });

  it("ends an ask the coordinator never answers at the ask's one deadline, naming the setting to raise", async () => {
    const buckley = await fakeBuckley({ silentAnswers: true });
    const client = await start({ env: { BUCKLEY_COORDINATOR: buckley.address }, initialize: { initializationOptions: { ask: { timeoutMs: 700 } } } });
    await expect(client.request('buckley/ask', { question: 'Anyone?' })).rejects.toMatchObject({
      message: 'Buckley could not answer: no answer within 0.7 s (setting buckley.ask.timeoutMs)',
      data: { summary: 'no answer in 0.7 s: raise buckley.ask.timeoutMs' },
    });
    await buckley.waitFor('SendMessage');
  });

  it('answers initialize while the coordinator does not answer, then reports it unavailable with what to do', async () => {
    const silent = await fakeBuckley({ hang: true });
    const client = await start({
      env: { BUCKLEY_COORDINATOR: silent.address },
      initialize: { initializationOptions: { coordinator: { callTimeoutMs: 300 } } },
    });
    expect(client.buckley.protocolVersion).toBe('0.1');
    const warning = await client.waitFor('window/showMessage', (p) => p.type === 2);
    expect(warning.message).toBe(`${silent.address} does not answer (see log)`);
    const status = await client.request('buckley/status', {});
    expect(status.coordinator.state).toBe('unavailable');
    expect(status.coordinator.error).toContain(`the coordinator at ${silent.address} (from buckley.coordinator.address or BUCKLEY_COORDINATOR) did not answer in time`);
    await expect(client.request('buckley/ask', { question: 'anyone?' })).rejects.toMatchObject({
      message: expect.stringContaining(`the coordinator at ${silent.address} (from buckley.coordinator.address or BUCKLEY_COORDINATOR) did not answer in time`),
    });
  });

  it('asks the SDK 1.9.0 example ACP agent, which wants to edit a file: the ask declines it without asking the user', async () => {
    const client = await start({ client: 'neovim-0.12.4', env: { BUCKLEY_AGENT: `${process.execPath} ${EXAMPLE_AGENT}` } });
    const result = await client.request('buckley/ask', { question: 'Improve the config?' });
    expect(result.answer).toContain("I'll help you with that.");
    expect(result.answer).toContain("I understand you prefer not to make that change. I'll skip the configuration update.");
    await client.waitFor('window/logMessage', (p) => p.message.includes('declined Modifying critical configuration file (edit) without asking: an ask is read-only'));
    expect(client.all('window/showMessageRequest')).toEqual([]);
  });

  it('streams an answer from an OpenAI-compatible server (real SSE), with the API key from the environment and never in the log', async () => {
    const requests: { body: any; authorization?: string }[] = [];
    const server = await sseServer(async (req, body) => {
      requests.push({ body, authorization: req.headers.authorization });
      const question = body.messages.at(-1).content.split('\n')[0];
      return ['The answer ', 'to "', question, '" is 42.'];
    });
    const client = await start({
      env: { BUCKLEY_AGENT: undefined, MY_KEY: 'sk-test-secret' },
      initialize: {
        initializationOptions: {
          agent: { driver: 'openai', openai: { baseUrl: `${server.url}/v1`, model: 'test-model', apiKeyEnv: 'MY_KEY' } },
          log: { level: 'debug' },
        },
      },
    });
    const result = await client.request('buckley/ask', { question: 'What is the meaning of life?' });
    expect(result.answer).toBe('The answer to "What is the meaning of life?" is 42.');
    expect(requests[0]).toMatchObject({ authorization: 'Bearer sk-test-secret', body: { model: 'test-model', stream: true } });
    expect(requests[0]!.body.messages[0].role).toBe('system');
    // Everything about this ask has been logged once its answer has (it follows the result).
    await client.waitFor('window/logMessage', (p) => p.message.startsWith("Buckley's answer to"));
    const logs = client.all('window/logMessage').map((p) => p.message).join('\n');
    expect(logs).toContain('OpenAI-compatible model `test-model`');
    expect(logs).not.toContain('sk-test-secret');
  });

  it("says the tokens an OpenAI-compatible server counts (stream_options.include_usage); a server that refuses the option is asked again without it", async () => {
    const counted: any[] = [];
    const server = await sseServer(async (_req, body) => {
      counted.push(body);
      return ['Forty', '-two.'];
    });
    const settings = (url: string) => ({ initializationOptions: { agent: { driver: 'openai', openai: { baseUrl: `${url}/v1`, model: 'test-model' } } } });
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: undefined }, initialize: settings(server.url) });
    await client.request('buckley/ask', { question: 'What is it?', workDoneToken: 'usage-1' });
    expect(counted[0].stream_options).toEqual({ include_usage: true });
    const input = Math.ceil(JSON.stringify(counted[0].messages).length / 4);
    expect(client.all('$/progress').find((p) => p.token === 'usage-1' && p.value.kind === 'end').value.message).toBe(`Answered (${input} tokens in, 2 out)`);
    expect((await client.request('buckley/status', {})).usage).toBe(`1 turn · ${input} tokens in, 2 out`);

    const strict = await sseServer(async () => ['Forty', '-two.'], { strict: true });
    const old = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: undefined }, initialize: settings(strict.url) });
    expect((await old.request('buckley/ask', { question: 'What is it?', workDoneToken: 'usage-2' })).answer).toBe('Forty-two.');
    // Nothing made up where nothing was counted.
    expect(old.all('$/progress').find((p) => p.token === 'usage-2' && p.value.kind === 'end').value.message).toBe('Answered');
    await old.waitFor('window/logMessage', (p) => p.message.includes('does not take stream_options: asked without it'));

    // Usage in a shape of its own: the answer is taken all the same, and no tokens are made up.
    const odd = await sseServer(async () => ['Forty', '-two.'], { oddUsage: true });
    const other = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: undefined }, initialize: settings(odd.url) });
    expect((await other.request('buckley/ask', { question: 'What is it?', workDoneToken: 'usage-3' })).answer).toBe('Forty-two.');
    expect(other.all('$/progress').find((p) => p.token === 'usage-3' && p.value.kind === 'end').value.message).toBe('Answered');
  });

  it('finds `buckley` on PATH and runs `buckley acp`', async () => {
    const bin = tempDir('buckley-path');
    // A stand-in for the Buckley CLI: `buckley acp` speaks ACP (our scripted agent does the talking).
    writeFileSync(join(bin, 'buckley'), `#!/bin/sh\n[ "$1" = acp ] || exit 9\nexec "${process.execPath}" "${SCRIPTED_AGENT}"\n`, { mode: 0o755 });
    const client = await start({ env: { BUCKLEY_AGENT: undefined, PATH: `${bin}:/usr/bin:/bin` } });
    const result = await client.request('buckley/ask', { question: 'Which agent?' });
    expect(result.answer).toContain('You asked: Which agent?');
    const status = await client.request('buckley/status', {});
    expect(status.coordinator.agent).toBe(`ACP agent \`${join(bin, 'buckley')} acp\``);
  });

  it('finds a local Ollama (OLLAMA_HOST on loopback) and asks its first model', async () => {
    const server = await sseServer(async (_req, body) => [`${body.model} says hi`]);
    const client = await start({ env: { BUCKLEY_AGENT: undefined, PATH: '/nonexistent', OLLAMA_HOST: server.url.replace('http://', '') } });
    const result = await client.request('buckley/ask', { question: 'Hello?' });
    expect(result.answer).toBe('llama3:8b says hi');
    const status = await client.request('buckley/status', {});
    expect(status.coordinator.agent).toBe(`OpenAI-compatible model \`llama3:8b\` at ${server.url}/v1`);
  });

  it('says which agent command failed and why: not found, or exits at once', async () => {
    const missing = await start({ env: { BUCKLEY_AGENT: 'no-such-agent --acp' } });
    await expect(missing.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringContaining('cannot start ACP agent `no-such-agent --acp`: no-such-agent is not found on PATH. Check that the command exists and is executable (setting buckley.agent.command or BUCKLEY_AGENT).'),
    });
    const broken = await start({ env: { BUCKLEY_AGENT: `${process.execPath} -e "console.error('bad key'); process.exit(7)"` } });
    await expect(broken.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringMatching(/exited with code 7\. Its last output: bad key/),
    });
  });

  it("quotes the line an agent wrote in pieces as one line", async () => {
    // Written in two pieces, as a buffered writer flushes them: read apart, they are still one line.
    const pieces = await start({ env: { BUCKLEY_AGENT: `${process.execPath} -e "process.stderr.write('Error: no API key'); setTimeout(() => { process.stderr.write(' in OPENAI_API_KEY\\n'); process.exit(3); }, 200)"` } });
    await expect(pieces.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringContaining('exited with code 3. Its last output: Error: no API key in OPENAI_API_KEY'),
    });
  });

  it("says a missing agent command at start, checks it again when the settings change, and says it again if it returns", async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: {}, env: { BUCKLEY_AGENT: undefined }, initialize: { initializationOptions: { agent: { command: ['no-such-agent', '--acp'] } } } });
    const first = await client.waitFor('window/showMessage', (p) => p.type === 2);
    expect(first.message).toBe('no-such-agent not found: fix buckley.agent.command (see log)');
    client.settings = { agent: { command: [process.execPath, SCRIPTED_AGENT] } };
    await client.notify('workspace/didChangeConfiguration', { settings: null });
    await client.waitFor('window/logMessage', (p) => p.message.includes('the embedded coordinator starts when first needed'));
    const again = client.waitForNext('window/showMessage', (p) => p.type === 2);
    client.settings = { agent: { command: ['no-such-agent', '--acp'] } };
    await client.notify('workspace/didChangeConfiguration', { settings: null });
    expect((await again).message).toBe(first.message);
  });

  it('with no agent anywhere, tells the user in the editor how to configure one', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: undefined, PATH: '/nonexistent' } });
    const warning = await client.waitFor('window/showMessage', (p) => p.type === 2);
    expect(warning.message).toBe('set buckley.agent.command to an ACP agent (see log)');
    await client.waitFor('window/logMessage', (p) => p.message.includes('Set buckley.agent.command to an ACP agent'));
    await expect(client.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringContaining('Set buckley.agent.command to an ACP agent (e.g. ["gemini", "--acp"]'),
    });
  });
});

/** A local HTTP server speaking the chat completions streaming API for real. */
