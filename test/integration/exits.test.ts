/**
 * How the server ends, over real stdio: `shutdown` right before the pipe closes (as Neovim 0.12
 * does) is answered and the state saved; the end of input without `shutdown` still saves state;
 * messages after the editor closed the pipe are dropped without a crash; `shutdown` never waits
 * for a coordinator that does not answer; and every process the server started — agents and
 * their children, busy, deaf to stdin EOF and SIGTERM, stopped — is gone when it ends, however
 * the editor goes away.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorProcess } from '../helpers/coordinators.js';
import { frame, startingClients, TestClient } from '../helpers/lspClient.js';
import { REPO, SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const savedAnswers = (client: TestClient) => join(client.stateDir, 'buckley-lsp', 'answers.json');

describe('the end of a session', () => {
  it('answers a shutdown sent just before the pipe closes, saves the answers and exits 0, every time', async () => {
    for (let run = 1; run <= 6; run++) {
      const client = await TestClient.start();
      await client.request('buckley/ask', { question: `Remember run ${run}?` });
      // Neovim 0.12: shutdown, then the pipe closes within milliseconds.
      client.closeInput(frame({ jsonrpc: '2.0', id: 'bye', method: 'shutdown', params: null }));
      expect(await client.exit()).toBe(0);
      expect(client.stdoutMessages()).toContainEqual({ jsonrpc: '2.0', id: 'bye', result: null });
      const saved = JSON.parse(readFileSync(savedAnswers(client), 'utf8'));
      expect(saved.answers.map((answer: { question: string }) => answer.question)).toEqual([`Remember run ${run}?`]);
    }
  });

  it('saves the answers when the input ends without shutdown, and exits 1 as LSP says', async () => {
    const client = await TestClient.start();
    await client.request('buckley/ask', { question: 'Remember me anyway?' });
    client.closeInput();
    expect(await client.exit()).toBe(1);
    expect(JSON.parse(readFileSync(savedAnswers(client), 'utf8')).answers).toMatchObject([{ question: 'Remember me anyway?' }]);
  });

  it('drops what it still has to say once the editor has closed the pipe, and exits 0 after shutdown', async () => {
    const client = await TestClient.start({ client: 'neovim-0.10.4' });
    const { taskId } = await client.request('buckley/executeTask', { task: 'SLOW PLAN to keep talking' });
    await client.waitFor('$/progress', (p) => p.value.kind === 'report');
    // The editor stops reading, then sends shutdown and goes: the task's end, its messages and
    // the shutdown answer all meet a closed pipe.
    client.process.stdout!.destroy();
    client.closeInput(frame({ jsonrpc: '2.0', id: 'bye', method: 'shutdown', params: null }));
    expect(await client.exit()).toBe(0);
    expect(client.stderr).not.toMatch(/Connection is closed|unexpected/);
    expect(taskId).toBeTruthy();
  });

  it('answers shutdown at once while the first connection to a silent coordinator is being tried', async () => {
    // Accepts connections and never says a word: gRPC waits for it until the call deadline.
    const silent: Server = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => silent.close());
    const port = (silent.address() as { port: number }).port;
    // Listened for before the server starts: it may connect before `start` returns.
    const connected = new Promise<void>((resolve) => silent.once('connection', () => resolve()));
    const client = await start({
      args: ['--coordinator', `127.0.0.1:${port}`],
      // A deadline far beyond the test's own timeout: waiting for it would fail the test.
      initialize: { initializationOptions: { coordinator: { callTimeoutMs: 600_000 } } },
      env: { BUCKLEY_LOG: 'debug' },
    });
    await connected;
    expect(await client.request('shutdown', null)).toBeNull();
    await client.notify('exit', null);
    expect(await client.exit()).toBe(0);
  });
});

/** Gone: no such process, or a zombie nobody has reaped yet. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

/**
 * The processes whose command line holds `tag`, as this machine numbers them (in the agent's
 * sandbox the agent sees other numbers): the agent itself, the child it spawned, the sandbox.
 */
function tagged(tag: string): { agent: number; child: number; all: number[] } {
  const all: number[] = [];
  let agent = 0;
  let child = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || gone(Number(entry))) continue;
    let words: string[];
    try {
      words = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!words.includes(tag)) continue;
    all.push(Number(entry));
    if (words[0] === process.execPath && words[1] === SCRIPTED_AGENT) agent = Number(entry);
    if (words[0] === process.execPath && words[1] === '-e') child = Number(entry);
  }
  return { agent, child, all };
}

/** Resolves once every pid is gone (the test's timeout bounds the wait). */
async function allGone(pids: number[]): Promise<void> {
  while (!pids.every(gone)) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('processes the server started', () => {
  it.each([
    ['the editor closes the pipe', (client: TestClient) => client.closeInput()],
    ['the editor is killed', (client: TestClient) => client.process.kill('SIGKILL')],
    ['the server gets SIGTERM', (_client: TestClient, server: number) => process.kill(server, 'SIGTERM')],
    ['the server gets SIGHUP', (_client: TestClient, server: number) => process.kill(server, 'SIGHUP')],
  ])('are all gone when %s: a busy agent deaf to EOF and SIGTERM, stopped, and its child', async (_how, endIt) => {
    const tag = `--tag=${randomUUID()}`;
    const client = await TestClient.start({
      wrapper: `${REPO}test/helpers/relay.mjs`,
      env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT} --ignore-sigterm --ignore-eof ${tag}` },
      initialize: { capabilities: { experimental: { buckley: { taskProgress: true } } } },
    });
    cleanups.push(() => client.kill());
    const server = Number(/server pid (\d+)/.exec(client.stderr)?.[1]);
    expect((await client.request('buckley/ask', { question: 'SPAWN a helper' })).answer).toMatch(/pids: agent=\d+ child=\d+/);
    // Busy with a task that never ends by itself (the task's agent, in a sandbox of its own), then frozen.
    const { taskId } = await client.request('buckley/executeTask', { task: 'HANG on to this' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'in_progress');
    const { agent, child, all } = tagged(tag);
    expect(agent && child).toBeTruthy();
    for (const pid of all) if (pid !== child) process.kill(pid, 'SIGSTOP');

    endIt(client, server);
    await allGone([server, ...all]);
    expect([server, ...all].every((pid) => gone(pid))).toBe(true);
  });

  it.each(['SIGHUP', 'SIGTERM'] as const)('are all gone when the standalone coordinator gets %s: its agent and the agent\'s child', async (signal) => {
    const tag = `--tag=${randomUUID()}`;
    const coordinator = await startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT, '--ignore-sigterm', '--ignore-eof', tag]);
    cleanups.push(() => void coordinator.stop());
    const client = await start({ args: ['--coordinator', coordinator.address], env: { BUCKLEY_AGENT: undefined } });
    expect((await client.request('buckley/ask', { question: 'SPAWN a helper' })).answer).toMatch(/pids: agent=\d+ child=\d+/);
    const { agent, child, all } = tagged(tag);
    expect(agent && child).toBeTruthy();
    const exited = new Promise((resolve) => coordinator.process.once('exit', resolve));
    coordinator.process.kill(signal);
    await exited;
    await allGone(all);
    expect(all.every((pid) => gone(pid))).toBe(true);
  });

  it('leaves no answers file behind when there was nothing to save', async () => {
    const client = await start();
    await client.request('buckley/status', {});
    expect(await client.shutdown()).toBe(0);
    expect(existsSync(savedAnswers(client))).toBe(false);
  });
});
