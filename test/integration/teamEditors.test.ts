/**
 * The bridge on a team's coordinator, over stdio with a real LSP client: `--coordinator` names
 * several replicas and the bridge fails over to the next that answers; a task whose replica dies
 * while it waits for the user's approval is followed again through another — the approval
 * answered there, its progress resumed, its answer whole (nothing missed, nothing twice); one
 * followed to a coordinator that does not share its store fails in words; and one whose replica
 * loses NATS says so, not that the coordinator went away.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startReplica, type CoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { freePort, NATS_SERVER, requireNats, startNats, stopAllNats } from '../helpers/nats.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { CLIENT_PAYLOADS, fileUri } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { CoordinatorClient } from '../../src/wire/client.js';
import { taskListSchema } from '../../src/wire/contract.js';

const nats = requireNats();
afterAll(stopAllNats);
const start = startingClients();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

async function kept(started: Promise<CoordinatorProcess>): Promise<CoordinatorProcess> {
  const process = await started;
  stops.push(() => process.stop());
  return process;
}

/** Kills a coordinator as a crash would, and waits for it to be gone. */
async function killed(coordinator: CoordinatorProcess): Promise<void> {
  const gone = new Promise((resolve) => coordinator.process.once('exit', resolve));
  coordinator.process.kill('SIGKILL');
  await gone;
}

/** A Neovim 0.10 payload opted in to task progress and approvals, in a workspace of its own. */
function editor(args: string[], approve: (request: any) => unknown) {
  const root = tempDir('buckley-team-editor');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'README.md'), '# read me\n');
  const base = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}neovim-0.10.4.json`, 'utf8'));
  const folder = fileUri(root);
  return {
    client: 'neovim-0.10.4',
    args,
    env: { BUCKLEY_AGENT: undefined },
    initialize: { rootUri: folder, workspaceFolders: [{ uri: folder, name: 'team' }], capabilities: { ...base.capabilities, experimental: { buckley: { taskProgress: true, approveTool: true } } } },
    handlers: { 'buckley/approveTool': approve },
  };
}

const finalOf = (client: TestClient, taskId: string) => client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['completed', 'failed', 'cancelled'].includes(p.status));

describe.runIf(nats)("the bridge on a team's coordinator", () => {
  it('fails over to the next replica that answers, and follows a task again when its replica dies: the approval answered there, the answer whole', async () => {
    const server = await startNats();
    await kept(startReplica(server.url, 'runner', 4));
    const [first, second] = [await kept(startReplica(server.url, 'first', 0)), await kept(startReplica(server.url, 'second', 0))];
    // Nothing listens at the first address: the bridge goes on to the next.
    const nobody = `127.0.0.1:${await freePort()}`;
    let client!: TestClient;
    let listed: any;
    client = await start(
      editor(['--coordinator', `${nobody},${first.address},${second.address}`], async () => {
        // While the user reads the approval, the replica the task streams from dies.
        listed = (await client.request('buckley/status', {})).tasks;
        await killed(first);
        return { approved: true };
      }),
    );
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy the config' });
    const answered = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Tidy the config"`));
    expect((await finalOf(client, taskId)).status).toBe('completed');
    // The edit was approved through the second replica, and the answer came whole, once.
    expect(answered.message.match(/Permission to read: yes; permission to edit: yes\./g)).toHaveLength(1);
    expect(listed).toEqual([expect.objectContaining({ taskId, status: 'awaiting_approval' })]);
    const status = await client.request('buckley/status', {});
    expect(status.coordinator).toMatchObject({ address: second.address, state: 'ready' });
    // Its progress said what happened meanwhile.
    const messages = client.all('$/buckley/taskProgress').filter((p) => p.taskId === taskId).map((p) => p.message);
    expect(messages).toContain('The connection to the coordinator broke: following the task again…');
    const log = client.all('window/logMessage').map((p) => p.message);
    expect(log.some((line) => line.includes(`${nobody}`) && line.includes('trying the next coordinator'))).toBe(true);
    expect(log.some((line) => line.includes(`task ${taskId}: followed again on ${second.address}`))).toBe(true);
  });

  it('follows a task whose replica died after making it but before its first event, instead of starting it again ("exists")', async () => {
    const server = await startNats();
    // Neither runs tasks: the task waits in the queue, its stream silent (news of the queue comes after 300 ms).
    const [first, second] = [await kept(startReplica(server.url, 'first', 0)), await kept(startReplica(server.url, 'second', 0))];
    const client = await start(editor(['--coordinator', `${first.address},${second.address}`], () => ({ approved: true })));
    const lister = new CoordinatorClient({ address: second.address, agentId: 'lister' });
    stops.push(async () => lister.close());
    const { taskId } = await client.request('buckley/executeTask', { task: 'INSTANT' });
    // The moment the first has made the task (the team knows it), it stops, then dies: it never streamed an event.
    while (!(await lister.unary('ListTasks', { running_only: false }, taskListSchema, { timeoutMs: 5000 })).tasks.some((task) => task.task_id === taskId));
    first.process.kill('SIGSTOP');
    await killed(first);
    await kept(startReplica(server.url, 'runner', 4));
    expect((await finalOf(client, taskId)).status).toBe('completed');
    const log = client.all('window/logMessage').map((p) => p.message);
    expect(log.some((line) => line.includes(`task ${taskId}: its stream broke after event 0`))).toBe(true);
    expect(log.some((line) => line.includes(`task ${taskId}: followed again on ${second.address}`))).toBe(true);
  });

  it('fails a task in words when the next coordinator does not share its store', async () => {
    const [ours, theirs] = [await startNats(), await startNats()];
    await kept(startReplica(ours.url, 'runner', 4));
    const gateway = await kept(startReplica(ours.url, 'gateway', 0));
    const stranger = await kept(startReplica(theirs.url, 'stranger', 4));
    const client = await start(editor(['--coordinator', `${gateway.address},${stranger.address}`], () => ({ approved: true })));
    const { taskId } = await client.request('buckley/executeTask', { task: 'HANG on' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'in_progress');
    await killed(gateway);
    const final = await finalOf(client, taskId);
    expect(final).toMatchObject({
      status: 'failed',
      message: `the coordinator at ${stranger.address} does not know the task: it does not share the store the task was kept in (is every address of buckley.coordinator.address a replica of the same team, on the same NATS?): run it again`,
    });
  });

  it("says NATS, not the coordinator, when the team's store goes away under a task: the editor told at once, the task failed in its words once NATS is back", async () => {
    const server = await startNats();
    const one = await kept(startReplica(server.url, 'one', 4, { args: ['--nats-wait', '3'] }));
    const client = await start(editor(['--coordinator', one.address], () => ({ approved: true })));
    const { taskId } = await client.request('buckley/executeTask', { task: 'HANG on' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'in_progress');
    await server.kill();
    // The replica gives up on NATS (3 s), its call ends saying so; the bridge follows the task again.
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.message === "The coordinator cannot reach the team's store: following the task again…");
    await server.start();
    const final = await finalOf(client, taskId);
    expect(final).toMatchObject({ status: 'failed', message: `the team's store (NATS at ${server.url}) could not be reached for 3 s, so this task could not be recorded and was stopped: run it again once NATS is back` });
    const messages = client.all('$/buckley/taskProgress').filter((p) => p.taskId === taskId).map((p) => p.message);
    expect(messages).toContain(`The team's store (NATS at ${server.url}) cannot be reached: waiting up to 3 s for it to come back`);
    // The coordinator answered all along: nobody says it went away, nor reconnects to it.
    expect(client.all('window/showMessage').map((p) => p.message).filter((message) => /went away/.test(message))).toEqual([]);
    expect(client.all('window/logMessage').map((p) => p.message).filter((line) => /went away/.test(line))).toEqual([]);
  });

  it("lets a colleague's editor list the team's running tasks and watch one to its answer; its approval stays its owner's", async () => {
    const server = await startNats();
    await kept(startReplica(server.url, 'runner', 4));
    const gateway = await kept(startReplica(server.url, 'gateway', 0));
    const bob = await start(editor(['--coordinator', gateway.address, '--coordinator.agentId', 'bob'], () => ({ approved: false })));
    let watched: any;
    const alice = await start(
      editor(['--coordinator', gateway.address, '--coordinator.agentId', 'alice'], async (request) => {
        // Bob sees it running, watches it, and sees it wait for Alice.
        const status = await bob.request('buckley/status', {});
        expect(status.team.tasks).toEqual([expect.objectContaining({ taskId: request.taskId, owner: 'alice', title: 'Tidy the config', status: 'awaiting_approval' })]);
        watched = await bob.request('workspace/executeCommand', { command: 'buckley.watchTask', arguments: [{ taskId: request.taskId }] });
        await bob.waitFor('$/progress', (p) => p.value.message === "Waiting for alice's approval: Edit config.json");
        return { approved: true };
      }),
    );
    const { taskId } = await alice.request('buckley/executeTask', { task: 'Tidy the config' });
    expect((await finalOf(alice, taskId)).status).toBe('completed');
    expect(watched).toEqual({ taskId, watching: true });
    const seen = await bob.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "alice's task: Tidy the config"`));
    expect(seen.message).toContain('Permission to read: yes; permission to edit: yes.');
    expect(bob.all('buckley/approveTool')).toEqual([]);
  });

  it("runs the README's team on one machine: a NATS server and three replicas, an editor naming them all", async () => {
    const [nats, ...ports] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    // The README's commands as written, on free ports: `buckley-lsp` and `gemini` (the scripted agent) on PATH.
    const script = readmeSnippet('team')
      .replaceAll('4222', String(nats))
      .replace('50051 50052 50053', ports.join(' '));
    const home = tempDir('buckley-team-home');
    const team = spawn('sh', ['-c', `${script}wait`], { env: { PATH: `${dirname(NATS_SERVER)}:${userPath()}`, HOME: home }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    stops.push(async () => {
      const gone = new Promise((resolve) => team.once('exit', resolve));
      process.kill(-team.pid!, 'SIGTERM');
      await gone;
    });
    let said = '';
    team.stderr!.on('data', (chunk) => (said += chunk));
    await new Promise<void>((resolve, reject) => {
      // Each says it once on this line (its log says it too, in other words).
      team.stderr!.on('data', () => ((said.match(/^buckley-lsp coordinator listening on/gm)?.length ?? 0) >= 3 ? resolve() : undefined));
      team.once('exit', () => reject(new Error(`the team stopped: ${said}`)));
      // A replica that died at its start leaves the others (and sh) running: say what they said.
      setTimeout(() => reject(new Error(`not all three replicas listen after 60 s; they said: ${said}`)), 60_000).unref();
    });
    const client = await start({ env: { BUCKLEY_COORDINATOR: ports.map((port) => `127.0.0.1:${port}`).join(','), BUCKLEY_AGENT: undefined } });
    expect((await client.request('buckley/ask', { question: 'Who runs you?' })).answer).toContain('You asked: Who runs you?');
    expect((await client.request('buckley/status', {})).coordinator).toMatchObject({ addresses: ports.map((port) => `127.0.0.1:${port}`), features: expect.arrayContaining(['shared_tasks']) });
  }, 120_000);
});
