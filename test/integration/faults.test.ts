/**
 * Faults with real processes on loopback: the coordinator killed and restarted mid-task and
 * mid-ask, a coordinator that never answers, agents that crash or hang. Nothing hangs; each
 * failure says what happened; the next ask works once the coordinator is back, without
 * restarting the editor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorProcess, type CoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { join } from 'node:path';
import { fileUri, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();
const coordinators: CoordinatorProcess[] = [];
afterEach(async () => {
  await Promise.all(coordinators.splice(0).map((c) => c.stop()));
});

async function coordinator(listen = '127.0.0.1:0'): Promise<CoordinatorProcess> {
  const running = await startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT], {}, listen);
  coordinators.push(running);
  return running;
}

function killed(process: CoordinatorProcess): Promise<void> {
  return new Promise((resolve) => {
    process.process.once('exit', () => resolve());
    process.process.kill('SIGKILL');
  });
}

/** Waits, on the server's own log, until the coordinator connection is ready again. */
async function backAgain(client: TestClient): Promise<void> {
  const reconnected = client.waitForNext('window/logMessage', (p) => p.message.includes('connected to the remote coordinator'));
  if ((await client.request('buckley/status', {})).coordinator.state === 'ready') return;
  await reconnected;
}

describe('faults', () => {
  it('fails a task clearly when the coordinator dies mid-task, and asks again once it is back', async () => {
    const first = await coordinator();
    const client = await start({
      initialize: { capabilities: { experimental: { buckley: { taskProgress: true } } } },
      args: ['--coordinator', first.address],
    });
    const { taskId } = await client.request('buckley/executeTask', { task: 'HANG while I pull the plug' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'in_progress');
    await killed(first);
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['completed', 'failed', 'cancelled'].includes(p.status));
    expect(final.status).toBe('failed');
    expect(final.message).toContain(`the coordinator at ${first.address} went away during the task`);

    // While it is down, asks fail fast with a clear message instead of waiting.
    await expect(client.request('buckley/ask', { question: 'anyone?' })).rejects.toMatchObject({
      message: expect.stringContaining(`nothing listens at ${first.address}`),
      data: { summary: `nothing listens at ${first.address}: start the coordinator` },
    });

    // Back on the same address: the bridge reconnects by itself, with a new session.
    await coordinator(first.address);
    await backAgain(client);
    const answer = await client.request('buckley/ask', { question: 'Back?' });
    expect(answer.answer).toContain('You asked: Back?');
  });

  it('notices a coordinator restarted while idle by its broken connection, and asks on a new session', async () => {
    const first = await coordinator();
    const client = await start({ args: ['--coordinator', first.address] });
    expect((await client.request('buckley/ask', { question: 'INSTANT' })).answer).toBe('ok');
    const before = (await client.request('buckley/status', {})).coordinator.sessionId;
    const broke = client.waitFor('window/logMessage', (p) => p.message.includes(`the connection to the coordinator at ${first.address} broke`));
    await killed(first);
    await broke;
    await coordinator(first.address);
    // No failed call in between: the restart shows only as the broken connection.
    expect((await client.request('buckley/ask', { question: 'INSTANT' })).answer).toBe('ok');
    const after = (await client.request('buckley/status', {})).coordinator.sessionId;
    expect(after).toBeDefined();
    expect(after).not.toBe(before);
  });

  it('fails an ask clearly when the coordinator dies mid-ask', async () => {
    const running = await coordinator();
    const client = await start({ client: 'neovim-0.10.4', args: ['--coordinator', running.address] });
    // Its outcome is taken at once (a rejection nobody holds yet would be "unhandled").
    const pending = client.request('buckley/ask', { question: 'HANG forever', workDoneToken: 'ask-1' }).then(
      () => undefined,
      (error: Error) => error,
    );
    // The answer stream is live once its first progress report arrives: pull the plug then.
    await client.waitFor('$/progress', (p) => p.token === 'ask-1' && p.value.kind === 'report');
    await killed(running);
    expect(await pending).toMatchObject({ message: expect.stringContaining(`Buckley could not answer: the coordinator at ${running.address} went away during the task`) });
  });
});

describe('agent faults', () => {
  it.each([
    ['writes garbage instead of ACP', `console.log("hello, I am not JSON-RPC"); setInterval(() => {}, 1000)`, 'It is not speaking ACP: it wrote `hello, I am not JSON-RPC`'],
    ['hangs without a word', `setInterval(() => {}, 1000)`, 'did not answer ACP initialize within 800 ms'],
    ['exits at once', `process.exit(4)`, 'exited with code 4'],
  ])('reports an agent that %s, and tries again on the next ask', async (_name, script, message) => {
    const client = await start({
      env: { BUCKLEY_AGENT: `${process.execPath} -e '${script}'` },
      initialize: { initializationOptions: { agent: { requestTimeoutMs: 800 } } },
    });
    await expect(client.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({ message: expect.stringContaining(message) });
    await expect(client.request('buckley/ask', { question: 'again?' })).rejects.toMatchObject({ message: expect.stringContaining(message) });
    const starts = client.all('window/logMessage').filter((p) => p.message.includes('starting ACP agent'));
    expect(starts).toHaveLength(2);
  });
});

describe('workspace faults', () => {
  it('starts the agent all the same when the workspace folder does not exist here, and says so in the log', async () => {
    const path = join(tempDir('buckley-gone'), 'project');
    const gone = fileUri(path);
    const client = await start({ initialize: { rootUri: gone, workspaceFolders: [{ uri: gone, name: 'project' }] } });
    expect((await client.request('buckley/ask', { question: 'INSTANT' })).answer).toBe('ok');
    const warning = await client.waitFor('window/logMessage', (params) => params.message.includes('is not a directory here'));
    expect(warning.message).toContain(`the workspace folder ${path} is not a directory here`);
  });
});
