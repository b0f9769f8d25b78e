/**
 * One contract, two engines (src/coordinator/tasks/store.ts): the same tests run against the
 * task engine in memory and on a real NATS server with JetStream — a task's records appended in
 * order and replayed from a sequence, followed live by twenty watchers at once, a run's records
 * stored only while it holds its task (and one run holding it at a time), task states, the work
 * queue (at most so many at a time, what is ahead, its depth). And what only NATS does: a
 * task taken by a coordinator that dies goes to another, a record appended while the server
 * restarts is stored once, and a 3-node cluster that loses a node loses nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryEngine } from '../../src/coordinator/tasks/memory.js';
import { natsEngine } from '../../src/coordinator/tasks/nats.js';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Superseded, type StoredRecord, type TaskEngine } from '../../src/coordinator/tasks/store.js';
import { settleState, takeHold, type Hold } from '../../src/coordinator/tasks/hold.js';
import { requireNats, startNats, startNatsCluster, stopAllNats, type NatsServer } from '../helpers/nats.js';

const nats = requireNats();
afterAll(stopAllNats);

/** An engine, and another coordinator's view of the same store (in memory: the same one). */
type Make = [string, () => Promise<TaskEngine>, (first: TaskEngine) => Promise<TaskEngine>];
const engines: Make[] = [
  ['in memory', async () => memoryEngine(), async (first) => first],
  ...(nats ? ([['on NATS JetStream', async () => natsEngine({ servers: [(await shared()).url], leaseMs: 2_000 }), async () => natsEngine({ servers: [(await shared()).url], leaseMs: 2_000 })]] as Make[]) : []),
];

let server: Promise<NatsServer> | undefined;
const shared = () => (server ??= startNats());

/** Follows a task until `count` records came (or `ms` passed): what came. */
async function gather(engine: TaskEngine, taskId: string, fromSeq: number, count: number, ms = 10_000): Promise<StoredRecord[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  const got: StoredRecord[] = [];
  try {
    for await (const record of engine.log.follow(taskId, fromSeq, controller.signal)) {
      got.push(record);
      if (got.length >= count) break;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return got;
}

describe.each(engines)('the task engine %s', (_name, make, another) => {
  it("keeps a task's records in order with increasing sequence numbers, and replays them from any of them", async () => {
    const engine = await make();
    const task = randomUUID();
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push(await engine.log.append(task, { event: { message: `step ${i}` } }));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(5);
    expect((await engine.log.read(task)).map((record) => record.event?.message)).toEqual(['step 0', 'step 1', 'step 2', 'step 3', 'step 4']);
    expect((await engine.log.read(task, seqs[3])).map((record) => record.seq)).toEqual(seqs.slice(3));
    expect(await engine.log.read(randomUUID())).toEqual([]);
    // Another task's records are not this one's.
    await engine.log.append(randomUUID(), { event: { message: 'elsewhere' } });
    expect(await engine.log.read(task)).toHaveLength(5);
    await engine.close();
  });

  it("says a task's last record: none for a task without any, else the one appended last, its end included", async () => {
    const engine = await make();
    const task = randomUUID();
    expect(await engine.log.last(task)).toBeUndefined();
    await Promise.all(Array.from({ length: 50 }, (_, i) => engine.log.append(task, { event: { answer_delta: `${i} ` } })));
    const end = await engine.log.append(task, { event: { status: 'completed' }, final: 'completed' });
    expect(await engine.log.last(task)).toMatchObject({ seq: end, final: 'completed', event: { status: 'completed' } });
    // Seen from another coordinator of the team too.
    const other = await another(engine);
    expect((await other.log.last(task))?.seq).toBe(end);
    if (other !== engine) await other.close();
    await engine.close();
  });

  it('keeps the order of a thousand appends made at once, and goes on from any of their sequences', async () => {
    const engine = await make();
    const task = randomUUID();
    const seqs = await Promise.all(Array.from({ length: 1000 }, (_, i) => engine.log.append(task, { event: { answer_delta: `${i} ` } })));
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(1000);
    const read = await engine.log.read(task);
    expect(read.map((record) => record.event?.answer_delta).join('')).toBe(Array.from({ length: 1000 }, (_, i) => `${i} `).join(''));
    expect(read.map((record) => record.seq)).toEqual(seqs);
    // From the middle of it (the 501st record, wherever it is stored): exactly what follows.
    expect((await engine.log.read(task, seqs[500]! + 1)).map((record) => record.event?.answer_delta)).toEqual(Array.from({ length: 499 }, (_, i) => `${i + 501} `));
    expect((await gather(engine, task, seqs[500]!, 3)).map((record) => record.event?.answer_delta)).toEqual(['500 ', '501 ', '502 ']);
    await engine.close();
  });

  it('lets twenty watchers follow a task from its start, and sees what comes after they joined', async () => {
    const engine = await make();
    const task = randomUUID();
    await engine.log.append(task, { created: { owner: 'alice', spec: { agentId: 'alice', query: 'fix it', intent: 'task', sessionKey: 's', servesBuffers: false } } });
    const watchers = Array.from({ length: 20 }, () => gather(engine, task, 1, 4));
    await engine.log.append(task, { event: { answer_delta: 'Fixed' } });
    await engine.log.append(task, { reply: { id: 'a1', by: 'alice', answer: 'allow_once' } });
    await engine.log.append(task, { final: 'completed' });
    for (const seen of await Promise.all(watchers)) expect(seen.map((record) => Object.keys(record).find((key) => !['taskId', 'seq', 'at'].includes(key)))).toEqual(['created', 'event', 'reply', 'final']);
    await engine.close();
  });

  it('follows 1,200 tasks at once, each from its start — more than NATS gives a stream consumers (1,000)', async () => {
    const engine = await make();
    const tasks = Array.from({ length: 1_200 }, () => randomUUID());
    await Promise.all(tasks.map((task) => engine.log.append(task, { event: { answer_delta: 'first' } })));
    const followed = tasks.map((task) => gather(engine, task, 1, 2, 60_000));
    await Promise.all(tasks.map((task) => engine.log.append(task, { final: 'completed' })));
    const seen = await Promise.all(followed);
    expect(seen.filter((records) => records.length === 2 && records[1]!.final === 'completed')).toHaveLength(tasks.length);
    await engine.close();
  }, 120_000);

  it('keeps a record far bigger than a NATS message whole (a changed file before and after), in its place among the others', async () => {
    const engine = await make();
    const task = randomUUID();
    const before = 'a line of the file as it was\n'.repeat(120_000);
    const after = 'é, a line of the file as it is now 🙂\n'.repeat(100_000);
    await engine.log.append(task, { event: { message: 'before' } });
    const seq = await engine.log.append(task, { event: { file_changed: { path: '/w/big.txt', before, after } } });
    await engine.log.append(task, { final: 'completed' });
    const read = await engine.log.read(task);
    expect(read.map((record) => record.event?.message ?? record.final ?? 'changed')).toEqual(['before', 'changed', 'completed']);
    expect(read[1]!.seq).toBe(seq);
    expect(read[1]!.event).toEqual({ file_changed: { path: '/w/big.txt', before, after } });
    const followed = await gather(engine, task, seq, 2);
    expect((followed[0]!.event!.file_changed as { after: string }).after).toBe(after);
    await engine.close();
  });

  it("stores a run's records only while it holds the task: once another run started, or the task ended, they are refused — whichever coordinator wrote first", async () => {
    const engine = await make();
    const elsewhere = await another(engine);
    const task = randomUUID();
    await engine.log.append(task, { created: { owner: 'alice', spec: { agentId: 'alice', query: 'q', intent: 'task', sessionKey: 's', servesBuffers: false } } });
    await engine.log.append(task, { run: 'a', started: { replica: 'one' } });
    await engine.log.append(task, { run: 'a', event: { message: 'a works' } });
    // Another coordinator takes the task up (this one was cut off): the first run's records are refused from then on.
    await elsewhere.log.append(task, { run: 'b', started: { replica: 'two' } });
    await expect(engine.log.append(task, { run: 'a', event: { message: 'a again' } })).rejects.toBeInstanceOf(Superseded);
    await expect(engine.log.append(task, { run: 'a', event: { status: 'completed' }, final: 'completed' })).rejects.toBeInstanceOf(Superseded);
    // What the caller writes is never refused; the run holding the task goes on, and ends it once.
    await engine.log.append(task, { reply: { id: 'r', by: 'alice', answer: true } });
    await elsewhere.log.append(task, { run: 'b', event: { message: 'b works' } });
    await elsewhere.log.append(task, { run: 'b', event: { status: 'failed' }, final: 'failed' });
    await expect(elsewhere.log.append(task, { run: 'b', event: { status: 'completed' }, final: 'completed' })).rejects.toBeInstanceOf(Superseded);
    await expect(engine.log.append(task, { run: 'c', started: { replica: 'one' } })).rejects.toBeInstanceOf(Superseded);
    await engine.log.append(task, { caller: { detached: 's' } });
    const stored = await engine.log.read(task);
    expect(stored.map((record) => record.event?.message ?? record.event?.status ?? Object.keys(record).find((key) => !['taskId', 'seq', 'at', 'run'].includes(key)))).toEqual(['created', 'started', 'a works', 'started', 'reply', 'b works', 'failed', 'caller']);
    expect(stored.filter((record) => record.final)).toHaveLength(1);
    if (elsewhere !== engine) await elsewhere.close();
    await engine.close();
  });

  it('lets one run at a time hold a task: another waits while its heartbeat moves, and takes it up once it stops', async () => {
    const engine = await make();
    const elsewhere = await another(engine);
    const task = randomUUID();
    await engine.states.put(task, { owner: 'alice', status: 'queued', title: 't', seq: 1, updatedAt: Date.now() });
    const stop = new AbortController();
    const first = (await takeHold(engine.states, task, 'one', stop.signal)) as Hold;
    expect(await first.update({})).toBe(true);
    let second: Hold | undefined;
    const taking = takeHold(elsewhere.states, task, 'two', stop.signal).then((hold) => (second = hold as Hold));
    // While the first beats, the second waits.
    for (let beats = 0; beats < 4; beats++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(second).toBeUndefined();
      expect(await first.update({})).toBe(true);
    }
    // It stops beating: the second takes the task up, and the first finds it lost.
    await taking;
    expect(second).toBeDefined();
    expect(await first.update({ status: 'awaiting_approval' })).toBe(false);
    expect(first.lost).toBe('two');
    expect(await engine.states.get(task)).toMatchObject({ status: 'running', replica: 'two', run: second!.run });
    // Ended, it is taken by nobody.
    await settleState(engine.states, task, 'completed');
    expect(await takeHold(engine.states, task, 'three', stop.signal)).toBeUndefined();
    // Without a state (a copy behind, or lost), it is said to be unknown rather than taken or dropped.
    expect(await takeHold(engine.states, randomUUID(), 'three', stop.signal)).toBe('unknown');
    if (elsewhere !== engine) await elsewhere.close();
    await engine.close();
  }, 30_000);

  it("keeps each task's state, and lists them", async () => {
    const engine = await make();
    const [one, two] = [randomUUID(), randomUUID()];
    await engine.states.put(one, { owner: 'alice', status: 'running', title: 'fix it', seq: 3, updatedAt: 1 });
    await engine.states.put(two, { owner: 'bob', status: 'queued', title: 'test it', seq: 1, updatedAt: 2 });
    await engine.states.put(one, { owner: 'alice', status: 'completed', title: 'fix it', seq: 9, updatedAt: 3 });
    expect(await engine.states.get(one)).toMatchObject({ status: 'completed', seq: 9 });
    expect(await engine.states.get(randomUUID())).toBeUndefined();
    const all = await engine.states.list();
    expect(all.get(two)).toMatchObject({ owner: 'bob', status: 'queued' });
    // Each task once, as it is now (its latest state), however many there are.
    expect(all.get(one)).toMatchObject({ status: 'completed', seq: 9 });
    const many = Array.from({ length: 500 }, () => randomUUID());
    await Promise.all(many.map((task, i) => engine.states.put(task, { owner: 'carol', status: 'queued', title: `task ${i}`, seq: i, updatedAt: i })));
    const listed = await engine.states.list();
    expect(many.every((task, i) => listed.get(task)?.title === `task ${i}`)).toBe(true);
    await engine.close();
  });

  it("changes a task's state atomically: of two changes at once, each sees the other's", async () => {
    const engine = await make();
    const second = await another(engine);
    const task = randomUUID();
    await engine.states.put(task, { owner: 'alice', status: 'running', title: 'fix it', seq: 1, updatedAt: 1, pending: [] });
    const add = (one: TaskEngine, id: string) => one.states.update(task, (state) => ({ ...state, pending: [...(state.pending ?? []), id] }));
    await Promise.all(Array.from({ length: 10 }, (_, i) => add(i % 2 ? engine : second, `r${i}`)));
    expect([...((await engine.states.get(task))?.pending ?? [])].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`).sort());
    // A change that finds nothing to do leaves the state as it is.
    expect(await engine.states.update(task, () => undefined)).toMatchObject({ status: 'running' });
    expect(await engine.states.update(randomUUID(), (state) => state)).toBeUndefined();
    if (second !== engine) await second.close();
    await engine.close();
  });

  it('runs queued tasks at most so many at a time, in order, and says how many are ahead', async () => {
    const engine = await make();
    const tasks = Array.from({ length: 6 }, () => randomUUID());
    const tickets: number[] = [];
    for (const task of tasks) tickets.push(await engine.queue.enqueue(task));
    expect(await engine.queue.ahead(tickets[5]!)).toBe(5);
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const release: (() => void)[] = [];
    const worker = engine.queue.work(2, async ({ taskId }) => {
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => release.push(resolve));
      running--;
      done.push(taskId);
    });
    // Two taken, four waiting: the last has three ahead of it.
    await until(() => release.length === 2);
    await until(async () => (await engine.queue.ahead(tickets[5]!)) === 3);
    expect(await engine.queue.depth()).toBe(4);
    // Its consumers' lag (the coordinator's metrics): four not handed out, two handed out and not done.
    expect(await engine.queue.lag()).toEqual({ pending: 4, unacknowledged: 2 });
    while (done.length < 6) {
      release.shift()?.();
      await until(() => release.length > 0 || done.length === 6);
    }
    expect(most).toBe(2);
    expect(done).toEqual(tasks);
    await worker.stop();
    await engine.close();
  });
});

describe.runIf(nats)('the task engine on NATS JetStream, when things fail', () => {
  it('gives a task taken by a coordinator that died to another, as redelivered, once its lease ran out', async () => {
    const url = (await shared()).url;
    const dying = await natsEngine({ servers: [url], leaseMs: 2_000 });
    const other = await natsEngine({ servers: [url], leaseMs: 2_000 });
    const task = randomUUID();
    await dying.queue.enqueue(task);
    let taken = false;
    dying.queue.work(1, async () => {
      taken = true;
      await new Promise(() => undefined);
    });
    await until(() => taken);
    // Its connection goes, its lease is no longer renewed.
    await dying.close();
    const seen = await new Promise<{ taskId: string; redelivered: boolean }>((resolve) => other.queue.work(1, async (job) => resolve(job)));
    expect(seen).toMatchObject({ taskId: task, redelivered: true });
    await other.close();
  });

  it('stores once, in order, what was appended while the NATS server restarted', async () => {
    const alone = await startNats();
    const engine = await natsEngine({ servers: [alone.url] });
    const task = randomUUID();
    await engine.log.append(task, { event: { message: 'before' } });
    await alone.stop();
    const during = [engine.log.append(task, { event: { message: 'during 1' } }), engine.log.append(task, { event: { message: 'during 2' } })];
    await alone.start();
    await Promise.all(during);
    await engine.log.append(task, { event: { message: 'after' } });
    expect((await engine.log.read(task)).map((record) => record.event?.message)).toEqual(['before', 'during 1', 'during 2', 'after']);
    await engine.close();
  });

  it('keeps at most so many bytes of records waiting for NATS while it is away: past that an append fails at once, in words, but never a task\'s end', async () => {
    const alone = await startNats();
    const engine = await natsEngine({ servers: [alone.url], maxWaitingBytes: 2 ** 20 });
    const task = randomUUID();
    await engine.log.append(task, { event: { message: 'before' } });
    await alone.stop();
    const piece = 'x'.repeat(600 * 1024);
    const waiting = engine.log.append(task, { event: { message: 'waits', answer_delta: piece } });
    await expect(engine.log.append(task, { event: { message: 'too much', answer_delta: piece } })).rejects.toThrow("1 MB of the tasks' records wait for NATS already (at most 1 MB)");
    const end = engine.log.append(task, { event: { status: 'failed', answer_delta: piece }, final: 'failed' });
    await alone.start();
    await Promise.all([waiting, end]);
    expect((await engine.log.read(task)).map((record) => record.event?.message ?? record.final)).toEqual(['before', 'waits', 'failed']);
    await engine.close();
  });

  it('loses nothing when one node of a 3-node cluster is killed (streams with 3 replicas)', async () => {
    const cluster = await startNatsCluster(3);
    const engine = await natsEngine({ servers: cluster.map((node) => node.url), replicas: 3 });
    const task = randomUUID();
    for (let i = 0; i < 10; i++) await engine.log.append(task, { event: { message: `step ${i}` } });
    await cluster[0]!.kill();
    for (let i = 10; i < 20; i++) await engine.log.append(task, { event: { message: `step ${i}` } });
    const read = await engine.log.read(task);
    expect(read.map((record) => record.event?.message)).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
    await engine.close();
  }, 90_000);

  it('lets one running replica have a name: another of that name is refused in words; freed when it stops; taken from one that died once it is silent', async () => {
    const nats = await startNats();
    const first = await natsEngine({ servers: [nats.url], replica: 'r1' });
    await expect(natsEngine({ servers: [nats.url], replica: 'r1' })).rejects.toThrow(new RegExp(`^the replica name r1 is in use by a coordinator that is running \\(process ${process.pid} on [^)]+\\): give each replica its own --replica$`));
    await first.close();
    const again = await natsEngine({ servers: [nats.url], replica: 'r1' });
    await again.close();
    // Held by a run that died without letting it go (SIGKILL): it never beats again.
    const connection = await connect({ servers: nats.url });
    const names = await new Kvm(connection).open('buckley_replicas');
    await names.put(Buffer.from('r1').toString('base64url'), JSON.stringify({ instance: 'dead', host: 'elsewhere', pid: 4242 }));
    const said: string[] = [];
    const logger = { info: (line: string) => said.push(line), warn: (line: string) => said.push(line), error: () => undefined, debug: () => undefined } as never;
    const after = await natsEngine({ servers: [nats.url], replica: 'r1', logger });
    expect(said).toContain('replica name r1 was held by process 4242 on elsewhere: taken once it has been silent for 6 s');
    await after.close();
    await connection.close();
  }, 60_000);

  it('keeps in 3 copies what a team made with one before it grew to a 3-node cluster, saying so — and never fewer than it has', async () => {
    const cluster = await startNatsCluster(3);
    const first = await natsEngine({ servers: [cluster[0]!.url], replicas: 1 });
    const task = randomUUID();
    await first.log.append(task, { event: { message: 'kept' } });
    await first.close();
    const said: string[] = [];
    const logger = { info: (line: string) => said.push(line), warn: (line: string) => said.push(line), error: () => undefined, debug: () => undefined } as never;
    const grown = await natsEngine({ servers: cluster.map((node) => node.url), replicas: 3, logger });
    const streams = ['BUCKLEY_TASKS', 'BUCKLEY_WORK', 'KV_buckley_tasks', 'OBJ_buckley_blobs', 'KV_buckley_replicas'];
    expect(said).toEqual(streams.map((name) => `${name} was kept in 1 copy: now in 3`));
    const connection = await connect({ servers: cluster[1]!.url });
    const jsm = await jetstreamManager(connection);
    // Copied to the other nodes (they catch up in the background).
    for (const name of streams) await until(async () => (await jsm.streams.info(name)).cluster?.replicas?.filter((peer) => peer.current).length === 2, 30_000);
    // A replica given one server of it, asking for one copy, takes none away.
    const narrow = await natsEngine({ servers: [cluster[2]!.url], replicas: 1 });
    for (const name of streams) expect((await jsm.streams.info(name)).config.num_replicas).toBe(3);
    expect((await grown.log.read(task)).map((record) => record.event?.message)).toEqual(['kept']);
    await connection.close();
    await narrow.close();
    await grown.close();
  }, 90_000);
});

async function until(condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('the condition was not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
