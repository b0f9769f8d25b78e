/**
 * The task engine on NATS JetStream (store.ts), for a team's coordinators: loaded only with
 * `--nats`. What it keeps lives in the NATS servers, with as many copies as they are asked for:
 *
 * - **BUCKLEY_TASKS**: one subject a task (`buckley.tasks.<id>`); a record's sequence is the
 *   stream's. A task's records are appended in order (one after the other), each with a message
 *   id, so that an append retried across a NATS restart is stored once. Replay and follow are
 *   ordered consumers from a sequence.
 * - **BUCKLEY_WORK**: the work queue (work-queue retention), one durable consumer that all
 *   replicas pull from, each as much as it has room for. A task taken is held while it runs (its
 *   lease renewed) and given to another replica when its holder stops renewing it (it died).
 * - **buckley_tasks** (KV): each task's state at a glance.
 */
import { randomBytes } from 'node:crypto';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { Job, StoredRecord, TaskEngine, TaskLog, TaskRecord, TaskState, TaskStates, WorkQueue } from './store.js';

export interface NatsEngineOptions {
  /** `nats://host:port` each (a cluster's servers). */
  servers: string[];
  /** Copies of each stream and bucket (3 on a 3-node cluster). */
  replicas?: number;
  /** How long a taken task is held without its lease renewed before another replica gets it. */
  leaseMs?: number;
  /** How long an append is retried while NATS is away before it fails. */
  appendDeadlineMs?: number;
  /** How this connection is named in NATS (its monitoring, its logs). */
  name?: string;
  /** How long JetStream may take to be ready (a cluster electing its leader). */
  readyMs?: number;
}

const TASKS = 'BUCKLEY_TASKS';
const WORK = 'BUCKLEY_WORK';
const BUCKET = 'buckley_tasks';
const WORKERS = 'workers';
const subjectOf = (taskId: string) => `buckley.tasks.${taskId}`;
const LEASE_MS = 10_000;
const APPEND_DEADLINE_MS = 120_000;
/** How long one pass of a read waits for a task's messages (a stalled consumer is made anew, up to the deadline). */
const FETCH_MS = 3_000;
/**
 * How long a follower's pull waits: a consumer whose server went away (a node lost) is noticed by
 * its missed heartbeats (every half of it) and made again on another.
 */
const PULL_EXPIRES_MS = 6_000;

const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const decode = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T;

/** Task ids become subjects: only what a subject token may hold. */
function checkTaskId(taskId: string): void {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(taskId)) throw new Error(`a task id is letters, digits, _ and - (at most 128): ${JSON.stringify(taskId).slice(0, 80)}`);
}

class NatsLog implements TaskLog {
  /** Each task's appends, one after the other: its stream keeps their order. */
  private readonly chains = new Map<string, Promise<unknown>>();
  private readonly origin = randomBytes(6).toString('hex');
  private appended = 0;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly deadlineMs: number,
    private readonly retry: Retry,
  ) {}

  append(taskId: string, record: TaskRecord): Promise<number> {
    checkTaskId(taskId);
    const msgID = `${this.origin}-${++this.appended}`;
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.publish(taskId, record, msgID));
    this.chains.set(taskId, next);
    void next.finally(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    }).catch(() => undefined);
    return next;
  }

  /** Publishes one record, again while NATS is away (the message id stores it once), up to the deadline. */
  private async publish(taskId: string, record: TaskRecord, msgID: string): Promise<number> {
    const data = encode({ ...record, at: Date.now() });
    try {
      return (await this.retry(() => this.js.publish(subjectOf(taskId), data, { msgID, timeout: 5_000 }), this.deadlineMs)).seq;
    } catch (error) {
      throw new Error(`the task's record could not be stored: ${(error as Error).message}`);
    }
  }

  /** Every record stored now, from `fromSeq`: all of them, or an error — never some. */
  async read(taskId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkTaskId(taskId);
    const last = await this.retry(() => this.lastSeq(taskId), this.deadlineMs);
    const records: StoredRecord[] = [];
    const until = Date.now() + this.deadlineMs;
    for (let next = fromSeq; last !== undefined && next <= last; next = (records.at(-1)?.seq ?? next - 1) + 1) {
      if (Date.now() > until) throw new Error(`the records of task ${taskId} could not be read from NATS within ${this.deadlineMs / 1000} s`);
      // A pass that stalls (its consumer's server went away) ends; the next goes on from where it stopped.
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), FETCH_MS);
      try {
        for await (const record of this.follow(taskId, next, controller.signal)) {
          records.push(record);
          if (record.seq >= last) break;
        }
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
    }
    return records;
  }

  async *follow(taskId: string, fromSeq: number, signal: AbortSignal): AsyncIterable<StoredRecord> {
    checkTaskId(taskId);
    if (signal.aborted) return;
    // Again while NATS is away (a node lost, its stream's leader elected anew): the connection comes back.
    const consumer = await this.retry(() => this.js.consumers.get(TASKS, { filter_subjects: [subjectOf(taskId)], deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, fromSeq) }), this.deadlineMs);
    const messages = await consumer.consume({ expires: PULL_EXPIRES_MS });
    const stop = () => messages.stop();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const message of messages) {
        yield { ...decode<TaskRecord & { at: number }>(message.data), taskId, seq: message.seq };
        if (signal.aborted) return;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      messages.stop();
    }
  }

  /** The sequence of the task's last record; undefined when it has none (a failure is thrown: no guess). */
  private async lastSeq(taskId: string): Promise<number | undefined> {
    return (await this.jsm.streams.getMessage(TASKS, { last_by_subj: subjectOf(taskId) }))?.seq;
  }
}

/** How long a call waits for NATS to come back (a restart, a node lost) before it fails. */
const AWAY_MS = 15_000;

class NatsStates implements TaskStates {
  constructor(
    private readonly kv: KV,
    private readonly retry: Retry,
  ) {}

  async put(taskId: string, state: TaskState): Promise<void> {
    checkTaskId(taskId);
    await this.retry(() => this.kv.put(taskId, encode(state)), AWAY_MS);
  }

  async get(taskId: string): Promise<TaskState | undefined> {
    checkTaskId(taskId);
    const entry = await this.retry(() => this.kv.get(taskId), AWAY_MS);
    return entry && entry.operation === 'PUT' ? decode<TaskState>(entry.value) : undefined;
  }

  async update(taskId: string, change: (state: TaskState) => TaskState | undefined): Promise<TaskState | undefined> {
    checkTaskId(taskId);
    for (;;) {
      const entry = await this.retry(() => this.kv.get(taskId), AWAY_MS);
      if (!entry || entry.operation !== 'PUT') return undefined;
      const state = decode<TaskState>(entry.value);
      const changed = change(state);
      if (!changed) return state;
      try {
        await this.kv.update(taskId, encode(changed), entry.revision);
        return changed;
      } catch (error) {
        // Another coordinator changed it between: read it again (any other failure is thrown).
        if (!/wrong last sequence|revision/i.test((error as Error).message)) throw error;
      }
    }
  }

  async list(): Promise<Map<string, TaskState>> {
    const states = new Map<string, TaskState>();
    for await (const key of await this.kv.keys()) {
      const state = await this.get(key).catch(() => undefined);
      if (state) states.set(key, state);
    }
    return states;
  }
}

class NatsQueue implements WorkQueue {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly leaseMs: number,
    private readonly retry: Retry,
    /** Whether the engine is closing or closed for good. */
    private readonly closed: () => boolean,
  ) {}

  async enqueue(taskId: string): Promise<number> {
    checkTaskId(taskId);
    // Once: a task queued twice would run twice.
    return (await this.retry(() => this.js.publish('buckley.work', encode({ taskId }), { timeout: 5_000, msgID: `work-${taskId}` }), AWAY_MS)).seq;
  }

  async ahead(ticket: number): Promise<number> {
    const info = await this.retry(() => this.jsm.consumers.info(WORK, WORKERS), AWAY_MS);
    // Delivered in order: what is queued before the ticket and not yet handed out.
    return Math.max(0, Math.min(info.num_pending, ticket - info.delivered.stream_seq - 1));
  }

  async depth(): Promise<number> {
    return (await this.retry(() => this.jsm.consumers.info(WORK, WORKERS), AWAY_MS)).num_pending;
  }

  work(concurrency: number, handle: (job: Job) => Promise<void>): { stop(): Promise<void> } {
    let stopped = false;
    let running = 0;
    let freed: (() => void) | undefined;
    const loop = (async () => {
      const consumer = await this.js.consumers.get(WORK, WORKERS);
      while (!stopped) {
        if (running >= concurrency) {
          await new Promise<void>((resolve) => (freed = resolve));
          continue;
        }
        let message: JsMsg | null;
        try {
          message = await consumer.next({ expires: 2_000 });
        } catch {
          // NATS away (it comes back: the connection reconnects), or this connection closed.
          if (this.closed()) return;
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        if (!message || stopped) {
          message?.nak();
          continue;
        }
        running++;
        void this.run(message, handle).finally(() => {
          running--;
          freed?.();
        });
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        freed?.();
        await loop.catch(() => undefined);
      },
    };
  }

  /** Runs a job, its lease renewed meanwhile; acknowledged once done (a failure is the task's to record). */
  private async run(message: JsMsg, handle: (job: Job) => Promise<void>): Promise<void> {
    const renew = setInterval(() => message.working(), Math.max(500, this.leaseMs / 3));
    try {
      await handle({ taskId: decode<{ taskId: string }>(message.data).taskId, redelivered: message.info.redelivered });
    } finally {
      clearInterval(renew);
      message.ack();
    }
  }
}

/** Makes the streams, the consumer and the bucket where they are not there yet (as any replica may be first). */
async function provision(jsm: JetStreamManager, replicas: number, leaseMs: number): Promise<void> {
  const ensure = async (name: string, config: Parameters<JetStreamManager['streams']['add']>[0]) => {
    try {
      await jsm.streams.info(name);
    } catch {
      await jsm.streams.add(config).catch(async (error: unknown) => {
        // Another replica made it meanwhile.
        await jsm.streams.info(name).catch(() => Promise.reject(error));
      });
    }
  };
  await ensure(TASKS, { name: TASKS, subjects: ['buckley.tasks.*'], storage: StorageType.File, num_replicas: replicas, max_age: nanos(7 * 24 * 3600_000), duplicate_window: nanos(5 * 60_000) });
  await ensure(WORK, { name: WORK, subjects: ['buckley.work'], storage: StorageType.File, num_replicas: replicas, retention: RetentionPolicy.Workqueue });
  try {
    await jsm.consumers.info(WORK, WORKERS);
  } catch {
    await jsm.consumers.add(WORK, { durable_name: WORKERS, ack_policy: AckPolicy.Explicit, ack_wait: nanos(leaseMs), max_deliver: -1 }).catch(() => undefined);
  }
}

const READY_MS = 30_000;

/** `work` tried again while JetStream is not ready yet (a cluster electing its leader), up to `withinMs`. */
/** Does `work`, again while NATS is away, within `withinMs`. */
type Retry = <T>(work: () => Promise<T>, withinMs: number) => Promise<T>;

async function untilReady<T>(work: () => Promise<T>, withinMs: number, closing: () => boolean = () => false): Promise<T> {
  const until = Date.now() + withinMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    if (closing()) throw new Error('the coordinator is stopping: NATS is no longer asked');
    try {
      return await work();
    } catch (error) {
      if (closing()) throw new Error('the coordinator is stopping: NATS is no longer asked');
      if (Date.now() + wait > until) throw new Error(`NATS JetStream was not ready within ${withinMs / 1000} s: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Connects to the NATS servers and makes what is not there yet. */
export async function natsEngine(options: NatsEngineOptions): Promise<TaskEngine> {
  const nc: NatsConnection = await connect({ servers: options.servers, name: options.name ?? 'buckley-lsp coordinator', reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 10_000 });
  try {
    const replicas = options.replicas ?? 1;
    const leaseMs = options.leaseMs ?? LEASE_MS;
    // A cluster just started elects its JetStream leader first: its replicas may come up before.
    const { jsm, kv } = await untilReady(async () => {
      const manager = await jetstreamManager(nc);
      await provision(manager, replicas, leaseMs);
      return { jsm: manager, kv: await new Kvm(nc).create(BUCKET, { replicas, history: 1 }) };
    }, options.readyMs ?? READY_MS);
    const js = jetstream(nc);
    let closing = false;
    const stopped = () => closing || nc.isClosed();
    const retry: Retry = (work, withinMs) => untilReady(work, withinMs, stopped);
    return {
      name: 'nats',
      log: new NatsLog(js, jsm, options.appendDeadlineMs ?? APPEND_DEADLINE_MS, retry),
      states: new NatsStates(kv, retry),
      queue: new NatsQueue(js, jsm, leaseMs, retry, stopped),
      close: async () => {
        closing = true;
        await nc.drain().catch(() => nc.close());
      },
    };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
