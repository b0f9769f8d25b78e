/**
 * The real agents' own controls, over stdio through buckley-lsp, each against its model's
 * stand-in: what it offers reaches `buckley/status` (its commands, its models); a model chosen in
 * the editor is the one its model's API is then asked for (Claude Code's two adapters, Codex,
 * Gemini CLI; Qwen Code offers only the model it is configured with); its commands are
 * completed after `/` in an answer document; a mode chosen in the editor holds its tasks (Claude
 * Code, Gemini CLI and Qwen Code tell their model they plan; Codex has one mode that asks first,
 * nothing to choose); an MCP server given in the settings is offered to
 * its model and reached, and so are buckley-lsp's editor tools (a buffer's unsaved edits): Claude
 * Code, Codex, Gemini CLI and Qwen Code (in a folder they trust; Qwen Code's model reaches MCP tools
 * through its tool_search / tool_call, and in a task only: its plan mode refuses them).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSetup, isTurn, REAL_AGENTS, requireAgent, stepsScript, type RealAgent } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import type { ModelCall, ModelServer, Reply } from '../helpers/models/standIn.js';
import { FIXTURES } from '../helpers/paths.js';

/** A minimal MCP server over stdio, with one tool: echo. */
const ECHO_MCP = `${FIXTURES}echo-mcp.mjs`;

/**
 * The model's step toward calling an MCP tool whose name matches `pattern` with `input`: the tool
 * itself where the agent declares it; where it keeps MCP tools back (Qwen Code), its `tool_search`
 * (for `search`), then its `tool_call` with the name found; then `done`.
 */
function mcpStep(call: ModelCall, pattern: RegExp, search: string, input: Record<string, unknown>, done: string): Reply {
  const declared = call.tools.find((name) => pattern.test(name));
  if (declared) return call.toolResults.length === 0 ? { tools: [{ name: declared, input }] } : { text: done };
  if (!call.tools.includes('tool_search')) return { text: `no MCP tool among ${call.tools.join(', ')}` };
  // A turn begins with a search (Qwen Code speaks OpenAI's chat API: a new turn ends with the user's words).
  if (call.body.messages?.at(-1)?.role !== 'tool') return { tools: [{ name: 'tool_search', input: { query: search } }] };
  const last = call.toolResults.at(-1) ?? '';
  // The tool's own answer came last: done.
  if (!/<functions>|No tools found/.test(last)) return { text: done };
  const found = [...last.matchAll(/mcp__[\w-]+__\w+/g)].map((match) => match[0]).find((name) => pattern.test(name));
  return found ? { tools: [{ name: 'tool_call', input: { name: found, arguments: input } }] } : { text: NOT_FOUND };
}

/**
 * What the model says when the search found nothing: Qwen Code connects to MCP servers while a
 * session's first turn starts, and a turn's search sees only those connected when it began.
 */
const NOT_FOUND = 'tool_search found no MCP tool yet';

/**
 * A task to its end, its answer; where the agent had not connected its MCP servers yet (NOT_FOUND),
 * followed up once in its conversation — the same agent session, as its user would ask again.
 */
async function taskReachingMcp(client: TestClient, words: string): Promise<string> {
  const { taskId } = await client.request('buckley/executeTask', { task: words });
  const answer = await answerLogged(client, words);
  if (!answer.includes(NOT_FOUND)) return answer;
  await client.request('workspace/executeCommand', { command: 'buckley.followUp', arguments: [{ conversation: `task-${taskId}`, question: `${words} Again.` }] });
  return answerLogged(client, `${words} Again.`);
}

async function answerLogged(client: TestClient, words: string): Promise<string> {
  return (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${words}"`))).message;
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

async function session(agent: RealAgent): Promise<{ client: TestClient; model: ModelServer }> {
  const { model, options, cleanup } = await agentSetup(agent, stepsScript([{ text: 'The answer.' }]));
  cleanups.push(cleanup);
  return { client: await start({ client: 'neovim-0.10.4', ...options }), model };
}

describe.each(REAL_AGENTS)('$name, its controls', (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed && !agent.noCommands)('lists its commands in the status and completes them after / in an answer document', async () => {
    const { client } = await session(agent);
    await client.request('buckley/ask', { question: 'What is this project?' });
    // The agent lists its commands when it likes (Codex: a moment after its session is made).
    await client.waitFor('window/logMessage', (p) => p.message.includes(`${agent.title} lists `));
    const status = await client.request('buckley/status', {});
    expect(status.agent.name).toBe(agent.title);
    const names = status.agent.commands.map((command: any) => command.name);
    expect(names).toContain('init');
    const shown = await client.waitFor('window/showDocument');
    const text = `${readFileSync(fileURLToPath(shown.uri), 'utf8')}/in`;
    await client.open(fileURLToPath(shown.uri), text, 'markdown');
    const line = text.split('\n').length - 1;
    const items = await client.request('textDocument/completion', { textDocument: { uri: shown.uri }, position: { line, character: 3 } });
    expect(items.map((item: any) => item.label)).toEqual(names.map((name: string) => `/${name}`));
    expect(items.find((item: any) => item.label === '/init').documentation).toBe(status.agent.commands.find((command: any) => command.name === 'init').description);
  });

  it.runIf(installed && agent.otherModel)('uses the model chosen in the editor: its API is asked for that model', async () => {
    const { id, requested } = agent.otherModel!;
    const { client, model } = await session(agent);
    await client.request('buckley/ask', { question: 'First?' });
    const before = (await client.request('buckley/status', {})).agent;
    expect(before.models.map((choice: any) => choice.id)).toContain(id);
    expect(before.model).not.toBe(id);
    // The model asked for: in the path (Gemini) or the body's `model`.
    const asked = (call: ModelServer['calls'][number]) => `${call.path} ${call.body.model ?? ''}`;
    expect(asked(model.turns().at(-1)!)).not.toMatch(requested);

    expect(await client.request('workspace/executeCommand', { command: 'buckley.chooseModel', arguments: [{ model: id }] })).toMatchObject({ model: id });
    await client.request('buckley/ask', { question: 'Second?' });
    expect(asked(model.turns().at(-1)!)).toMatch(requested);
    expect((await client.request('buckley/status', {})).agent).toMatchObject({ model: id, modelSource: 'chosen in the editor' });
  });
});

describe.each(REAL_AGENTS)('$name, its modes', (agent) => {
  const installed = requireAgent(agent);
  /** What the agents tell their model in their plan mode (Claude Code, Qwen Code and opencode: a reminder; Gemini CLI: its approval mode; Copilot: a prefix; Cline: its system prompt; Kilo: its system prompt in its `ask` mode, which it offers first; Droid: a reminder in its `spec` mode). */
  const PLANNING = /Plan mode is active|# Active Approval Mode: Plan|Plan mode ACTIVE|\[\[PLAN\]\]|You are in Plan mode\.|You are in Ask mode|Spec mode is active\./;

  it.runIf(installed)('runs tasks in the mode chosen in the editor, among those that ask first; asks stay in its read-only mode', async () => {
    const { client, model } = await session(agent);
    const task = async (words: string) => {
      const from = model.turns().length;
      await client.request('buckley/executeTask', { task: words });
      await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${words}"`));
      return model.turns().slice(from).map((call) => JSON.stringify(call.body)).join('\n');
    };
    // First a task in a fresh session (an ask before it would leave its plan-mode words in the history).
    expect(await task('Task one.')).not.toMatch(PLANNING);
    const before = (await client.request('buckley/status', {})).agent;
    // Never a mode that runs tools unasked.
    expect(before.taskModes).not.toContainEqual(expect.stringMatching(/yolo|bypass|full-access|accept|auto/i));
    expect(before.taskModes).toContain(before.taskMode);
    const plan = before.taskModes.find((id: string) => id !== before.taskMode);
    if (!plan) {
      // Codex: read-only is its one mode that asks first — nothing to choose.
      expect([agent.title, before.taskModes]).toEqual(['Codex', ['read-only']]);
      return;
    }
    expect(plan).toBe(agent.planMode ?? 'plan');
    expect(await client.request('workspace/executeCommand', { command: 'buckley.chooseMode', arguments: [{ mode: plan }] })).toMatchObject({ mode: plan });
    expect(await task('Task two.')).toMatch(PLANNING);
    expect((await client.request('buckley/status', {})).agent).toMatchObject({ taskMode: plan, modeSource: 'chosen in the editor', askMode: before.askMode });
    expect(client.all('window/logMessage').map((p) => p.message).join('\n')).not.toContain('did not take its mode');
  });
});

describe.each(REAL_AGENTS.filter((agent) => agent.mcpTools))('$name, given an MCP server', (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed)("offers its model the MCP server's tool (buckley.agent.mcpServers), and a task's call of it, approved, reaches the server", async () => {
    // The model calls the tool the agent made of the server's `echo`, whatever the agent names it.
    const { model, options, cleanup } = await agentSetup(agent, (call) => {
      if (!isTurn(call)) return { text: 'ok' };
      return mcpStep(call, /echo/i, 'echo', { text: 'PING-42' }, 'Echoed.');
    }, { mcpServers: { echo: { command: process.execPath, args: [ECHO_MCP] } } });
    cleanups.push(cleanup);
    agent.trust?.((options.initialize.initializationOptions as any).agent.env.HOME, fileURLToPath(options.initialize.rootUri as string));
    const client = await start({
      ...options,
      initialize: { ...options.initialize, capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } },
      handlers: { 'buckley/approveTool': () => ({ approved: true }) },
    });
    expect(await taskReachingMcp(client, 'Echo PING-42 with the echo tool.')).toContain('Echoed.');
    expect(model.turns().flatMap((call) => call.toolResults).join('\n')).toContain('echo: PING-42');
  });
});

describe.each(REAL_AGENTS.filter((agent) => agent.mcpTools))("$name, given buckley-lsp's editor tools", (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed)("reads a file as the editor has it, unsaved edits included, with buckley-lsp's editor tools — in an ask (Qwen Code: a task), unasked", async () => {
    // The model reads notes.ts with the editor server's read_file, whatever the agent names it.
    const { model, options, cleanup } = await agentSetup(agent, (call) => {
      if (!isTurn(call)) return { text: 'ok' };
      return mcpStep(call, /buckley.editor.*read_file/, 'buckley-editor read_file', { path: 'notes.ts' }, 'Read it.');
    });
    cleanups.push(cleanup);
    const root = fileURLToPath(options.initialize.rootUri as string);
    agent.trust?.((options.initialize.initializationOptions as any).agent.env.HOME, root);
    writeFileSync(join(root, 'notes.ts'), 'export const saved = 1;\n');
    const client = await start({ client: 'neovim-0.10.4', ...options });
    const uri = await client.open(join(root, 'notes.ts'), 'export const saved = 1;\n');
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: 'export const saved = 1;\nexport const typed = 2; // UNSAVED-77\n' }] });
    // Qwen Code's plan mode (an ask's) refuses every MCP tool that would need a confirmation, read-only or not: a task's then.
    const answer = agent.mcpInAsks === false ? await taskReachingMcp(client, 'What does notes.ts hold?') : (await client.request('buckley/ask', { question: 'What does notes.ts hold?' })).answer;
    expect(answer).toContain('Read it.');
    // Nobody was asked: a read of ours is a low-risk read, whatever the agent calls it.
    expect(client.all('window/showMessageRequest')).toEqual([]);
    expect(model.turns().flatMap((call) => call.toolResults).join('\n')).toContain('UNSAVED-77');
    expect(readFileSync(join(root, 'notes.ts'), 'utf8')).not.toContain('UNSAVED-77');
  });
});
