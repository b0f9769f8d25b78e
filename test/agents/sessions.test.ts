/**
 * The sessions real agents keep, over stdio through buckley-lsp: an agent that offers ACP
 * `session/resume` (Claude Code's claude-agent-acp, Codex) gets a conversation's session back after
 * a restart of the server — its own history, not the earlier turns sent along with the question.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSetup, REAL_AGENTS, requireAgent, stepsScript } from '../helpers/agents.js';
import { TestClient } from '../helpers/lspClient.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Until the agent has written the conversation down in its home (Claude Code's and Codex's session
 * files), at most `ms`: an agent stopped before it has, cannot resume it — the server then sends
 * the earlier turns along instead, which is not what this test is about.
 */
async function untilSaved(home: string, word: string, ms = 15_000): Promise<void> {
  const holds = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return holds(path);
      return entry.isFile() && statSync(path).size < 10_000_000 && readFileSync(path, 'utf8').includes(word);
    });
  const deadline = Date.now() + ms;
  while (!holds(home)) {
    if (Date.now() > deadline) throw new Error(`the agent wrote no file holding "${word}" in ${home} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each(REAL_AGENTS.filter((agent) => agent.resumes))('$name, its sessions', (agent) => {
  const installed = requireAgent(agent);

  it.runIf(installed)('resumes a conversation after a restart of the server (ACP session/resume): its own history, nothing replayed into the prompt', async () => {
    const setup = await agentSetup(agent, stepsScript([{ text: 'The answer.' }]));
    cleanups.push(setup.cleanup);
    const { model } = setup;
    // One state directory for both servers: the conversation's session is remembered there.
    const options = { ...setup.options, stateDir: tempDir('buckley-state') };
    const before = await TestClient.start(options);
    const first = await before.request('buckley/ask', { question: 'Remember the word PELICAN.' });
    await untilSaved((setup.options.initialize as any).initializationOptions.agent.env.HOME, 'PELICAN');
    expect(await before.shutdown()).toBe(0);

    const after = await TestClient.start(options);
    cleanups.push(() => after.shutdown());
    await after.request('buckley/ask', { question: 'Which word?', conversation: first.conversation });
    // Said before the prompt was sent, so before the answer came.
    expect(after.all('window/logMessage').map((p) => p.message)).toContainEqual(expect.stringMatching(/resumed the ACP session \S+ of a conversation followed up/));
    // The model got the first question back from the agent's own history, and no replay of it.
    const last = model.turns().at(-1)!;
    expect(last.texts.join('\n')).toContain('Remember the word PELICAN.');
    expect(last.texts.join('\n')).not.toContain('Earlier in this conversation');
  });
});
