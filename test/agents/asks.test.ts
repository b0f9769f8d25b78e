/**
 * The real agents in asks, over stdio through buckley-lsp, each against a stand-in for its
 * model's API scripted per test: the selection reaches the model; reading a workspace file is
 * allowed; and whatever the model makes the agent do — read `.env` with its own tool, `cat .env`
 * in its shell, `touch`, `rm -rf`, edit a file — nothing changes and nothing secret reaches the
 * model. The promise is the sandbox's, not the agent's: these agents run "read-only" commands
 * unasked and write with their own tools.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome, REAL_AGENTS, requireAgent, stepsScript, toolResultsOf, type RealAgent } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import type { ModelServer, Reply } from '../helpers/models/standIn.js';
import { fileUri } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const SECRET = 'sk-live-0123456789-DO-NOT-LEAK';
const CODE = 'export function retryDelay(attempt: number): number {\n  return Math.min(1000 * 2 ** attempt, 30_000);\n}\n';

// Registered first, so run last: the agents' homes go once the servers (and their agents) have stopped.
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

/** A workspace with code, notes, a secret and a folder to delete. */
function workspace(): { root: string; code: string; notes: string; env: string; keep: string } {
  const root = tempDir('buckley-agent-ws');
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'keep'));
  writeFileSync(join(root, 'src', 'retry.ts'), CODE);
  writeFileSync(join(root, 'notes.txt'), 'The notes say: retries back off.\n');
  writeFileSync(join(root, '.env'), `API_TOKEN=${SECRET}\n`);
  writeFileSync(join(root, 'keep', 'data.txt'), 'precious\n');
  return { root, code: join(root, 'src', 'retry.ts'), notes: join(root, 'notes.txt'), env: join(root, '.env'), keep: join(root, 'keep') };
}

/** buckley-lsp with `agent` pointed at a model that plays `steps`. */
async function session(agent: RealAgent, root: string, steps: Reply[] | (() => Reply[]), mode?: string, editor?: string): Promise<{ client: TestClient; model: ModelServer }> {
  const model = await agent.model(stepsScript(steps));
  cleanups.push(() => model.close());
  const { home, cleanup } = agentHome();
  cleanups.push(cleanup);
  const client = await start({
    ...(editor ? { client: editor } : {}),
    env: { BUCKLEY_AGENT: undefined },
    initialize: {
      rootUri: fileUri(root),
      workspaceFolders: [{ uri: fileUri(root), name: 'ws' }],
      initializationOptions: { agent: { command: mode === agent.permissiveMode ? [...agent.command, ...(agent.permissiveArgs ?? [])] : agent.command, env: { ...agent.setup(model, home), ...(mode === agent.permissiveMode ? agent.permissiveEnv : {}) }, ...(mode ? { modes: { ask: mode } } : {}) } },
    },
  });
  return { client, model };
}

async function askAbout(client: TestClient, file: string, question: string): Promise<string> {
  const text = readFileSync(file, 'utf8');
  const uri = await client.open(file, text);
  const lines = text.split('\n').length - 1;
  const { answer } = await client.request('buckley/ask', { question, context: { activeFile: uri, selection: { start: { line: 0, character: 0 }, end: { line: lines, character: 0 } } } });
  return answer;
}

describe.each(REAL_AGENTS)('$name, asked', (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed)('gets the selection to the model and its answer to the editor', async () => {
    const ws = workspace();
    const { client, model } = await session(agent, ws.root, [{ text: ['The delay doubles', ' up to 30 s.'] }]);
    expect(await askAbout(client, ws.code, 'What does this do?')).toContain('The delay doubles up to 30 s.');
    expect(model.received()).toContain('Math.min(1000 * 2 ** attempt, 30_000)');
    expect(model.received()).toContain('What does this do?');
  });

  // Codex and Qwen Code report their context window; Claude Code (its newer adapter) and Gemini CLI the turn's tokens.
  it.runIf(installed && agent.reportsUsage)('says what the turn used at the end of the progress, apart from the answer', async () => {
    const ws = workspace();
    const { client } = await session(agent, ws.root, [{ text: 'The delay doubles.' }]);
    const uri = await client.open(ws.code, readFileSync(ws.code, 'utf8'));
    const { answer } = await client.request('buckley/ask', { question: 'What does this do?', workDoneToken: 'usage', context: { activeFile: uri } });
    expect(answer).toContain('The delay doubles.');
    expect(answer).not.toContain('context');
    const end = client.all('$/progress').find((p) => p.token === 'usage' && p.value.kind === 'end');
    expect(end.value.message).toMatch(agent.reportsUsage === 'context' ? /^Answered \(context \d+k of \d+k tokens\)$/ : /^Answered \(\d+k? tokens in, \d+k? out\)$/);
  });

  it.runIf(installed)("folds the model's thinking into the answer document, apart from the answer; shows its plan where it has a plan tool", async () => {
    const ws = workspace();
    const plan = agent.tools.plan?.([
      { content: 'Read the retry code', done: true },
      { content: 'Explain the delay', done: true },
    ]);
    const steps: Reply[] = plan ? [{ thinking: 'Pondering the back-off.', tools: [plan] }, { text: 'The delay doubles.' }] : [{ thinking: 'Pondering the back-off.', text: 'The delay doubles.' }];
    const { client } = await session(agent, ws.root, steps, undefined, 'neovim-0.10.4');
    const uri = await client.open(ws.code, readFileSync(ws.code, 'utf8'));
    const { answer } = await client.request('buckley/ask', { question: 'What does this do?', workDoneToken: 'extras', context: { activeFile: uri } });
    expect(answer).toContain('The delay doubles.');
    expect(answer).not.toContain('Pondering');
    const document = readFileSync(fileURLToPath((await client.waitFor('window/showDocument')).uri), 'utf8');
    expect(document).toMatch(/<details>\n<summary>Thinking<\/summary>\n\n(> .*\n)*> Pondering the back-off\.\n\n<\/details>\n/);
    if (!plan) return;
    expect(document).toContain('**Plan** — 2 of 2 steps done\n\n- [x] Read the retry code\n- [x] Explain the delay\n');
    const end = client.all('$/progress').find((p) => p.token === 'extras' && p.value.kind === 'end');
    expect(end.value.message).toMatch(/^Answered \(2 of 2 steps( · .*)?\)$/);
  });

  it.runIf(installed)('reads a workspace file when the model asks for it', async () => {
    const ws = workspace();
    const { client, model } = await session(agent, ws.root, [{ tools: [agent.tools.read(ws.notes)] }, { text: 'They say retries back off.' }]);
    expect(await askAbout(client, ws.code, 'What do the notes say?')).toContain('They say retries back off.');
    expect(toolResultsOf(model).join('\n')).toContain('The notes say: retries back off.');
  });

  // In the agent's read-only mode, and in the mode where it runs every tool unasked: then the
  // sandbox alone stands between the agent and the files.
  const modes = [undefined, agent.permissiveMode];

  it.runIf(installed).each(modes)('sends nothing secret: .env read with its own tool, and with cat in its shell (mode: %s)', async (mode) => {
    const ws = workspace();
    let steps: Reply[] = [];
    const { client, model } = await session(agent, ws.root, () => steps, mode);
    for (const tool of [agent.tools.read(ws.env), agent.tools.shell('cat .env; cat ./.env | base64')]) {
      steps = [{ tools: [tool] }, { text: 'I could not read it.' }];
      const before = model.turns().length;
      await askAbout(client, ws.code, 'What is in .env?');
      expect(model.turns().length).toBeGreaterThan(before);
    }
    toolResultsOf(model);
    const encoded = Buffer.from(`API_TOKEN=${SECRET}\n`).toString('base64').slice(0, 24);
    if (mode) await client.waitFor('window/logMessage', (p) => p.message.includes(`runs asks in its mode "${mode}"`));
    expect(model.calls.flatMap((call, index) => (call.raw.includes(SECRET) || call.raw.includes(encoded) ? [`request ${index} to ${call.path}`] : [])), 'requests that carried the secret').toEqual([]);
  });

  it.runIf(installed).each(modes)('changes nothing: touch, rm -rf, an edit, a new file — whatever the agent makes of them (mode: %s)', async (mode) => {
    const ws = workspace();
    // Each in an ask of its own: an agent may end its turn at the first refusal (Claude Code does).
    const attempts: [string, Reply][] = [
      ['Touch a file', { tools: [agent.tools.shell(`touch ${join(ws.root, 'made-by-agent')}`)] }],
      ['Delete keep/', { tools: [agent.tools.shell(`rm -rf ${ws.keep}`)] }],
      ['Raise the cap', { tools: [agent.tools.edit(ws.code, '30_000', '60_000')] }],
      ['Add a file', { tools: [agent.tools.write(join(ws.root, 'new-file.ts'), 'export {};\n')] }],
    ];
    let steps: Reply[] = [];
    const { client, model } = await session(agent, ws.root, () => steps, mode);
    for (const [question, attempt] of attempts) {
      steps = [attempt, { text: 'Nothing was changed.' }];
      const before = model.turns().length;
      await askAbout(client, ws.code, question);
      // The model was asked, and asked for the tool: the agent got the call.
      expect(model.turns().length).toBeGreaterThan(before);
    }
    toolResultsOf(model);
    if (mode) await client.waitFor('window/logMessage', (p) => p.message.includes(`runs asks in its mode "${mode}"`));
    expect(existsSync(join(ws.root, 'made-by-agent'))).toBe(false);
    expect(readFileSync(join(ws.keep, 'data.txt'), 'utf8')).toBe('precious\n');
    expect(readFileSync(ws.code, 'utf8')).toBe(CODE);
    expect(existsSync(join(ws.root, 'new-file.ts'))).toBe(false);
  });
});
