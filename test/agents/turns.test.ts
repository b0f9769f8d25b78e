/**
 * The real agents' turns as the user follows them, over stdio through buckley-lsp: progress while
 * the agent works, a cancel while the model is still answering, a follow-up that carries the
 * conversation, a refused key said in words that name it, and many asks leaving a bounded number
 * of agent processes behind.
 */
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome, isTurn, processesWithHome, REAL_AGENTS, requireAgent, stepsScript, type RealAgent } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import type { ModelServer, Script } from '../helpers/models/standIn.js';
import { BIN, fileUri } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

// Registered first, so run last: the agents' homes go once the servers (and their agents) have stopped.
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

function workspace(): string {
  const root = tempDir('buckley-agent-turns');
  writeFileSync(join(root, 'notes.txt'), 'Notes.\n');
  return root;
}

async function session(agent: RealAgent, script: Script, settings: { agent?: object } = {}, root = workspace()): Promise<{ client: TestClient; model: ModelServer; home: string }> {
  const model = await agent.model(script);
  cleanups.push(() => model.close());
  const { home, cleanup } = agentHome();
  cleanups.push(cleanup);
  const client = await start({
    client: 'neovim-0.10.4',
    env: { BUCKLEY_AGENT: undefined },
    initialize: {
      rootUri: fileUri(root),
      workspaceFolders: [{ uri: fileUri(root), name: 'ws' }],
      initializationOptions: { ...settings, agent: { command: agent.command, env: agent.setup(model, home), ...settings.agent } },
      capabilities: { window: { workDoneProgress: true, showDocument: { support: true } }, experimental: { buckley: { taskProgress: true } } },
    },
  });
  return { client, model, home };
}

describe.each(REAL_AGENTS)('$name', (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed)("shows a task's progress: its tool calls, then the answer, in paragraphs", async () => {
    const root = workspace();
    const { client } = await session(agent, stepsScript([{ text: 'Let me look at the notes.', tools: [agent.tools.read(join(root, 'notes.txt'))] }, { text: 'They say: Notes.' }]), {}, root);
    const { taskId } = await client.request('buckley/executeTask', { task: 'Read the notes' });
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    expect(final.toolExecutions.length).toBeGreaterThan(0);
    const answer = (await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "Read the notes"'))).message;
    // Its two messages, with a tool call between them, are two paragraphs, not glued together.
    expect(answer).toMatch(/Let me look at the notes\.\n\n+They say: Notes\./);
  });

  it.runIf(installed)('cancels a turn while the model is still answering', async () => {
    let answering!: () => void;
    const held = new Promise<void>((resolve) => (answering = resolve));
    const { client } = await session(agent, (call) => {
      if (!isTurn(call)) return { text: 'ok' };
      answering();
      return { hold: true };
    });
    const { taskId } = await client.request('buckley/executeTask', { task: 'Think for a long time' });
    await held;
    expect(await client.request('buckley/cancelTask', { taskId })).toEqual({ cancelled: true });
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['cancelled', 'completed', 'failed'].includes(p.status));
    expect(final.status).toBe('cancelled');
  });

  it.runIf(installed)('follows a conversation up: the second question reaches the model with the first', async () => {
    const { client, model } = await session(agent, stepsScript([{ text: 'The first answer.' }]));
    const first = await client.request('buckley/ask', { question: 'What is the first thing?' });
    expect(first.answer).toContain('The first answer.');
    await client.request('buckley/ask', { question: 'And the second?', conversation: first.conversation });
    // The model's turn for the second question (not the last request: Qwen Code asks the model in
    // the background afterwards, to extract memories from the conversation).
    const second = model.turns().find((turn) => turn.texts.join('\n').includes('And the second?'));
    expect(second?.texts.join('\n')).toContain('What is the first thing?');
  });

  it.runIf(installed)(`says a refused key in words: the agent, the 401, and ${agent.key}`, async () => {
    const { client } = await session(agent, () => ({ error: { status: 401, message: 'invalid x-api-key' } }));
    if (agent.errorsInAnswer) {
      // Copilot answers with the failure and the variables to check, ending its turn as done.
      const { answer } = await client.request('buckley/ask', { question: 'Hello?' });
      expect(answer).toMatch(/401/);
      expect(answer).toContain(agent.key);
      return;
    }
    const error: Error = await client.request('buckley/ask', { question: 'Hello?' }).then(
      () => new Error('answered'),
      (failure: Error) => failure,
    );
    expect(error.message).toContain(agent.title);
    expect(error.message).toMatch(/401|invalid/i);
    expect(error.message).toContain(`give it ${agent.key}`);
    expect(error.message).not.toMatch(/Internal error|\.agents\/node_modules/);
  });

  it.runIf(installed && agent.localCommand !== undefined)("runs the agent's own command, asked about a selection, as the command it is", async () => {
    const root = workspace();
    const { client, model } = await session(agent, stepsScript([{ text: 'The model answered instead.' }]), {}, root);
    const uri = await client.open(join(root, 'notes.txt'), 'Notes.\n');
    const { answer } = await client.request('buckley/ask', { question: agent.localCommand!.line, context: { activeFile: uri, selection: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } } } });
    // Sent alone, as ACP has commands sent: the agent answers it itself, its model is not asked.
    expect(answer).toMatch(agent.localCommand!.answer);
    expect(model.turns()).toEqual([]);
  });

  it.runIf(installed)('keeps its processes bounded however many asks: idle sessions are closed, or the agent restarted', async () => {
    const { client, home } = await session(agent, stepsScript([{ text: 'Answered.' }]), { agent: { maxIdleSessions: 2 } });
    const counts: number[] = [];
    for (let ask = 1; ask <= 12; ask++) {
      expect((await client.request('buckley/ask', { question: `Question ${ask}?` })).answer).toContain('Answered.');
      counts.push(processesWithHome(home).length);
    }
    // Every ask is a session of its own, and Claude Code runs a process per session: unbounded, 12
    // asks would leave 12 of them. With 2 idle sessions kept, the count stays near its start.
    expect(Math.max(...counts), `processes after each ask: ${counts.join(', ')}`).toBeLessThanOrEqual(8);
  });
});

describe('an agent that needs a login', () => {
  const codex = REAL_AGENTS.find((agent) => agent.title === 'Codex')!;

  it.runIf(requireAgent(codex))('is logged in with the key its environment has (ACP authenticate); without one, doctor says how', async () => {
    const model = await codex.model(stepsScript([{ text: 'Yes.' }]));
    cleanups.push(() => model.close());
    // Not spawnSync: the model it asks answers from this process.
    const doctor = async (agentEnv: Record<string, string>, ...args: string[]) => {
      const settings = join(tempDir('buckley-doctor-codex'), 'settings.json');
      writeFileSync(settings, JSON.stringify({ agent: { command: codex.command, env: agentEnv } }));
      const run = spawn(process.execPath, [BIN, 'doctor', '--settings', settings, ...args], { env: { PATH: process.env.PATH, HOME: agentEnv.HOME }, stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      run.stdout.on('data', (chunk) => (stdout += chunk));
      await new Promise((resolve) => run.once('close', resolve));
      return stdout;
    };
    /** A home of its own where it never logged in; with its model provider (the stand-in) or OpenAI's. */
    const fresh = (provider: boolean) => {
      const { home, cleanup } = agentHome();
      cleanups.push(cleanup);
      const env = codex.setup(model, home);
      if (!provider) rmSync(join(env.CODEX_HOME!, 'config.toml'));
      return env;
    };
    // OpenAI's own provider needs a login: with OPENAI_API_KEY there, by the way it offers for it.
    expect(await doctor(fresh(false))).toMatch(/ {2}ok {4}.*\(Codex 0\.16\.0\) is running \(pid \d+\), answered ACP initialize and opened a session/);
    const { OPENAI_API_KEY: _key, ...keyless } = fresh(false);
    expect(await doctor(keyless)).toContain(
      '  FAIL  Codex needs you to log in before it answers: set OPENAI_API_KEY with buckley.agent.env, or run `codex login` in a terminal (the ways it offers: Login with ChatGPT; Use CODEX_API_KEY (set CODEX_API_KEY); Use OPENAI_API_KEY (set OPENAI_API_KEY)). `buckley-lsp doctor` checks it.',
    );
    // Its own provider reads the key at the first question: --prompt asks one.
    expect(await doctor(fresh(true), '--prompt')).toContain('  ok    Codex answered a question: "Yes."');
    const { OPENAI_API_KEY: _none, ...providerKeyless } = fresh(true);
    // Codex says it at the first question ("Missing environment variable"), or — seen once on a
    // loaded machine — already at session/new (auth_required): either way the key is named, and where.
    expect(await doctor(providerKeyless, '--prompt')).toMatch(
      /  FAIL {2}Codex (failed: Missing environment variable: `OPENAI_API_KEY`\. To fix it, give Codex OPENAI_API_KEY with buckley\.agent\.env \(e\.g\. \{"OPENAI_API_KEY": "…"\}\) or in the environment buckley-lsp starts in|needs you to log in before it answers: set OPENAI_API_KEY with buckley\.agent\.env)/,
    );
  });
});
