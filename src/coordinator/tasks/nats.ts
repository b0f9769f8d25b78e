/**
 * The task engine on NATS JetStream (store.ts), for a team's coordinators: loaded only with
 * `--nats`. What it keeps lives in the NATS servers, with as many copies as they are asked for:
 *
 * - **BUCKLEY_TASKS**: one subject a task (`buckley.tasks.<id>`), its records in order, many a
 *   message (natsLog.ts). Replay and follow are ordered consumers from a sequence.
 * - **BUCKLEY_WORK**: the work queue (work-queue retention), one durable consumer that all
 *   replicas pull from, each as much as it has room for. A task taken is held while it runs (its
 *   lease renewed) and given to another replica when its holder stops renewing it (it died).
 * - **buckley_tasks** (KV): each task's state at a glance.
 * - **buckley_blobs** (object store): a message too big for NATS (natsLog.ts), chunked.
 */
import { connect, credsAuthenticator, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { checkTaskId, encode, NatsLog, subjectOf, TASKS, wrongLast, type Retry } from './natsLog.js';
import { readJob, readState } from './natsRead.js';
import { provision, WORK, WORKERS } from './natsProvision.js';
import { holdName } from './natsPresence.js';
import type { NatsAuth } from './natsAccess.js';
import { TaskFeed } from './natsFeed.js';
import { natsHealth } from './natsHealth.js';
import type { Logger } from '../../logger.js';
import { PEM_MAX_BYTES, readFileBounded } from '../../fileAccess.js';
import { Unreadable, type Job, type TaskEngine, type TaskState, type TaskStates, type WorkQueue } from './store.js';

export interface NatsEngineOptions {
  /** `nats://host:port` each (a cluster's servers), without credentials. */
  servers: string[];
  /** How it logs in (natsAccess.ts); without: as NATS lets anyone. */
  auth?: NatsAuth;
  /** Copies of each stream and bucket (3 on a 3-node cluster). */
  replicas?: number;
  /** How long a taken task is held without its lease renewed before another replica gets it. */
  leaseMs?: number;
  /**
   * How long NATS is waited for while it is away (an append retried, the tasks running here kept
   * going) before they fail (`--nats-wait`).
   */
  patienceMs?: number;
  /** How this connection is named in NATS (its monitoring, its logs). */
  name?: string;
  /** The replica's name, held while it runs: one running replica of a name (natsPresence.ts). */
  replica?: string;
  /** How long JetStream may take to be ready (a cluster electing its leader). */
  readyMs?: number;
  /** Where what goes wrong on the way is said (the tasks' feed starting again). */
  logger?: Logger;
  /** What may wait here for NATS, all tasks together (natsLog.ts: 256 MB). */
  maxWaitingBytes?: number;
}

/** How long a pull from the work queue waits for a task. */
const PULL_MS = 2_000;
const LEASE_MS = 10_000;
const PATIENCE_MS = 120_000;
/** How long, once the coordinator stops, what fails is tried again (its tasks' last records). */
const STOPPING_MS = 3_000;
/** How long a stopping coordinator's connection may take to send what it has before it is closed. */
const DRAIN_MS = 3_000;

/** How long a call waits for NATS to come back (a restart, a node lost) before it fails. */
const AWAY_MS = 15_000;

class NatsStates implements TaskStates {
  constructor(
    private readonly kv: KV,
    private readonly retry: Retry,
    private readonly logger?: Logger,
  ) {}

  async put(taskId: string, state: TaskState): Promise<void> {
    checkTaskId(taskId);
    await this.retry(() => this.kv.put(taskId, encode(state)), AWAY_MS, true);
  }

  async get(taskId: string): Promise<TaskState | undefined> {
    checkTaskId(taskId);
    const entry = await this.retry(() => this.kv.get(taskId), AWAY_MS);
    return entry && entry.operation === 'PUT' ? readState(entry.value, taskId) : undefined;
  }

  async update(taskId: string, change: (state: TaskState) => TaskState | undefined): Promise<TaskState | undefined> {
    checkTaskId(taskId);
    for (;;) {
      const entry = await this.retry(() => this.kv.get(taskId), AWAY_MS);
      if (!entry || entry.operation !== 'PUT') return undefined;
      const state = readState(entry.value, taskId);
      const changed = change(state);
      if (!changed) return state;
      // Another coordinator changed it between: read it again. NATS away: the same write, again.
      const written = await this.retry(
        () => this.kv.update(taskId, encode(changed), entry.revision).then(
          () => true,
          (error: Error) => (/wrong last sequence|revision/i.test(error.message) ? false : Promise.reject(error)),
        ),
        AWAY_MS,
        true,
      );
      if (written) return changed;
    }
  }

  /** The unreadable states said in the log already. */
  private said = new Set<string>();

  /**
   * One ordered read of the bucket, which keeps one value per task (history 1) — not a request per
   * task (ListTasks and every metrics scrape took seconds at 10,000 tasks).
   */
  list(): Promise<Map<string, TaskState>> {
    return this.retry(async () => {
      const states = new Map<string, TaskState>();
      const unreadable = new Map<string, string>();
      for await (const entry of await this.kv.history()) {
        states.delete(entry.key);
        unreadable.delete(entry.key);
        if (entry.operation !== 'PUT') continue;
        try {
          states.set(entry.key, readState(entry.value, entry.key));
        } catch (error) {
          if (!(error instanceof Unreadable)) throw error;
          unreadable.set(entry.key, error.message);
        }
      }
      // Left out of the listing, said once a key (every scrape lists them).
      for (const [key, message] of unreadable) if (!this.said.has(key)) this.logger?.warn(`${message}: left out of the listing`);
      this.said = new Set(unreadable.keys());
      return states;
    }, AWAY_MS);
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
    private readonly logger?: Logger,
  ) {}

  async enqueue(taskId: string): Promise<number> {
    checkTaskId(taskId);
    // Once: a task queued twice would run twice.
    return (await this.retry(() => this.js.publish('buckley.work', encode({ taskId }), { timeout: 5_000, msgID: `work-${taskId}` }), AWAY_MS, true)).seq;
  }

  async ahead(ticket: number): Promise<number> {
    const info = await this.retry(() => this.jsm.consumers.info(WORK, WORKERS), AWAY_MS);
    // Delivered in order: what is queued before the ticket and not yet handed out.
    return Math.max(0, Math.min(info.num_pending, ticket - info.delivered.stream_seq - 1));
  }

  async depth(): Promise<number> {
    return (await this.lag()).pending;
  }

  async lag(): Promise<{ pending: number; unacknowledged: number }> {
    const info = await this.retry(() => this.jsm.consumers.info(WORK, WORKERS), AWAY_MS);
    return { pending: info.num_pending, unacknowledged: info.num_ack_pending };
  }

  work(concurrency: number, handle: (job: Job) => Promise<'let go' | void>): { stop(): Promise<void> } {
    let stopped = false;
    let running = 0;
    let freed: (() => void) | undefined;
    // A pull waits for NATS as long as it is away: stopping does not wait for it.
    let stop: () => void = () => undefined;
    const stoppedNow = new Promise<null>((resolve) => (stop = () => resolve(null)));
    const loop = (async () => {
      const consumer = await this.js.consumers.get(WORK, WORKERS);
      while (!stopped) {
        if (running >= concurrency) {
          await new Promise<void>((resolve) => (freed = resolve));
          continue;
        }
        let message: JsMsg | null;
        try {
          const pulled = consumer.next({ expires: PULL_MS });
          // A pull asked just before NATS went is never answered: it is given up past its expiry.
          let overdue: NodeJS.Timeout | undefined;
          const givenUp = new Promise<null>((resolve) => (overdue = setTimeout(() => resolve(null), PULL_MS + 1_000)));
          const first = await Promise.race([pulled.then((taken) => ({ taken })), stoppedNow, givenUp]);
          clearTimeout(overdue);
          // Stopped or given up first: a task it brings after all goes back to the queue.
          if (!first) void pulled.then((late) => late?.nak(), () => undefined);
          message = first?.taken ?? null;
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
        let counted = true;
        const uncount = () => {
          if (!counted) return;
          counted = false;
          running--;
          freed?.();
        };
        void this.run(message, handle, uncount).finally(uncount);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        stop();
        freed?.();
        await loop.catch(() => undefined);
      },
    };
  }

  /** Runs a job, its lease renewed meanwhile; acknowledged once done (a failure is the task's to record). */
  private async run(message: JsMsg, handle: (job: Job) => Promise<'let go' | void>, idle: () => void): Promise<void> {
    let taskId: string;
    try {
      taskId = readJob(message.data).taskId;
    } catch (error) {
      // Not a job buckley-lsp queued: no task to run, and no other replica can make one of it.
      this.logger?.warn(`${(error as Error).message}: dropped`);
      return message.ack();
    }
    const renew = setInterval(() => message.working(), Math.max(500, this.leaseMs / 3));
    let outcome: 'let go' | void = undefined;
    try {
      outcome = await handle({ taskId, redelivered: message.info.redelivered, idle });
    } finally {
      clearInterval(renew);
      // Let go: its lease ran out, and the coordinator it went to next must not find it done.
      if (outcome !== 'let go') message.ack();
    }
  }
}

const READY_MS = 30_000;


/**
 * When asking again must end: `stopBy` (ms since the epoch; Infinity until the coordinator
 * stops); whether NATS is away (its connection down, or JetStream not answering); a word when the
 * coordinator stops while it is; and what became of each request (JetStream stalled, or not).
 */
interface Limits {
  /** The servers, for words. */
  where: string;
  stopBy(): number;
  away(): boolean;
  /** The connection is down: a request would only wait for its timeout. */
  disconnected(): boolean;
  failed(error: Error): void;
  answered(): void;
  /** Calls `listener` when the coordinator stops while NATS is away; the function forgets it. */
  onInterrupt(listener: () => void): () => void;
}

const NO_LIMITS: Limits = { where: 'NATS', stopBy: () => Infinity, away: () => false, disconnected: () => false, failed: () => undefined, answered: () => undefined, onInterrupt: () => () => undefined };
/** A request JetStream did not answer (not one it answered with an error). */
const UNANSWERED = /timeout|no responders|503|not enabled|no suitable peers|disconnect|connection closed/i;
const STOPPED = 'the coordinator is stopping: NATS is no longer asked';
/** JetStream's answers that its store is full (its files, an account's limits): asking again for minutes does not make room. */
const FULL = /insufficient (storage )?resources|maximum (bytes|messages) exceeded|resource limits exceeded/i;
/** NATS's answers (or their causes) that asking again does not change: a message too big, a subject this replica's user may not use. */
const CANNOT_MEND = new Set(['InvalidArgumentError', 'PermissionViolationError', 'SetUpError']);
/**
 * How long a replica starting waits for JetStream to answer at all. A server without JetStream has
 * nobody on its API (a cluster electing its leader answers "temporarily unavailable" instead, and is
 * waited for READY_MS): a few seconds tell, not half a minute.
 */
const NO_JETSTREAM_MS = 3_000;

/** What a replica starting found that waiting does not change. */
class SetUpError extends Error {
  override name = 'SetUpError';
}

/** `work`, or the coordinator's stop while NATS is away (its listener forgotten either way: none piles up). */
function interruptible<T>(work: Promise<T>, limits: Limits): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const forget = limits.onInterrupt(() => reject(new Error(STOPPED)));
    work.then(
      (value) => {
        forget();
        resolve(value);
      },
      (error: unknown) => {
        forget();
        reject(error);
      },
    );
  });
}

async function untilReady<T>(work: () => Promise<T>, withinMs: number, limits: Limits = NO_LIMITS, writes = false): Promise<T> {
  const until = Date.now() + withinMs;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    // Stopping: what NATS, away, would only time out is not asked at all.
    if (Date.now() >= limits.stopBy() || (limits.stopBy() < Infinity && limits.away())) throw new Error(STOPPED);
    // Down: asked again within a second of its connection being back, not after a request's
    // timeout; looked at less often the longer it is away (a thousand tasks waiting cost little).
    if (limits.disconnected()) {
      if (Date.now() + wait > until) throw new Error(`${limits.where} could not be reached for ${withinMs / 1000} s`);
      await interruptible(new Promise((resolve) => setTimeout(resolve, wait)), limits);
      continue;
    }
    try {
      // Under way when NATS went: a stopping coordinator does not wait for its timeout.
      const result = await interruptible(work(), limits);
      if (writes) limits.answered();
      return result;
    } catch (error) {
      if (writes && UNANSWERED.test(`${(error as Error).name} ${(error as Error).message}`)) limits.failed(error as Error);
      if (Date.now() >= limits.stopBy()) throw new Error(STOPPED);
      // What asking again cannot mend (a message too big, an argument NATS refuses, what is read
      // not in buckley-lsp's form) is said at once.
      // (A task's end waits for room: without it, its watchers would wait forever.)
      if (FULL.test((error as Error).message) && Number.isFinite(withinMs)) throw new Error(`the team's store (${limits.where}) is full (${(error as Error).message}): make room on the NATS servers (JetStream's max_file_store, the account's limits)`);
      if (CANNOT_MEND.has((error as Error).name) || CANNOT_MEND.has(((error as Error).cause as Error | undefined)?.name ?? '') || error instanceof Unreadable || error instanceof SyntaxError || wrongLast(error) !== undefined) throw error;
      if (Date.now() + wait > until) throw new Error(`JetStream (${limits.where}) did not answer within ${withinMs / 1000} s: ${(error as Error).message}`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The connection to the team's NATS servers, or why there is none in words: which servers, and what to do. */
async function connectTo(options: NatsEngineOptions): Promise<NatsConnection> {
  const where = `NATS at ${options.servers.join(', ')}`;
  const { credsFile, ...login } = options.auth ?? {};
  const connection: NodeConnectionOptions = { servers: options.servers, name: options.name ?? 'buckley-lsp coordinator', reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 10_000, ...login };
  try {
    if (credsFile) connection.authenticator = credsAuthenticator(readFileBounded(credsFile, PEM_MAX_BYTES));
    return await connect(connection);
  } catch (error) {
    const said = (error as Error).message;
    if ((error as Error).name === 'AuthorizationError' || /authoriz|authentic|user|creds|nkey|jwt/i.test(said)) {
      const given = credsFile || login.user || login.token;
      throw new Error(`${where} ${given ? 'did not accept' : 'asks for'} this replica's credentials (${said}): ${given ? 'check' : 'give'} them — nats://USER:PASSWORD@host:port in --nats, NATS_USER and NATS_PASSWORD, NATS_TOKEN, or --nats-creds FILE`);
    }
    if (/certificate|self.signed|verify/i.test(said)) throw new Error(`${where}: ${said} — its certificate is not one this replica trusts: give the CA that signed it with NATS_CA (a PEM file)`);
    if (/tls|ssl/i.test(said)) throw new Error(`${where}: ${said} — a tls:// URL, NATS_CA, NATS_CERT and NATS_KEY must match how the server is set up`);
    throw new Error(`could not connect to ${where}: ${said} — is nats-server running there, with JetStream (nats-server --jetstream)?`);
  }
}

/** Why JetStream could not be set up for the team, in words a NATS operator acts on. */
function notReady(error: Error, servers: string[]): Error {
  const where = `NATS at ${servers.join(', ')}`;
  if (error.name === 'PermissionViolationError' || /permissions violation/i.test(error.message)) {
    return new Error(`${where} does not let this replica's user do what a replica does (${error.message}): allow it to publish and subscribe on buckley.>, $JS.API.>, $JS.ACK.>, $KV.buckley_tasks.>, $KV.buckley_replicas.>, $O.buckley_blobs.> and _INBOX.>`);
  }
  if (/jetstream is not enabled/i.test(error.message)) return new Error(`JetStream is not enabled on ${where}: start nats-server with --jetstream (or jetstream {} in its configuration)`);
  return error;
}

/** Connects to the NATS servers and makes what is not there yet. */
export async function natsEngine(options: NatsEngineOptions): Promise<TaskEngine> {
  const nc = await connectTo(options);
  try {
    const replicas = options.replicas ?? 1;
    const leaseMs = options.leaseMs ?? LEASE_MS;
    // A cluster just started elects its JetStream leader first: its replicas may come up before.
    let unanswered: number | undefined;
    const { jsm, kv, blobs, names, next } = await untilReady(async () => {
      try {
        const manager = await jetstreamManager(nc);
        const made = { jsm: manager, ...(await provision(nc, manager, replicas, leaseMs, options.logger)) };
        return { ...made, next: (await manager.streams.info(TASKS)).state.last_seq + 1 };
      } catch (error) {
        if ((error as Error).name !== 'JetStreamNotEnabled') throw error;
        unanswered ??= Date.now();
        throw Date.now() - unanswered >= NO_JETSTREAM_MS ? new SetUpError((error as Error).message) : error;
      }
    }, options.readyMs ?? READY_MS, { ...NO_LIMITS, where: `NATS at ${options.servers.join(', ')}` }).catch((error: unknown) => Promise.reject(notReady(error as Error, options.servers)));
    const presence = options.replica === undefined ? undefined : await holdName(names, options.replica, options.logger).catch((error: unknown) => Promise.reject(notReady(error as Error, options.servers)));
    const js = jetstream(nc);
    const patienceMs = options.patienceMs ?? PATIENCE_MS;
    const health = natsHealth(nc, options.servers, patienceMs);
    let stopBy = Infinity;
    const interrupts = new Set<() => void>();
    let interruptedNow = false;
    const interrupt = () => {
      interruptedNow = true;
      for (const listener of [...interrupts]) listener();
    };
    const away = () => health.awaySince() !== undefined;
    const onInterrupt = (listener: () => void) => {
      if (interruptedNow) listener();
      interrupts.add(listener);
      return () => interrupts.delete(listener);
    };
    const limits: Limits = { where: health.where, stopBy: () => (nc.isClosed() ? 0 : stopBy), away, disconnected: health.disconnected, failed: health.failed, answered: health.answered, onInterrupt };
    const retry: Retry = (work, withinMs, writes) => untilReady(work, withinMs, limits, writes);
    const feed = new TaskFeed(js, TASKS, subjectOf(''), retry, (error) => options.logger?.warn(`the tasks' feed from NATS stopped, and starts again: ${error.message}`), next);
    health.watch((change) => change === 'back' && feed.restart());
    const stopping = () => {
      stopBy = Math.min(stopBy, Date.now() + STOPPING_MS);
      if (away()) interrupt();
      else health.watch((change) => change === 'away' && interrupt());
    };
    return {
      name: 'nats',
      log: new NatsLog(js, jsm, patienceMs, retry, blobs, feed, options.maxWaitingBytes, options.logger),
      states: new NatsStates(kv, retry, options.logger),
      queue: new NatsQueue(js, jsm, leaseMs, retry, () => limits.stopBy() === 0 || stopBy < Infinity, options.logger),
      health,
      stopping,
      close: async () => {
        stopping();
        stopBy = 0;
        interrupt();
        health.close();
        await feed.close();
        await presence?.release();
        // What it still has to send goes, unless NATS is away: then it is closed at once.
        const drained = nc.drain().catch(() => undefined);
        await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, health.awaySince() === undefined ? DRAIN_MS : 0).unref())]);
        await nc.close().catch(() => undefined);
      },
    };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
