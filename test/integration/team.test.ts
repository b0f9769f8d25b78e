/**
 * A team's coordinator: `buckley-lsp coordinator --nats …` replicas on a real NATS server with
 * JetStream, each with the scripted agent. A colleague watches a task from another replica, from
 * its start to its end; only the task's caller answers its approvals — its identity, through any
 * replica; a replica killed with SIGKILL while it runs a task leaves it failed in words, seen by
 * every watcher, within seconds — or taken up by another in the same agent session, where the
 * agent can load it; a replica paused past its lease finds its task taken up, and records nothing
 * more of it; a pending approval stays answerable when the replica its caller
 * used dies; a replica started again on the same NATS replays old tasks; a NATS restart in the
 * middle of a task loses nothing, its caller told while it is away; NATS away past the replica's
 * patience fails its tasks in words; tasks beyond what a replica runs at once wait, and say so.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../src/wire/client.js';
import * as z from '../../src/schema.js';
import { taskEventSchema, taskListSchema, type TaskEvent } from '../../src/wire/contract.js';
import { startReplica, type CoordinatorProcess } from '../helpers/coordinators.js';
import { requireNats, startNats, startNatsCluster, stopAllNats, type NatsServer } from '../helpers/nats.js';
import { tempDir } from '../helpers/temp.js';
import { collect, session } from '../helpers/team.js';
import { metricsAddress, scrape } from '../helpers/metrics.js';
import { natsEngine } from '../../src/coordinator/tasks/nats.js';

const nats = requireNats();
afterAll(stopAllNats);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const empty = z.object({});

async function replica(server: NatsServer, name: string, maxRunning = 4, extra: Parameters<typeof startReplica>[3] = {}): Promise<CoordinatorProcess> {
  const started = await startReplica(server.url, name, maxRunning, extra);
  cleanups.push(() => started.stop());
  return started;
}

function client(address: string, agentId: string): CoordinatorClient {
  const made = new CoordinatorClient({ address, agentId, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
  cleanups.push(() => made.close());
  return made;
}

const watch = (watcher: CoordinatorClient, taskId: string, fromSequence = 0, timeoutMs = 60_000) => watcher.stream('SubscribeTaskEvents', { plan_id: '', task_ids: [taskId], from_sequence: fromSequence }, taskEventSchema, { timeoutMs });

describe.runIf(nats)("a team's coordinator on NATS JetStream", () => {
  it('lets a colleague watch a task from another replica, start to end; only its caller answers its approvals, through any replica', async () => {
    const server = await startNats();
    const [one, two] = [await replica(server, 'one'), await replica(server, 'two')];
    const alice = client(one.address, 'alice');
    const aliceElsewhere = client(two.address, 'alice');
    const bob = client(two.address, 'bob');
    const metadata = await session(alice, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-watch', agent_id: 'alice', query: 'Tidy the config' }, taskEventSchema, { timeoutMs: 60_000, metadata });
    // Watched from its start once it exists (its first event came), however late the colleague joins.
    let watched: Promise<TaskEvent[]> | undefined;
    const mine = await collect(task, async (event) => {
      watched ??= collect(watch(bob, 'team-watch'));
      if (!event.approval) return;
      const id = event.approval.execution_id;
      await expect(bob.unary('ApproveToolExecution', { execution_id: id, remember: false }, empty, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: 'only the caller that started the task can decide its approvals' });
      // Alice's own identity on the other replica decides it.
      await aliceElsewhere.unary('ApproveToolExecution', { execution_id: id, remember: false }, empty, { timeoutMs: 5000 });
    });
    const seen = await watched!;
    expect(mine.at(-1)).toMatchObject({ status: 'completed' });
    expect(mine.map((event) => event.answer_delta).join('')).toContain('Permission to read: yes; permission to edit: yes.');
    // The colleague saw the same events, numbered the same, from the start to the final state.
    expect(seen.map((event) => [event.sequence, event.status, event.answer_delta])).toEqual(mine.map((event) => [event.sequence, event.status, event.answer_delta]));
    expect(seen.map((event) => event.sequence)).toEqual([...seen.map((event) => event.sequence)].sort((a, b) => a - b));
    const listed = await bob.unary('ListTasks', { running_only: false }, taskListSchema, { timeoutMs: 5000 });
    expect(listed.tasks.find((listedTask) => listedTask.task_id === 'team-watch')).toMatchObject({ owner: 'alice', status: 'completed', title: 'Tidy the config' });
  });

  it('ends the task of a replica killed with SIGKILL failed, in words, for every watcher, within seconds; the survivor goes on serving', async () => {
    const server = await startNats();
    const [one, two] = [await replica(server, 'one'), await replica(server, 'two')];
    const replicas = { one, two };
    const alice = client(one.address, 'alice');
    const watcherOnTwo = client(two.address, 'bob');
    const metadata = await session(alice, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-kill', agent_id: 'alice', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata: { ...metadata, 'x-buckley-detach': '1' } });
    const first = await task.next();
    expect(first.done).toBe(false);
    // Which replica runs it: the one to kill.
    let runner = '';
    while (!runner) runner = (await watcherOnTwo.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.find((listed) => listed.task_id === 'team-kill')?.replica ?? '';
    const survivor = client(runner === 'one' ? two.address : one.address, 'bob');
    // Within seconds of the kill: the watch's deadline is half the task call's.
    const watched = collect(watch(survivor, 'team-kill', 0, 30_000));
    replicas[runner as 'one' | 'two'].process.kill('SIGKILL');
    const seen = await watched;
    expect(seen.at(-1)).toMatchObject({ status: 'failed', message: 'the coordinator running it stopped: run it again' });
    // The survivor runs the next task.
    const again = client(runner === 'one' ? two.address : one.address, 'alice');
    const next = await collect(again.stream('StreamTask', { task_id: 'team-after', agent_id: 'alice', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 60_000, metadata: await session(again, 'alice') }));
    expect(next.at(-1)).toMatchObject({ status: 'completed' });
  });

  it('takes up the task of a replica killed with SIGKILL on another, in the same agent session, where the agent can load it', async () => {
    const server = await startNats();
    // The agent keeps its sessions on disk, shared by the replicas (one machine): it can load them.
    const sessions = tempDir('scripted-sessions-');
    const extra = { env: { SCRIPTED_AGENT_SESSIONS: sessions }, args: ['--agent.sandbox.writable', sessions] };
    const replicas = { one: await replica(server, 'one', 4, extra), two: await replica(server, 'two', 4, extra) };
    const alice = client(replicas.one.address, 'alice');
    const metadata = await session(alice, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-resume', agent_id: 'alice', query: 'HANG ONCE' }, taskEventSchema, { timeoutMs: 60_000, metadata: { ...metadata, 'x-buckley-detach': '1' } });
    // Its agent at work: the session it works in is on the task's stream.
    for (let event = await task.next(); !event.value?.answer_delta.includes('Working on it'); event = await task.next()) expect(event.done).toBe(false);
    const watcher = client(replicas.two.address, 'bob');
    let runner = '';
    while (!runner) runner = (await watcher.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.find((listed) => listed.task_id === 'team-resume')?.replica ?? '';
    const survivor = runner === 'one' ? 'two' : 'one';
    const watched = collect(watch(client(replicas[survivor].address, 'bob'), 'team-resume'));
    replicas[runner as 'one' | 'two'].process.kill('SIGKILL');
    const seen = await watched;
    expect(seen.at(-1)).toMatchObject({ status: 'completed' });
    expect(seen.map((event) => event.message)).toContain(`Taken up again by ${survivor}: the coordinator running it stopped`);
    // The survivor's agent loaded the session the first one worked in: its second turn, the first question in it.
    const answer = seen.map((event) => event.answer_delta).join('');
    expect(answer).toMatch(/Working on it…[\s\S]*taken up in turn 2 of this session \(process \w+\); earlier questions: \[.*HANG ONCE.*\]/);
  });

  it("keeps a pending approval answerable when the replica its caller used dies: the caller follows and answers through another", async () => {
    const server = await startNats();
    // One runs tasks; the other only serves callers, so the task runs on the first.
    const worker = await replica(server, 'worker');
    const gateway = await replica(server, 'gateway', 0);
    const alice = client(gateway.address, 'alice');
    const metadata = await session(alice, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-approve', agent_id: 'alice', query: 'Tidy the config' }, taskEventSchema, { timeoutMs: 60_000, metadata: { ...metadata, 'x-buckley-detach': '1' } });
    let asked: TaskEvent | undefined;
    for await (const event of task) {
      if (event.approval) {
        asked = event;
        break;
      }
    }
    gateway.process.kill('SIGKILL');
    // Alice's bridge moves to the replica left: it answers what waits, and follows the task from where it was.
    const moved = client(worker.address, 'alice');
    await moved.unary('ApproveToolExecution', { execution_id: asked!.approval!.execution_id, remember: false }, empty, { timeoutMs: 5000 });
    const rest = await collect(watch(moved, 'team-approve', asked!.sequence + 1), async (event) => {
      if (event.approval) await moved.unary('ApproveToolExecution', { execution_id: event.approval.execution_id, remember: false }, empty, { timeoutMs: 5000 });
    });
    expect(rest.at(-1)).toMatchObject({ status: 'completed' });
    expect(rest.map((event) => event.answer_delta).join('')).toContain('permission to edit: yes');
  });

  it('keeps one run of a task: a replica paused past its lease (SIGSTOP) finds it taken up when it wakes, and records nothing more of it — one final state, in the stream and in the state', async () => {
    const server = await startNats();
    const replicas = { one: await replica(server, 'one'), two: await replica(server, 'two') };
    const alice = client(replicas.one.address, 'alice');
    const metadata = { ...(await session(alice, 'alice')), 'x-buckley-detach': '1' };
    const task = alice.stream('StreamTask', { task_id: 'team-paused', agent_id: 'alice', query: 'STREAM 80 250' }, taskEventSchema, { timeoutMs: 60_000, metadata });
    for (let event = await task.next(); !event.value?.answer_delta; event = await task.next()) expect(event.done).toBe(false);
    const bob = client(replicas.two.address, 'bob');
    let runner = '';
    while (!runner) runner = (await bob.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.find((listed) => listed.task_id === 'team-paused')?.replica ?? '';
    const paused = replicas[runner as 'one' | 'two'];
    const other = runner === 'one' ? 'two' : 'one';
    const watched = collect(watch(client(replicas[other].address, 'bob'), 'team-paused'));
    // Paused (a stop-the-world pause, a laptop lid): its lease runs out, the other takes the task up.
    paused.process.kill('SIGSTOP');
    const seen = await watched;
    paused.process.kill('SIGCONT');
    expect(seen.at(-1)).toMatchObject({ status: 'failed', message: 'the coordinator running it stopped: run it again' });
    // Awake, its agent still streaming: what it would record is refused, and its turn stops.
    await until(async () => paused.said().includes(`task team-paused: taken up by ${other}`) || paused.said().includes('task team-paused: taken up by another coordinator'));
    const store = await natsEngine({ servers: [server.url] });
    cleanups.push(() => store.close());
    const records = await store.log.read('team-paused');
    const runs = records.filter((record) => record.started).map((record) => record.run);
    expect(new Set(runs).size).toBe(2);
    // After the second run started, nothing of the first: its last piece before, the second's end after.
    const second = records.findIndex((record) => record.started && record.run !== runs[0]);
    expect(records.slice(second).filter((record) => record.run === runs[0])).toEqual([]);
    expect(records.filter((record) => record.final)).toEqual([expect.objectContaining({ final: 'failed', run: runs.at(-1) })]);
    expect(await store.states.get('team-paused')).toMatchObject({ status: 'failed', replica: other });
  });

  it('replays old tasks from a replica started again on the same NATS', async () => {
    const server = await startNats();
    const first = await replica(server, 'first');
    const alice = client(first.address, 'alice');
    const done = await collect(alice.stream('StreamTask', { task_id: 'team-old', agent_id: 'alice', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 60_000, metadata: await session(alice, 'alice') }));
    await first.stop();
    const second = await replica(server, 'second');
    const replayed = await collect(watch(client(second.address, 'bob'), 'team-old'));
    expect(replayed).toEqual(done);
  });

  it('loses nothing of a task when the NATS server restarts in its middle', async () => {
    const server = await startNats();
    const one = await replica(server, 'one');
    const alice = client(one.address, 'alice');
    const stream = alice.stream('StreamTask', { task_id: 'team-restart', agent_id: 'alice', query: 'STREAM 30 100' }, taskEventSchema, { timeoutMs: 60_000, metadata: { ...(await session(alice, 'alice')), 'x-buckley-detach': '1' } });
    // The caller's own call stays open through it, told when NATS goes and when it is back.
    for (let event = await stream.next(); !event.done && !event.value.answer_delta; ) event = await stream.next();
    const said = collect({ [Symbol.asyncIterator]: () => stream });
    await server.stop();
    await server.start();
    const all = await collect(watch(client(one.address, 'alice'), 'team-restart'));
    expect(all.at(-1)).toMatchObject({ status: 'completed' });
    const messages = (await said).map((event) => event.message);
    expect(messages).toContain(`The team's store (NATS at ${server.url}) cannot be reached: waiting up to 120 s for it to come back`);
    expect(messages).toContain(`The team's store (NATS at ${server.url}) is back`);
    expect(messages.at(-1)).toBe('Done');
    const answer = all.map((event) => event.answer_delta).join('');
    expect(answer).toMatch(/^\[first \d+\] word1 word2 word3 .* word29 \[last \d+\]/);
    for (let piece = 2; piece <= 29; piece++) expect(answer).toContain(`word${piece} `);
  });

  it('keeps a task with the run that holds it when NATS is away longer than the lease: handed out again, it is not taken from it, and completes once, whole; the replica handed it runs other tasks meanwhile', async () => {
    const server = await startNats();
    // One task at a time each: the task is handed out again to the replica not running it.
    const replicas = { one: await replica(server, 'one', 1), two: await replica(server, 'two', 1) };
    const alice = client(replicas.one.address, 'alice');
    const metadata = { ...(await session(alice, 'alice')), 'x-buckley-detach': '1' };
    const task = alice.stream('StreamTask', { task_id: 'team-long-away', agent_id: 'alice', query: 'STREAM 150 200' }, taskEventSchema, { timeoutMs: 110_000, metadata });
    for (let event = await task.next(); !event.value?.answer_delta; event = await task.next()) expect(event.done).toBe(false);
    let runner = '';
    while (!runner) runner = (await alice.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.find((listed) => listed.task_id === 'team-long-away')?.replica ?? '';
    const other = replicas[runner === 'one' ? 'two' : 'one'];
    // Away past the lease (10 s): the task is handed out again when NATS is back.
    await server.kill();
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    await server.start();
    await until(async () => other.said().includes(`task team-long-away: handed out again while replica ${runner} runs it`));
    // Waiting on the run that holds it, the other replica still runs the next task at once.
    const next = await collect(alice.stream('StreamTask', { task_id: 'team-meanwhile', agent_id: 'alice', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 60_000, metadata }));
    expect(next.at(-1)).toMatchObject({ status: 'completed' });
    expect((await alice.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.map((listed) => listed.task_id)).toEqual(['team-long-away']);
    const seen = await collect(watch(client(other.address, 'bob'), 'team-long-away'));
    expect(seen.filter((event) => ['completed', 'failed', 'cancelled'].includes(event.status))).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(seen.map((event) => event.message).filter((message) => message.startsWith('Taken up again'))).toEqual([]);
    const answer = seen.map((event) => event.answer_delta).join('');
    for (let piece = 2; piece <= 149; piece++) expect(answer).toContain(`word${piece} `);
    const store = await natsEngine({ servers: [server.url] });
    cleanups.push(() => store.close());
    expect((await store.log.read('team-long-away')).filter((record) => record.started && record.started.agentSession === undefined).map((record) => record.started?.replica)).toEqual([runner]);
  }, 120_000);

  it('fails the tasks it runs, in words, when NATS stays away past --nats-wait: its callers told at once, the failure stored once NATS is back; it stops at once meanwhile', async () => {
    const server = await startNats();
    const one = await replica(server, 'one', 4, { args: ['--nats-wait', '3', '--metrics', '127.0.0.1:0'] });
    const alice = client(one.address, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-away', agent_id: 'alice', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata: await session(alice, 'alice') });
    const { messages, ended } = readUntilEnd(task, () => server.kill());
    expect(await ended).toMatchObject({ code: grpc.status.UNAVAILABLE, details: `this coordinator could not reach the team's store (NATS at ${server.url}) for 3 s: follow the task on another of the team (SubscribeTaskEvents), or run it again once NATS is back` });
    // Told at once, ended at its patience — UNAVAILABLE, not DEADLINE_EXCEEDED at the call's deadline.
    expect(messages).toContain(`The team's store (NATS at ${server.url}) cannot be reached: waiting up to 3 s for it to come back`);
    // Its metrics say how long NATS has been away, and that its figures are old.
    const during = await scrape(metricsAddress(one));
    expect(during.get('buckley_store_away_seconds')).toBeGreaterThanOrEqual(3);
    expect(during.get('buckley_store_scrape_ok')).toBe(0);
    // The task's end waits for NATS, and is there once it is back: nobody follows it forever.
    await server.start();
    const seen = await collect(watch(client(one.address, 'bob'), 'team-away'));
    expect((await scrape(metricsAddress(one))).get('buckley_store_away_seconds')).toBe(0);
    expect(seen.at(-1)).toMatchObject({ status: 'failed', message: `the team's store (NATS at ${server.url}) could not be reached for 3 s, so this task could not be recorded and was stopped: run it again once NATS is back` });
    // Away again, with a task running: SIGTERM ends it without waiting for NATS.
    const next = alice.stream('StreamTask', { task_id: 'team-away-2', agent_id: 'alice', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata: await session(alice, 'alice') });
    for await (const event of next) if (event.answer_delta) break;
    await server.kill();
    const exited = new Promise((resolve) => one.process.once('exit', (code) => resolve(code)));
    one.process.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('tells its callers, and fails its tasks in words, when a NATS cluster loses its quorum: connected, but JetStream stores nothing', async () => {
    const cluster = await startNatsCluster(3);
    const one = await replica(cluster[0]!, 'one', 4, { args: ['--nats-wait', '3', '--nats-replicas', '3'] });
    const alice = client(one.address, 'alice');
    const task = alice.stream('StreamTask', { task_id: 'team-quorum', agent_id: 'alice', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata: await session(alice, 'alice') });
    const { messages, ended } = readUntilEnd(task, () => Promise.all([cluster[1]!.kill(), cluster[2]!.kill()]));
    expect(await ended).toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringContaining(`this coordinator could not reach the team's store (NATS at ${cluster[0]!.url}) for 3 s`) });
    expect(messages).toContain(`The team's store (NATS at ${cluster[0]!.url}) cannot be reached: waiting up to 3 s for it to come back`);
    // Its quorum back, the task's end is there for whoever follows it.
    await Promise.all([cluster[1]!.start(), cluster[2]!.start()]);
    const seen = await collect(watch(client(one.address, 'bob'), 'team-quorum'));
    expect(seen.at(-1)).toMatchObject({ status: 'failed', message: expect.stringMatching(/^the team's store .*: run it again/) });
  });

  it('queues what is beyond what a replica runs at once, saying how many are ahead', async () => {
    const server = await startNats();
    const one = await replica(server, 'one', 1);
    const alice = client(one.address, 'alice');
    const metadata = { ...(await session(alice, 'alice')), 'x-buckley-detach': '1' };
    const start = (taskId: string, query: string) => alice.stream('StreamTask', { task_id: taskId, agent_id: 'alice', query }, taskEventSchema, { timeoutMs: 60_000, metadata });
    const hanging = start('team-q1', 'HANG');
    await hanging.next();
    // Each call starts when it is first read: the second is queued before the third.
    const second = start('team-q2', 'INSTANT');
    expect((await second.next()).value).toMatchObject({ status: 'pending', message: 'Queued, next in line' });
    const third = start('team-q3', 'INSTANT');
    expect((await third.next()).value).toMatchObject({ status: 'pending', message: 'Queued, 1 ahead' });
    await alice.unary('CancelTask', { task_id: 'team-q1' }, empty, { timeoutMs: 5000 });
    expect((await collect(watch(alice, 'team-q3'))).at(-1)).toMatchObject({ status: 'completed' });
  });

  it('stops at once on SIGTERM while callers follow its tasks (a detached one too), its callers told', async () => {
    const server = await startNats();
    await replica(server, 'worker');
    const gateway = await replica(server, 'gateway', 0);
    const alice = client(gateway.address, 'alice');
    const metadata = { ...(await session(alice, 'alice')), 'x-buckley-detach': '1' };
    const task = alice.stream('StreamTask', { task_id: 'team-stop', agent_id: 'alice', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata });
    for await (const event of task) if (event.answer_delta) break;
    const following = collect(watch(alice, 'team-stop')).catch((error: unknown) => error);
    await until(async () => (await alice.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks.length === 1);
    const exited = new Promise((resolve) => gateway.process.once('exit', (code) => resolve(code)));
    gateway.process.kill('SIGTERM');
    // Within the test's time: a stopping replica retries nothing with NATS.
    expect(await exited).toBe(0);
    expect(await following).toMatchObject({ code: grpc.status.UNAVAILABLE });
  });
});

/** A task's stream read to its end (what ended it, as `ended`), its messages kept; `breakIt` done at its first piece of answer. */
function readUntilEnd(task: AsyncIterable<TaskEvent>, breakIt: () => Promise<unknown>): { messages: string[]; ended: Promise<unknown> } {
  const messages: string[] = [];
  let broken = false;
  const ended = (async () => {
    for await (const event of task) {
      messages.push(event.message);
      if (event.answer_delta && !broken) {
        broken = true;
        await breakIt();
      }
    }
  })().catch((error: unknown) => error);
  return { messages, ended };
}

async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 20));
}
