/**
 * The agent's own controls over stdio, with the scripted agent offering two models (a config
 * option of category "model") and two commands (`--controls`): the status lists them; "choose
 * model" in a prompt (Neovim 0.10) and as a code action per model (Helix, no prompts); the choice
 * reaches the agent's sessions and outlives a restart; `buckley.agent.model` picks one by name;
 * `/commands` are completed in an answer document and run as the agent's commands.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();
const AGENT = `${process.execPath} ${SCRIPTED_AGENT} --controls`;

async function ask(client: TestClient, question: string): Promise<string> {
  return (await client.request('buckley/ask', { question })).answer;
}

/** Runs a task to its end: the agent's answer, as logged. */
async function runTask(client: TestClient, task: string): Promise<string> {
  await client.request('buckley/executeTask', { task });
  return (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${task}"`))).message;
}

describe("the agent's models", () => {
  it('are listed in the status, chosen in a prompt, used by the next turn, and remembered across a restart', async () => {
    const stateDir = tempDir('buckley-controls');
    const client = await start({ client: 'neovim-0.10.4', stateDir, env: { BUCKLEY_AGENT: AGENT }, answerMessageRequest: (params) => params.actions.find((action: any) => action.title === 'Deep Thought') ?? null });
    expect(await ask(client, 'PLAN one')).toContain('[model swift]');
    const status = await client.request('buckley/status', {});
    expect(status.agent).toEqual({
      name: 'scripted-agent.mjs',
      commands: [
        { name: 'review', description: 'Review the changes', hint: 'what to review' },
        { name: 'init', description: 'Write an AGENTS.md for this project' },
      ],
      models: [
        { id: 'swift', name: 'Swift' },
        { id: 'deep', name: 'Deep Thought' },
      ],
      model: 'swift',
      modelSource: "the agent's default",
      modes: [],
    });
    const { uri } = await client.openFixture('workspace/retry.ts');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
    const choose = actions.find((action: any) => action.title === 'Buckley: choose model (now Swift)');
    expect(choose.command).toEqual({ title: 'Buckley: choose model (now Swift)', command: 'buckley.chooseModel', arguments: [] });

    const chosen = await client.request('workspace/executeCommand', choose.command);
    expect(chosen).toEqual({ model: 'deep', models: ['swift', 'deep'] });
    const prompt = client.all('window/showMessageRequest').at(-1);
    expect(prompt.actions.map((action: any) => action.title)).toEqual(['Swift (now)', 'Deep Thought']);
    await client.waitFor('window/showMessage', (p) => p.message === 'model: Deep Thought from now on (scripted-agent.mjs)');
    // The agent's idle session (the first ask's conversation is over, a new one starts) takes it too.
    expect(await ask(client, 'PLAN two')).toContain('[model deep]');
    expect((await client.request('buckley/status', {})).agent).toMatchObject({ model: 'deep', modelSource: 'chosen in the editor' });
    await client.shutdown();

    const again = await start({ client: 'neovim-0.10.4', stateDir, env: { BUCKLEY_AGENT: AGENT } });
    expect(await ask(again, 'PLAN three')).toContain('[model deep]');
  });

  it('in Helix, which has no prompts: a code action per model not in use, each carrying its choice', async () => {
    const client = await start({ client: 'helix-25.01.1', env: { BUCKLEY_AGENT: AGENT } });
    await ask(client, 'PLAN one');
    await client.request('buckley/status', {});
    const { uri } = await client.openFixture('workspace/retry.ts');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
    const models = actions.filter((action: any) => action.title.startsWith('Buckley: use model'));
    expect(models.map((action: any) => action.command)).toEqual([{ title: 'Buckley: use model Deep Thought', command: 'buckley.chooseModel', arguments: [{ model: 'deep' }] }]);
    await client.request('workspace/executeCommand', models[0].command);
    expect(await ask(client, 'PLAN two')).toContain('[model deep]');
    // Asked without a model, it says how to choose one here.
    await client.request('workspace/executeCommand', { command: 'buckley.chooseModel', arguments: [] });
    await client.waitFor('window/showMessage', (p) => p.message === 'model: Deep Thought — code action "use model …" changes it');
  });

  it('buckley.agent.model picks one by name; one the agent does not offer is named in the log, and its default used', async () => {
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: AGENT }, initialize: { initializationOptions: { agent: { model: 'deep thought' } } } });
    expect(await ask(client, 'PLAN one')).toContain('[model deep]');
    expect((await client.request('buckley/status', {})).agent).toMatchObject({ model: 'deep', modelSource: 'buckley.agent.model' });

    const other = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: AGENT }, initialize: { initializationOptions: { agent: { model: 'gpt-9' } } } });
    expect(await ask(other, 'PLAN one')).toContain('[model swift]');
    await other.waitFor('window/logMessage', (p) => p.message.includes('the model "gpt-9" (buckley.agent.model) is not one the agent offers (it offers swift, deep)'));
    // Chosen in the editor, a model it does not offer is refused in words.
    await other.request('workspace/executeCommand', { command: 'buckley.chooseModel', arguments: [{ model: 'gpt-9' }] });
    await other.waitFor('window/showMessage', (p) => p.message.startsWith('cannot use the model "gpt-9": '));
    await other.waitFor('window/logMessage', (p) => p.message.includes('cannot use the model "gpt-9": the agent offers no model "gpt-9": it offers swift, deep'));
  });
});

describe("the agent's modes", () => {
  const MODES_AGENT = `${AGENT} --modes`;
  const codeActions = async (client: TestClient) => {
    const { uri } = await client.openFixture('workspace/retry.ts');
    return client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, context: { diagnostics: [] } });
  };

  it('a task runs in the mode chosen in a prompt — only modes that ask first are offered — asks stay read-only, and the choice outlives a restart', async () => {
    const stateDir = tempDir('buckley-modes');
    const client = await start({ client: 'neovim-0.10.4', stateDir, env: { BUCKLEY_AGENT: MODES_AGENT }, answerMessageRequest: (params) => params.actions.find((action: any) => action.title === 'Plan') ?? null });
    expect(await ask(client, 'PLAN one')).toContain('[mode plan]');
    expect(await runTask(client, 'PLAN task one')).toContain('[mode default]');
    expect((await client.request('buckley/status', {})).agent).toMatchObject({
      modes: [
        { id: 'default', name: 'Ask first' },
        { id: 'plan', name: 'Plan' },
        { id: 'yolo', name: 'YOLO' },
      ],
      askMode: 'plan',
      taskMode: 'default',
      modeSource: 'the mode that reads as asking first',
      taskModes: ['default', 'plan'],
    });
    const choose = (await codeActions(client)).find((action: any) => action.title === 'Buckley: choose mode (now Ask first)');
    expect(choose.command).toEqual({ title: 'Buckley: choose mode (now Ask first)', command: 'buckley.chooseMode', arguments: [] });
    expect(await client.request('workspace/executeCommand', choose.command)).toEqual({ mode: 'plan', modes: ['default', 'plan'] });
    // YOLO runs tools unasked: never offered.
    expect(client.all('window/showMessageRequest').at(-1).actions.map((action: any) => action.title)).toEqual(['Ask first (now)', 'Plan']);
    await client.waitFor('window/showMessage', (p) => p.message === 'tasks in mode Plan from now on (scripted-agent.mjs)');
    expect(await runTask(client, 'PLAN task two')).toContain('[mode plan]');
    expect((await client.request('buckley/status', {})).agent).toMatchObject({ askMode: 'plan', taskMode: 'plan', modeSource: 'chosen in the editor' });

    // Given by name from a key binding, a mode that runs tools unasked is refused in words.
    await client.request('workspace/executeCommand', { command: 'buckley.chooseMode', arguments: [{ mode: 'YOLO' }] });
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('cannot use the mode "YOLO": '));
    await client.waitFor('window/logMessage', (p) => p.message.includes('the mode "yolo" runs tools unasked: tasks run in one that asks first (default, plan)'));
    expect(await runTask(client, 'PLAN task three')).toContain('[mode plan]');
    await client.shutdown();

    const again = await start({ client: 'neovim-0.10.4', stateDir, env: { BUCKLEY_AGENT: MODES_AGENT } });
    expect(await runTask(again, 'PLAN task four')).toContain('[mode plan]');
  });

  it('buckley.agent.mode is honoured where the safety rules allow it, and the status says why not where they do not', async () => {
    const plan = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: MODES_AGENT }, initialize: { initializationOptions: { agent: { mode: 'plan' } } } });
    expect(await runTask(plan, 'PLAN task')).toContain('[mode plan]');
    expect((await plan.request('buckley/status', {})).agent).toMatchObject({ taskMode: 'plan', modeSource: 'buckley.agent.mode' });

    const reckless = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: MODES_AGENT }, initialize: { initializationOptions: { agent: { mode: 'YOLO' } } } });
    expect(await runTask(reckless, 'PLAN task')).toContain('[mode default]');
    // An ask is read-only whatever is wanted.
    expect(await ask(reckless, 'PLAN one')).toContain('[mode plan]');
    expect((await reckless.request('buckley/status', {})).agent).toMatchObject({ askMode: 'plan', taskMode: 'default', modeSource: '"YOLO" (buckley.agent.mode) runs tools unasked: the mode that reads as asking first' });
    await reckless.waitFor('window/logMessage', (p) => p.message.includes('runs tasks in its mode "default" ("YOLO" (buckley.agent.mode) runs tools unasked: the mode that reads as asking first)'));
  });

  it("puts a session back in the mode of each turn's intent: a task's session asked about read-only (one agent process, no sandbox) runs the ask in the read-only mode", async () => {
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: MODES_AGENT }, initialize: { initializationOptions: { agent: { sandbox: { enabled: false } } } } });
    const { taskId } = await client.request('buckley/executeTask', { task: 'PLAN task' });
    expect((await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "PLAN task"'))).message).toMatch(/turn 1 of session .*\[mode default\]/);
    // The task's conversation, asked about: the same agent session, in the read-only mode for this turn.
    const asked = await client.request('buckley/ask', { question: 'PLAN about it', conversation: `task-${taskId}` });
    expect(asked.answer).toMatch(/turn 2 of session .*\[mode plan\]/);
    // And followed up as a task: back in the mode that asks first.
    await client.request('workspace/executeCommand', { command: 'buckley.followUp', arguments: [{ conversation: `task-${taskId}`, question: 'PLAN more' }] });
    expect((await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "PLAN more"'))).message).toMatch(/turn 3 of session .*\[mode default\]/);
  });

  it('in Helix, which has no prompts: a code action per mode that asks first and is not in use', async () => {
    const client = await start({ client: 'helix-25.01.1', env: { BUCKLEY_AGENT: MODES_AGENT } });
    await ask(client, 'PLAN one');
    await client.request('buckley/status', {});
    const modes = (await codeActions(client)).filter((action: any) => action.command?.command === 'buckley.chooseMode' || action.command === 'buckley.chooseMode');
    expect(modes.map((action: any) => action.command)).toEqual([{ title: 'Buckley: tasks in mode Plan', command: 'buckley.chooseMode', arguments: [{ mode: 'plan' }] }]);
    await client.request('workspace/executeCommand', modes[0].command);
    expect(await runTask(client, 'PLAN task')).toContain('[mode plan]');
  });
});

describe("the agent's commands", () => {
  it('are completed after / in an answer document (name, hint, description), nowhere else, and run as its commands', async () => {
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_AGENT: AGENT } });
    expect(client.initializeResult.capabilities.completionProvider).toEqual({ triggerCharacters: ['/'] });
    const asked = await client.request('buckley/ask', { question: 'PLAN one' });
    const shown = await client.waitFor('window/showDocument');
    const path = fileURLToPath(shown.uri);
    const text = `${readFileSync(path, 'utf8')}/re`;
    await client.open(path, text, 'markdown');
    const line = text.split('\n').length - 1;
    const items = await client.request('textDocument/completion', { textDocument: { uri: shown.uri }, position: { line, character: 3 } });
    expect(items).toEqual([
      { label: '/review', kind: 3, detail: '/review what to review', documentation: 'Review the changes', filterText: '/review', insertTextFormat: 1, textEdit: { range: { start: { line, character: 0 }, end: { line, character: 3 } }, newText: '/review ' } },
      { label: '/init', kind: 3, documentation: 'Write an AGENTS.md for this project', filterText: '/init', insertTextFormat: 1, textEdit: { range: { start: { line, character: 0 }, end: { line, character: 3 } }, newText: '/init' } },
    ]);
    // Not after other words, and not in the code.
    expect(await client.request('textDocument/completion', { textDocument: { uri: shown.uri }, position: { line: 0, character: 1 } })).toEqual([]);
    const { uri } = await client.openFixture('workspace/retry.ts');
    expect(await client.request('textDocument/completion', { textDocument: { uri }, position: { line: 0, character: 0 } })).toEqual([]);

    // Asked as a follow-up, the command runs as the agent's: alone, not under the context's heading.
    const followed = await client.request('buckley/ask', { question: '/review the retry loop', conversation: asked.conversation });
    expect(followed.answer).toMatch(/^reviewed: the retry loop/);
  });
});

describe('MCP servers for the agent (buckley.agent.mcpServers)', () => {
  const mcpServers = {
    files: { command: 'node', args: ['files-mcp.js', '--root', '.'], env: { FILES_TOKEN: 't1' } },
    web: { url: 'http://127.0.0.1:9/mcp', headers: { authorization: 'Bearer x' } },
    legacy: { url: 'http://127.0.0.1:9/sse', type: 'sse' },
  };

  it('reach every session: stdio ones always, HTTP ones where the agent takes them; one left out is named in the log', async () => {
    const plain = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` }, initialize: { initializationOptions: { agent: { mcpServers } } } });
    // Ours (editorTools.test.ts) comes after the settings' ones.
    expect(await ask(plain, 'MCP SERVERS')).toMatch(/^mcp: files \(stdio: node files-mcp\.js --root \.; env FILES_TOKEN=t1\), buckley-editor \(stdio: [^)]*buckley-lsp-editor-mcp\.js; env [^)]*\)$/);
    await plain.waitFor('window/logMessage', (p) => p.message.includes('the MCP server "web" (http, http://127.0.0.1:9/mcp) is left out: the agent does not take HTTP MCP servers'));

    const http = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT} --mcp-http` }, initialize: { initializationOptions: { agent: { mcpServers } } } });
    expect(await ask(http, 'MCP SERVERS')).toMatch(/^mcp: files \(stdio: node files-mcp\.js --root \.; env FILES_TOKEN=t1\), web \(http: http:\/\/127\.0\.0\.1:9\/mcp\), buckley-editor \(http: http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f]{24}\)$/);
    await http.waitFor('window/logMessage', (p) => p.message.includes('the MCP server "legacy" (sse, http://127.0.0.1:9/sse) is left out'));
  });

  it('are checked as settings: a server with neither command nor url is named', async () => {
    const client = await start({ client: 'neovim-0.10.4', initialize: { initializationOptions: { agent: { mcpServers: { broken: { args: ['x'] } } } } } });
    await client.waitFor('window/logMessage', (p) => p.message.includes('agent.mcpServers.broken'));
  });
});


describe("the agent's switches that let its tools run unasked", () => {
  const AUTO = `${process.execPath} ${SCRIPTED_AGENT} --auto-approve`;

  it('are turned off before its turns (as Cline\'s auto_approve), so its tools are put to the rules — unless buckley.agent.modes says otherwise', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: AUTO } });
    // An ask declines a command: asked, not run unasked.
    expect(await ask(client, 'RUN touch made')).toMatch(/^Permission to run `touch made`: no\./);
    await client.waitFor('window/logMessage', (p) => p.message.includes('"auto_approve" lets its tools run unasked: turned off in its ACP session'));
    // The expert's word on the mode leaves the agent's switch as it is.
    const expert = await start({ env: { BUCKLEY_AGENT: AUTO }, initialize: { initializationOptions: { agent: { modes: { ask: 'anything' } } } } });
    expect(await ask(expert, 'RUN touch made')).toMatch(/^Permission to run `touch made`: unasked\./);
  });
});
