/**
 * A team's coordinator reading what buckley-lsp did not write to NATS: anyone the team's NATS
 * admits can publish to its subjects and put into its bucket (a colleague's script, another
 * program, another version), and a store can be damaged. A job, a task's state, or a message of a
 * task's stream not in buckley-lsp's form is said in the log and left out — never retried as if
 * NATS were away, never the end of the listing, of the queue, or of a task's stream — and a call
 * about that very task is answered DATA_LOSS in words. The store away is said as away, not as
 * "no task".
 */
import * as grpc from '@grpc/grpc-js';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as z from '../../src/schema.js';
import { CoordinatorClient } from '../../src/wire/client.js';
import { taskEventSchema, taskListSchema, type TaskEvent } from '../../src/wire/contract.js';
import { startReplica, type CoordinatorProcess } from '../helpers/coordinators.js';
import { metricsAddress, scrape } from '../helpers/metrics.js';
import { requireNats, startNats, stopAllNats, type NatsServer } from '../helpers/nats.js';
import { collect, session } from '../helpers/team.js';

const nats = requireNats();
afterAll(stopAllNats);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function replica(server: NatsServer, name: string, args: string[] = []): Promise<CoordinatorProcess> {
  const started = await startReplica(server.url, name, 4, { args });
  cleanups.push(() => started.stop());
  return started;
}

function client(address: string, agentId: string): CoordinatorClient {
  const made = new CoordinatorClient({ address, agentId, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
  cleanups.push(() => made.close());
  return made;
}

/** A plain NATS connection, as a colleague's script would have. */
async function outsider(server: NatsServer): Promise<NatsConnection> {
  const connection = await connect({ servers: server.url });
  cleanups.push(() => connection.close());
  return connection;
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 50));
}

const bytes = (text: string) => new TextEncoder().encode(text);
const empty = z.object({});

describe.runIf(nats)("a team's coordinator, reading from NATS what buckley-lsp did not write there", () => {
  it('says and leaves out jobs, states and stream messages not in its form: the queue, the listing, the metrics and a running task go on; that task itself is answered DATA_LOSS in words', async () => {
    const server = await startNats();
    const one = await replica(server, 'one', ['--metrics', '127.0.0.1:0']);
    const alice = client(one.address, 'alice');
    const metadata = await session(alice, 'alice');
    const js = jetstream(await outsider(server));
    // Jobs no coordinator queued: not JSON, and naming no task.
    await js.publish('buckley.work', bytes('not json'));
    await js.publish('buckley.work', bytes('{"task":"x"}'));
    // States no coordinator wrote.
    const bucket = await new Kvm(js).open('buckley_tasks');
    await bucket.put('scribbled', 'not json');
    await bucket.put('older', '{"status":7}');
    await until(() => one.said().includes('a job of the work queue (BUCKLEY_WORK) in NATS is not in the form buckley-lsp writes (taskId: '));
    expect(one.said()).toContain('a job of the work queue (BUCKLEY_WORK) in NATS is not JSON (8 bytes): it was not written by buckley-lsp, or is damaged: dropped');

    // A task waiting for its approval gets messages it did not write in its stream: unreadable, and a blob that is not there.
    const events: TaskEvent[] = [];
    const done = collect(alice.stream('StreamTask', { task_id: 'hostile-mid', agent_id: 'alice', query: 'Tidy the config' }, taskEventSchema, { timeoutMs: 60_000, metadata }), async (event) => {
      events.push(event);
      if (!event.approval) return;
      if (events.filter((seen) => seen.approval).length === 1) {
        await js.publish('buckley.tasks.hostile-mid', bytes('{"oops":'));
        await js.publish('buckley.tasks.hostile-mid', bytes('[{"at":"yesterday","final":"completed"}]'));
        await js.publish('buckley.tasks.hostile-mid', bytes('{"blob":"nowhere"}'));
      }
      await alice.unary('ApproveToolExecution', { execution_id: event.approval.execution_id, remember: false }, empty, { timeoutMs: 5000 });
    });
    const seen = await done;
    // Its run went on past them (its fence read them, and took none as a record): one final state, its own.
    expect(seen.at(-1)).toMatchObject({ status: 'completed' });
    expect(seen.filter((event) => ['completed', 'failed', 'cancelled'].includes(event.status))).toHaveLength(1);
    expect(seen.map((event) => event.answer_delta).join('')).toContain('permission to edit: yes');
    // A colleague replaying it from its start sees the same, past what it cannot read.
    const bob = client(one.address, 'bob');
    const replayed = await collect(bob.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['hostile-mid'], from_sequence: 0 }, taskEventSchema, { timeoutMs: 30_000 }));
    expect(replayed.map((event) => [event.sequence, event.status])).toEqual(seen.map((event) => [event.sequence, event.status]));
    expect(one.said()).toMatch(/message \d+ of task hostile-mid in NATS is not JSON \(8 bytes\): it was not written by buckley-lsp, or is damaged: skipped/);
    expect(one.said()).toMatch(/message \d+ of task hostile-mid in NATS is not in the form buckley-lsp writes \(0\.at: invalid input: expected number, received string\): skipped/);
    expect(one.said()).toMatch(/the records of message \d+ of task hostile-mid are missing from NATS \(their blob nowhere is gone\): skipped/);

    // The listing and the metrics go on without the states they cannot read, saying which.
    const listed = await bob.unary('ListTasks', { running_only: false }, taskListSchema, { timeoutMs: 5000 });
    expect(listed.tasks.map((task) => task.task_id)).toEqual(['hostile-mid']);
    expect(one.said()).toContain('the state of task scribbled in NATS is not JSON (8 bytes): it was not written by buckley-lsp, or is damaged: left out of the listing');
    expect(one.said()).toContain('the state of task older in NATS is not in the form buckley-lsp writes (owner: invalid input: expected string, received undefined; status: invalid option');
    expect((await scrape(metricsAddress(one))).get('buckley_tasks{state="completed"}')).toBe(1);

    // Asked about one of them: in words, at once (not retried as if NATS were away), not "no task".
    const started = Date.now();
    await expect(collect(bob.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['older'], from_sequence: 0 }, taskEventSchema, { timeoutMs: 30_000 }))).rejects.toMatchObject({
      code: grpc.status.DATA_LOSS,
      details: expect.stringContaining('the tasks cannot be looked up: the state of task older in NATS is not in the form buckley-lsp writes (owner: '),
    });
    await expect(alice.unary('CancelTask', { task_id: 'scribbled' }, empty, { timeoutMs: 30_000 })).rejects.toMatchObject({ code: grpc.status.DATA_LOSS, details: expect.stringContaining('task scribbled could not be cancelled: the state of task scribbled in NATS is not JSON') });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('answers CancelTask with NATS away as the store away, not as "no task", and not as cancelled', async () => {
    const server = await startNats();
    const one = await replica(server, 'one');
    const alice = client(one.address, 'alice');
    const metadata = await session(alice, 'alice');
    const done = collect(alice.stream('StreamTask', { task_id: 'hostile-away', agent_id: 'alice', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 60_000, metadata }));
    expect((await done).at(-1)).toMatchObject({ status: 'completed' });
    await server.stop();
    await expect(alice.unary('CancelTask', { task_id: 'hostile-away' }, empty, { timeoutMs: 60_000 })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: expect.stringMatching(/^task hostile-away could not be cancelled: .*; try again once it is back$/),
    });
  }, 60_000);
});
