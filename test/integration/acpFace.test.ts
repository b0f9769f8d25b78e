/**
 * `buckley-lsp acp` over stdio, driven by the ACP SDK's client side as an ACP editor drives its
 * agent: a Zed-like client (its files: `fs/read_text_file`, `fs/write_text_file`) and a bare one,
 * the embedded coordinator and the scripted agent behind. An answer streamed; each permission put
 * to the user with our risk in words, approved or denied; a write made through the client's files
 * (nothing on disk); the read-only mode; a cancel mid-answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openaiChatModel } from '../helpers/models/openaiChat.js';
import { clientTerminals } from '../helpers/acpTerminals.js';
import { REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';
import { startCoordinatorProcess } from '../helpers/coordinators.js';

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

interface Client {
  context: acp.ClientContext;
  initialized: acp.InitializeResponse;
  /** Every session/update received, in order. */
  updates: acp.SessionUpdate[];
  /** The permission requests the client was asked. */
  permissions: acp.RequestPermissionRequest[];
  /** The questions the client was asked in forms (elicitation). */
  elicitations: acp.CreateElicitationRequest[];
  /** The files the client wrote (its buffers). */
  written: Map<string, string>;
  /** The terminal/create requests the client was sent (and ran). */
  terminalCreates: acp.CreateTerminalRequest[];
  stderr(): string;
  /** The face's process, and the HOME it and what it starts have. */
  process: ChildProcess;
  home: string;
}

/**
 * The README's agent server for Zed (`buckley-lsp acp`, `gemini` the scripted agent on PATH), and
 * an ACP client of it: with files (as Zed), or without.
 */
async function face(options: { snippet?: string; extraArgs?: string[]; files: boolean; terminals?: boolean | 'refused'; env?: Record<string, string>; decide?: (request: acp.RequestPermissionRequest) => string; agentFlags?: string[]; home?: string; elicit?: (request: acp.CreateElicitationRequest) => acp.CreateElicitationResponse }): Promise<Client> {
  const home = options.home ?? tempDir('buckley-acp-home');
  const server = JSON.parse(readmeSnippet(options.snippet ?? 'zed-agent-server')).agent_servers.Buckley;
  const child = spawn(server.command, [...server.args, ...(options.extraArgs ?? [])], {
    cwd: REPO,
    env: { ...server.env, PATH: userPath(options.agentFlags), HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const client: Omit<Client, 'context' | 'initialized'> = { updates: [], permissions: [], elicitations: [], written: new Map(), terminalCreates: [], stderr: () => stderr, process: child, home };
  let app = acp
    .client({ name: 'test-client' })
    .onNotification('session/update', ({ params }) => void client.updates.push(params.update))
    .onRequest('session/request_permission', ({ params }) => {
      client.permissions.push(params);
      return { outcome: { outcome: 'selected', optionId: options.decide?.(params) ?? 'allow' } };
    });
  if (options.files) {
    app = app
      .onRequest('fs/read_text_file', ({ params }) => ({ content: client.written.get(params.path) ?? readFileSync(params.path, 'utf8') }))
      .onRequest('fs/write_text_file', ({ params }) => {
        client.written.set(params.path, params.content);
        return {};
      });
  }
  if (options.terminals) app = clientTerminals(app, client.terminalCreates, options.terminals === 'refused');
  const elicit = options.elicit;
  if (elicit) {
    app = app.onRequest('elicitation/create', ({ params }) => {
      client.elicitations.push(params);
      return elicit(params);
    });
  }
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  stops.push(async () => {
    child.stdin.end();
    await exited;
  });
  const context = connection.agent;
  const initialized = await context.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: options.files, writeTextFile: options.files }, terminal: Boolean(options.terminals), ...(elicit ? { elicitation: { form: {} } } : {}) }, clientInfo: { name: 'test-client', version: '1' } });
  return { ...client, context, initialized };
}

/** A workspace with a README and a file to change. */
function workspace(): string {
  const root = tempDir('buckley-acp-ws');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'README.md'), '# read me\n');
  writeFileSync(join(root, 'retry.ts'), 'export const tries = 3;\n');
  return root;
}

/** The processes running with `HOME=home` in their environment: the face's, and what it started. */
function processesWithHome(home: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`HOME=${home}`) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

const thoughtsOf = (client: Client) => client.updates.map((update) => (update.sessionUpdate === 'agent_thought_chunk' && update.content.type === 'text' ? update.content.text : '')).join('');
const answerOf = (client: Client) => client.updates.map((update) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '')).join('');

describe('buckley-lsp acp', () => {
  it('answers a prompt, streamed, and puts each permission to the user with our risk in words: approved, the agent goes on', async () => {
    const client = await face({ files: false });
    const cwd = workspace();
    const session = await client.context.request('session/new', { cwd, mcpServers: [] });
    expect(session.modes).toMatchObject({ currentModeId: 'task', availableModes: [{ id: 'task' }, { id: 'ask', name: 'Ask (read-only)' }] });
    const done = await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(done.stopReason).toBe('end_turn');
    // Reading the README is low risk, within approvals.autoApprove: not asked. The edit is.
    expect(client.permissions).toHaveLength(1);
    expect(client.permissions[0]!.toolCall).toMatchObject({ title: 'Edit config.json (medium)', kind: 'edit', content: [{ type: 'content', content: { type: 'text', text: expect.stringMatching(/^medium — /) } }] });
    expect(answerOf(client)).toContain('Permission to read: yes; permission to edit: yes.');
    // The permission is about the tool call the panel shows (the agent's id), not another; its
    // input the value it was; once decided the call keeps its own title.
    const calls = client.updates.filter((update) => update.sessionUpdate === 'tool_call');
    const asked = client.permissions[0]!.toolCall.toolCallId;
    expect(calls.find((call) => call.toolCallId === asked)).toMatchObject({ title: 'Edit config.json', rawInput: { path: 'config.json', content: '{}' } });
    expect(client.updates).toContainEqual({ sessionUpdate: 'tool_call_update', toolCallId: asked, title: 'Edit config.json' });
  });

  it("runs as the README's JetBrains agent server (acp.json) too", async () => {
    const client = await face({ snippet: 'jetbrains-acp', files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    expect((await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] })).stopReason).toBe('end_turn');
    expect(client.initialized.agentInfo).toMatchObject({ name: 'buckley-lsp', title: 'Buckley: gemini --acp' });
  });

  it("has the Neovim and Emacs plugins' snippets start the same agent server (the plugins themselves are not installed here)", () => {
    const zed = JSON.parse(readmeSnippet('zed-agent-server')).agent_servers.Buckley;
    const lua = readmeSnippet('neovim-acp-plugins');
    const quoted = (text: string) => [...text.matchAll(/"([^"]*)"/g)].map((match) => match[1]);
    // avante: command and args; CodeCompanion: the whole command line.
    expect(/command = "([^"]+)", args = \{ ([^}]*) \}/.exec(lua)!.slice(1).flatMap((part, i) => (i === 0 ? [part] : quoted(part)))).toEqual([zed.command, ...zed.args]);
    expect(quoted(/commands = \{ default = \{ ([^}]*) \}/.exec(lua)![1]!)).toEqual([zed.command, ...zed.args]);
    const elisp = readmeSnippet('emacs-agent-shell');
    expect([/:command "([^"]+)"/.exec(elisp)![1], ...quoted(/:command-params '\(([^)]*)\)/.exec(elisp)![1]!)]).toEqual([zed.command, ...zed.args]);
  });

  it("serves a standalone coordinator's agent (--coordinator): the answer streamed, each permission put to the user", async () => {
    const coordinator = await startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT]);
    stops.push(() => coordinator.stop());
    const client = await face({ files: false, extraArgs: ['--coordinator', coordinator.address] });
    expect(client.initialized.agentInfo?.title).toBe(`Buckley: the coordinator at ${coordinator.address}`);
    // The team's coordinator holds its agents' keys: nothing to authenticate here.
    expect(client.initialized.authMethods).toEqual([]);
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    expect((await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] })).stopReason).toBe('end_turn');
    expect(client.permissions.map((request) => request.toolCall.title)).toEqual(['Edit config.json (medium)']);
    expect(answerOf(client)).toContain('Permission to read: yes; permission to edit: yes.');
    // Decided in the panel, recorded by the standalone coordinator, which ran the agent.
    expect(coordinator.said()).toMatch(/for Edit config\.json \(medium\): allow_once \(decided by the editor\)/);
  });

  it("shows the coordinator's lines about a turn in the panel: a prompt waiting behind another is queued, and says so", async () => {
    const coordinator = await startCoordinatorProcess(['--max-running', '1', '--agent', process.execPath, SCRIPTED_AGENT]);
    stops.push(() => coordinator.stop());
    const client = await face({ files: false, extraArgs: ['--coordinator', coordinator.address] });
    const first = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const second = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const holding = client.context.request('session/prompt', { sessionId: first.sessionId, prompt: [{ type: 'text', text: 'HANG' }] });
    while (!answerOf(client).includes('Thinking')) await new Promise((resolve) => setImmediate(resolve));
    const waiting = client.context.request('session/prompt', { sessionId: second.sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] });
    while (!thoughtsOf(client).includes('Queued, next in line')) await new Promise((resolve) => setTimeout(resolve, 20));
    await client.context.notify('session/cancel', { sessionId: first.sessionId });
    expect((await holding).stopReason).toBe('cancelled');
    expect((await waiting).stopReason).toBe('end_turn');
  });

  it('shows no line about a turn that did not wait: an agent that starts and answers at once', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    for (let turn = 0; turn < 2; turn++) await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] });
    expect(answerOf(client)).toContain('ok');
    // No "Starting …" on every turn: the panel shows what the agent does, and what it waits for.
    expect(thoughtsOf(client)).toBe('');
  });

  it("offers the agent's own modes that ask first beside Task and Ask, never one that runs tools unasked; a turn runs in the one chosen", async () => {
    const client = await face({ files: false, agentFlags: ['--modes'] });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    expect(session.modes?.availableModes.map((mode) => [mode.id, mode.name])).toEqual([
      ['task', 'Task'],
      ['task:plan', 'Task: Plan'],
      ['ask', 'Ask (read-only)'],
    ]);
    await expect(client.context.request('session/set_mode', { sessionId: session.sessionId, modeId: 'task:yolo' })).rejects.toMatchObject({ message: expect.stringContaining('no mode task:yolo: the modes are task, task:plan, ask') });
    await client.context.request('session/set_mode', { sessionId: session.sessionId, modeId: 'task:plan' });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'What is first?' }] });
    expect(answerOf(client)).toContain('[mode plan]');
    client.updates.length = 0;
    await client.context.request('session/set_mode', { sessionId: session.sessionId, modeId: 'task' });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'What is first?' }] });
    expect(answerOf(client)).toContain('[mode default]');
  });

  it('runs each session in its own mode, two at once, and leaves the mode every other task runs in as it was', async () => {
    const client = await face({ files: false, agentFlags: ['--modes'] });
    const cwd = workspace();
    const planning = await client.context.request('session/new', { cwd, mcpServers: [] });
    const working = await client.context.request('session/new', { cwd, mcpServers: [] });
    await client.context.request('session/set_mode', { sessionId: planning.sessionId, modeId: 'task:plan' });
    await Promise.all([
      client.context.request('session/prompt', { sessionId: planning.sessionId, prompt: [{ type: 'text', text: 'ECHO PROMPT from the planning session' }] }),
      client.context.request('session/prompt', { sessionId: working.sessionId, prompt: [{ type: 'text', text: 'ECHO PROMPT from the working session' }] }),
    ]);
    expect(answerOf(client)).toMatch(/\[mode plan\]\n\n~~~~\nECHO PROMPT from the planning session/);
    expect(answerOf(client)).toMatch(/\[mode default\]\n\n~~~~\nECHO PROMPT from the working session/);
    // Tasks still run in the mode that asks first: a new session is offered Plan beside it, as before.
    const another = await client.context.request('session/new', { cwd, mcpServers: [] });
    expect(another.modes?.availableModes.map((mode) => mode.id)).toEqual(['task', 'task:plan', 'ask']);
  });

  it("keeps the files a prompt carries within the user's context budget (context.maxBytes), as the editor's context is", async () => {
    const client = await face({ files: false, extraArgs: ['--context.maxBytes', '100000'] });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const big = `${'const line = 1;\n'.repeat(200_000)}`;
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'PROMPT SIZE' }, { type: 'resource', resource: { uri: 'file:///w/big.ts', text: big } }] });
    const bytes = Number(/prompt bytes: (\d+)/.exec(answerOf(client))![1]);
    expect(bytes).toBeGreaterThan(50_000);
    expect(bytes).toBeLessThanOrEqual(100_000);
  });

  it("gives the agent the client's MCP servers (session/new), with every session", async () => {
    const client = await face({ files: false });
    const mcpServers: acp.McpServer[] = [
      { name: 'notes', command: '/usr/bin/notes-mcp', args: ['--stdio'], env: [{ name: 'NOTES_DIR', value: '/tmp/notes' }] },
    ];
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'MCP SERVERS' }] });
    expect(answerOf(client)).toContain('notes (stdio: /usr/bin/notes-mcp --stdio; env NOTES_DIR=/tmp/notes)');
  });

  it('denied, the agent is told no', async () => {
    const client = await face({ files: false, decide: () => 'reject' });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(answerOf(client)).toContain('permission to edit: no.');
  });

  it("writes through the client's files where it offers them: the change in its buffer, nothing on disk", async () => {
    const client = await face({ files: true });
    const cwd = workspace();
    const file = join(cwd, 'retry.ts');
    const session = await client.context.request('session/new', { cwd, mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: `REPLACE ${file} "tries = 3" "tries = 5"` }] });
    expect(client.permissions.map((request) => request.toolCall.title)).toEqual([expect.stringMatching(/retry\.ts/)]);
    expect(client.written.get(file)).toBe('export const tries = 5;\n');
    expect(readFileSync(file, 'utf8')).toBe('export const tries = 3;\n');
  });

  it('keeps the read-only mode read-only: nothing asked, the edit refused', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/set_mode', { sessionId: session.sessionId, modeId: 'ask' });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(client.updates).toContainEqual({ sessionUpdate: 'current_mode_update', currentModeId: 'ask' });
    expect(client.permissions).toEqual([]);
    expect(answerOf(client)).toContain('permission to edit: no.');
  });

  it("lists the agent's /commands and its models; the model chosen answers the next prompt, a command runs as the agent's", async () => {
    const client = await face({ files: false, agentFlags: ['--controls'] });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const told = (kind: string, more: (update: any) => boolean = () => true) => client.updates.find((update) => update.sessionUpdate === kind && more(update));
    // The models come with the agent's first session; its commands once a session of it has lived (after a turn).
    while (!told('config_option_update')) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(told('config_option_update')).toMatchObject({ configOptions: [{ id: 'model', category: 'model', type: 'select', currentValue: 'swift', options: [{ value: 'swift', name: 'Swift' }, { value: 'deep', name: 'Deep Thought' }] }] });
    const chosen = await client.context.request('session/set_config_option', { sessionId: session.sessionId, configId: 'model', value: 'deep' });
    expect(chosen.configOptions[0]).toMatchObject({ currentValue: 'deep' });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(answerOf(client)).toContain('[model deep]');
    const listed = (update: any) => update.availableCommands.length > 0;
    while (!told('available_commands_update', listed)) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(told('available_commands_update', listed)).toEqual({
      sessionUpdate: 'available_commands_update',
      availableCommands: [
        { name: 'review', description: 'Review the changes', input: { hint: 'what to review' } },
        { name: 'init', description: 'Write an AGENTS.md for this project' },
      ],
    });
    client.updates.length = 0;
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: '/review the diff' }] });
    expect(answerOf(client)).toContain('reviewed: the diff');
  });

  it('keeps its sessions across a restart: listed, loaded with their turns replayed, and followed up', async () => {
    const before = await face({ files: false });
    const cwd = workspace();
    const { sessionId } = await before.context.request('session/new', { cwd, mcpServers: [] });
    await before.context.request('session/set_mode', { sessionId, modeId: 'ask' });
    await before.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'What is first?' }] });
    const firstAnswer = answerOf(before);
    const exited = new Promise((resolve) => before.process.once('exit', resolve));
    before.process.stdin!.end();
    await exited;

    const after = await face({ files: false, home: before.home });
    expect((await after.context.request('session/list', {})).sessions).toEqual([{ sessionId, cwd, title: 'What is first?', updatedAt: expect.any(String) }]);
    expect((await after.context.request('session/list', { cwd: '/elsewhere' })).sessions).toEqual([]);
    const loaded = await after.context.request('session/load', { sessionId, cwd, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('ask');
    expect(after.updates.slice(0, 2)).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'What is first?' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: firstAnswer } },
    ]);
    after.updates.length = 0;
    await after.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'RECALL' }] });
    // A new agent process: the earlier turn came with the prompt.
    expect(answerOf(after)).toContain('earlier turns in the prompt: [What is first?]');
  });

  it('stops its agent when the client stops it (SIGTERM): nothing it started goes on', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] });
    expect(processesWithHome(client.home).length).toBeGreaterThan(1);
    const exited = new Promise((resolve) => client.process.once('exit', resolve));
    client.process.kill('SIGTERM');
    await exited;
    expect(processesWithHome(client.home)).toEqual([]);
  });

  it('cancels a turn mid-answer (session/cancel, as ACP sends it or as a request): it ends cancelled', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const hang = async (cancel: () => Promise<unknown>) => {
      const before = answerOf(client).split('Thinking').length;
      const turn = client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'HANG' }] });
      while (answerOf(client).split('Thinking').length === before) await new Promise((resolve) => setImmediate(resolve));
      await cancel();
      return (await turn).stopReason;
    };
    expect(await hang(() => client.context.notify('session/cancel', { sessionId: session.sessionId }))).toBe('cancelled');
    expect(await hang(() => (client.context.request as (method: string, params: unknown) => Promise<unknown>)('session/cancel', { sessionId: session.sessionId }))).toBe('cancelled');
  });

  it("passes the agent's questions on: a choice as the client's form, answered with the option chosen", async () => {
    const client = await face({ files: false, elicit: (request) => ({ action: 'accept', content: { answer: String(((request as any).requestedSchema.properties.answer.oneOf as { title: string }[]).findIndex((option) => option.title === 'Chocolate')) } }) });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'ASK USER pick' }] });
    expect(client.elicitations).toMatchObject([{ sessionId: session.sessionId, mode: 'form', message: 'Which one? (pick)', requestedSchema: { properties: { answer: { oneOf: [{ title: 'Vanilla' }, { title: 'Chocolate' }, { title: 'Strawberry' }] } } } }]);
    expect(answerOf(client)).toContain('elicitation: accept {"flavour":"c"}');
  });

  it('a typed answer as a form of one text field; declined, the agent is told', async () => {
    const client = await face({ files: false, elicit: (request) => ((request as any).requestedSchema.properties.answer.title === 'Your name' ? { action: 'accept', content: { answer: 'Ada' } } : { action: 'decline' }) });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'ASK USER text' }] });
    expect(answerOf(client)).toContain('elicitation: accept {"name":"Ada"}');
    client.updates.length = 0;
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'ASK USER other' }] });
    expect(answerOf(client)).toContain('elicitation: decline');
  });

  it('a client without forms gets a choice as a permission request whose options are the choices', async () => {
    const client = await face({ files: false, decide: (request) => request.options.find((option) => option.name === 'Strawberry')?.optionId ?? 'reject' });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'ASK USER pick' }] });
    expect(client.permissions[0]).toMatchObject({ toolCall: { title: 'Which one? (pick)' }, options: [{ name: 'Vanilla' }, { name: 'Chocolate' }, { name: 'Strawberry' }, { name: 'Decline', kind: 'reject_once' }] });
    expect(answerOf(client)).toContain('elicitation: accept {"flavour":"s"}');
  });

  it("tells the panel what the turn used and cost (usage_update), as the agent said it", async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'COSTLY' }] });
    const usage = client.updates.filter((update) => update.sessionUpdate === 'usage_update');
    expect(usage.at(-1)).toEqual({ sessionUpdate: 'usage_update', used: 42_000, size: 200_000, cost: { amount: 0.0123, currency: 'USD' } });
  });

  it("offers the agent's ways to authenticate, and says what a way lacks: which variable, where to set it", async () => {
    const client = await face({ files: false });
    expect(client.initialized.authMethods).toEqual([
      { id: 'gemini-cli-api-key', name: 'Gemini CLI API key', description: expect.stringContaining('GEMINI_API_KEY') },
      { id: 'gemini-cli-login', name: 'Gemini CLI login', description: 'Run `gemini` in a terminal and log in' },
    ]);
    await expect(client.context.request('authenticate', { methodId: 'gemini-cli-api-key' })).rejects.toMatchObject({ code: -32000, message: expect.stringContaining("GEMINI_API_KEY (or GOOGLE_API_KEY, GOOGLE_APPLICATION_CREDENTIALS) is not set: set it in the agent server's environment") });
    // Logged in its own way: the agent, started, is the judge.
    await expect(client.context.request('authenticate', { methodId: 'gemini-cli-login' })).resolves.toEqual({});
    await expect(client.context.request('authenticate', { methodId: 'password' })).rejects.toMatchObject({ message: expect.stringContaining('no way to authenticate called password: gemini-cli-api-key, gemini-cli-login') });
    // On Vertex AI, its login is Google Cloud's: no key lacks.
    const onVertex = await face({ files: false, env: { GOOGLE_GENAI_USE_VERTEXAI: 'true', GOOGLE_CLOUD_PROJECT: 'p' } });
    await expect(onVertex.context.request('authenticate', { methodId: 'gemini-cli-api-key' })).resolves.toEqual({});
  });

  it('closes a session (session/close): its turn cancelled, the session gone, its history kept', async () => {
    const client = await face({ files: false });
    expect(client.initialized.agentCapabilities?.sessionCapabilities).toMatchObject({ close: {} });
    const { sessionId } = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const turn = client.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'HANG' }] });
    while (!answerOf(client).includes('Thinking')) await new Promise((resolve) => setImmediate(resolve));
    await client.context.request('session/close', { sessionId });
    expect((await turn).stopReason).toBe('cancelled');
    await expect(client.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] })).rejects.toMatchObject({ code: -32002 });
  });

  it('gives the agent a pasted image as ACP gives images (its bytes intact); an agent that takes none gets none, and the panel is told', async () => {
    const bytes = randomBytes(3000);
    const image: acp.ContentBlock = { type: 'image', mimeType: 'image/png', data: bytes.toString('base64'), uri: 'file:///tmp/shot.png' };
    const seen = `image/png 3000 bytes sha256:${createHash('sha256').update(bytes).digest('hex').slice(0, 12)} (file:///tmp/shot.png)`;
    const client = await face({ files: false, agentFlags: ['--images'] });
    expect(client.initialized.agentCapabilities?.promptCapabilities).toMatchObject({ image: true });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'IMAGES: what is wrong here?' }, image] });
    expect(answerOf(client)).toContain(`images: ${seen}`);

    const bare = await face({ files: false });
    const other = await bare.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await bare.context.request('session/prompt', { sessionId: other.sessionId, prompt: [{ type: 'text', text: 'IMAGES: what is wrong here?' }, image] });
    expect(answerOf(bare)).toContain('images: none');
    // A picture pasted alone is a prompt too.
    client.updates.length = 0;
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [image] });
    expect(answerOf(client)).toContain('You asked: (the prompt is the image attached)');
    expect(thoughtsOf(bare)).toContain('takes no images: shot.png left out of the prompt');
    // Its history names what each prompt carried (a replay has no bytes).
    client.updates.length = 0;
    await client.context.request('session/load', { sessionId: session.sessionId, cwd: workspace(), mcpServers: [] });
    expect(client.updates.filter((update) => update.sessionUpdate === 'user_message_chunk').map((update) => (update as { content: { text: string } }).content.text)).toEqual(['IMAGES: what is wrong here?\n(attached: shot.png)', '(attached: shot.png)']);
  });

  it("gives an OpenAI-compatible model the pasted image as an image part of the user's message", async () => {
    const model = await openaiChatModel(() => ({ text: 'A red square.' }));
    stops.push(() => model.close());
    const data = randomBytes(64).toString('base64');
    const client = await face({ files: false, extraArgs: ['--agent.driver', 'openai', '--agent.openai.baseUrl', `${model.url}`, '--agent.openai.model', 'vision-model'] });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'What is this?' }, { type: 'image', mimeType: 'image/jpeg', data }] });
    expect(answerOf(client)).toContain('A red square.');
    const user = model.calls.at(-1)!.body.messages.at(-1);
    expect(user.content).toEqual([{ type: 'text', text: expect.stringContaining('Attached: a JPEG image (the image follows).') }, { type: 'image_url', image_url: { url: `data:image/jpeg;base64,${data}` } }]);
  });

  it('starts agent processes one at a time, started again after a crash too: an agent that locks its store at start is never started twice at once', async () => {
    const client = await face({ files: false, agentFlags: ['--exclusive-start'] });
    const cwd = workspace();
    const task = await client.context.request('session/new', { cwd, mcpServers: [] });
    const ask = await client.context.request('session/new', { cwd, mcpServers: [] });
    await client.context.request('session/set_mode', { sessionId: ask.sessionId, modeId: 'ask' });
    const both = (text: string) => Promise.allSettled([task, ask].map(({ sessionId }) => client.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })));
    // Its ask's process and its task's, each in its sandbox: started at once, one after the other.
    expect((await both('INSTANT')).map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
    await both('CRASH NOW');
    client.updates.length = 0;
    // Both died: both started again at once, for the next prompts.
    expect((await both('INSTANT')).map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.stopReason : String(outcome.reason)))).toEqual(['end_turn', 'end_turn']);
    expect(client.stderr()).not.toContain('database is locked');
  });

  it("runs the agent's commands in the client's terminals, shown in the panel, inside the agent's sandbox with its environment alone", async () => {
    const client = await face({ files: true, terminals: true, env: { DEPLOY_TOKEN: 'hunter2' } });
    const cwd = workspace();
    const session = await client.context.request('session/new', { cwd, mcpServers: [] });
    const line = 'echo made > made.txt; env | grep -c -e DEPLOY_TOKEN -e EDITOR_SHELL_API_KEY; touch /etc/buckley-escape 2>&1 || echo blocked';
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: `TERMINAL ${line}` }] });
    // Run by the client: bubblewrap around the command, the environment cleared and given.
    expect(client.terminalCreates).toHaveLength(1);
    const created = client.terminalCreates[0]!;
    expect(created.command).toMatch(/\/bwrap$/);
    expect(created.args).toEqual(expect.arrayContaining(['--clearenv', '/bin/sh', '-c', line]));
    expect(created.args!.join(' ')).not.toContain('hunter2');
    // Shown in the panel as a terminal, under the command's own words.
    expect(client.updates).toContainEqual(expect.objectContaining({ sessionUpdate: 'tool_call', title: line, kind: 'execute', content: [{ type: 'terminal', terminalId: 'zed-terminal-1' }] }));
    // It ran: the workspace written (a task's), nothing else, no secret of the face's environment nor of the client's own.
    expect(answerOf(client)).toMatch(/terminal: exit 0\n0\n(touch: .*\n)?blocked/);
    expect(existsSync('/etc/buckley-escape')).toBe(false);
    // The file it made is the client's (its review), not left on disk — not even empty.
    expect(client.written.get(join(cwd, 'made.txt'))).toBe('made\n');
    expect(existsSync(join(cwd, 'made.txt'))).toBe(false);
  });

  it("runs an approved command in the agent's sandbox when the client's terminal refuses it, and says so in the log", async () => {
    const client = await face({ files: false, terminals: 'refused' });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'TERMINAL echo still ran' }] });
    expect(client.terminalCreates).toHaveLength(1);
    expect(answerOf(client)).toContain('terminal: exit 0\nstill ran');
    expect(client.stderr()).toContain("the client's terminal did not run `echo still ran`");
  });
});
