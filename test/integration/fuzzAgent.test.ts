/**
 * What an agent sends, fuzzed: a real server over stdio, its embedded coordinator running
 * fixtures/hostile-agent.mjs (in its sandbox, as users have it), which answers each ask and task
 * with seeded, well-framed JSON-RPC of hostile content — updates of every wrong shape, reads and
 * writes in and out of the workspace, permissions, terminals and forms with wrong params, lines
 * that are not JSON-RPC, a wrong stop reason. Every ask and task ends, in words (never a
 * JavaScript message), the agent's requests are all answered, nothing outside the workspace is
 * written (the editor never approves it), and the server lives on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome } from '../helpers/agents.js';
import { startingClients } from '../helpers/lspClient.js';
import { fileUri, REPO } from '../helpers/paths.js';
import { seeded } from '../helpers/random.js';

// Registered first, so run last: the folders go once the servers (and their agents) have stopped.
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
const start = startingClients();
const HOSTILE_AGENT = join(REPO, 'fixtures', 'hostile-agent.mjs');
const TURNS = 16;
const MESSAGES_PER_TURN = 25;
/** What a message a person can act on never reads like. */
const CRASH = /Internal error|TypeError|ReferenceError|Cannot read prop|is not a function|is not iterable|\[object Object\]|(?<!received )undefined/;

describe.each([20261129, 3])('seeded fuzz of what an agent sends (seed %i)', (seed) => {
  it('ends every ask and task in words, answers every request of the agent, writes nothing unapproved, and lives on', { timeout: 240_000 }, async () => {
    const random = seeded(seed);
    const { home: workspace, cleanup } = agentHome();
    const { home: elsewhere, cleanup: cleanupElsewhere } = agentHome();
    cleanups.push(cleanup, cleanupElsewhere);
    const outside = join(elsewhere, 'keep.txt');
    writeFileSync(join(workspace, 'a.txt'), 'one\ntwo\n');
    writeFileSync(outside, 'untouched\n');
    const client = await start({
      cwd: workspace,
      env: { BUCKLEY_AGENT: `${process.execPath} ${HOSTILE_AGENT}` },
      initialize: { rootUri: fileUri(workspace), workspaceFolders: [{ uri: fileUri(workspace), name: 'ws' }], capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } },
      // The editor approves what is inside the workspace, now and then; never what names the file outside it.
      handlers: { 'buckley/approveTool': (params: unknown) => ({ approved: !JSON.stringify(params).includes(outside) && random() < 0.5 }) },
    });
    const said: string[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const question = `FUZZ ${Math.floor(random() * 1e9)} ${MESSAGES_PER_TURN} ${outside}`;
      if (turn % 2 === 0) {
        said.push(await client.request('buckley/ask', { question }).then((result: { answer: string }) => result.answer, (error: Error) => error.message));
      } else {
        const ended = client.waitFor('window/logMessage', (p) => p.message.includes(question.slice(0, 30)) && /answer to|failed|cancelled/.test(p.message));
        await client.request('buckley/executeTask', { task: question });
        said.push((await ended).message);
      }
    }
    expect(said.filter((words) => CRASH.test(words))).toEqual([]);
    // Every request the agent made was answered (a result or an error in words), none left to its own deadline.
    const answered = said.filter((words) => words.includes('answered: ')).map((words) => /answered: (\{.*?\})(?:\n|$)/s.exec(words)?.[1] ?? '{}');
    expect(answered.length).toBeGreaterThan(0);
    expect(answered.filter((counts) => /unanswered|unworded/.test(counts))).toEqual([]);
    expect(readFileSync(outside, 'utf8')).toBe('untouched\n');
    // The server, its coordinator and the agent go on.
    expect((await client.request('buckley/ask', { question: 'hello again' })).answer).toContain('still here');
  });
});
