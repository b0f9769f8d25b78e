/**
 * Tasks as event streams (the design's event store, pub/sub and work queue): every task is an
 * append-only stream of records — created, queued, started, what its callers see (progress, the
 * answer in pieces, tool calls, approvals asked), their replies (an approval decided, a file, a
 * question answered, a cancel), and its one final state — each with a sequence number, replayed
 * from any sequence and followed live by any number of watchers. Queued tasks wait in a work
 * queue that each coordinator takes from at its own pace.
 *
 * One contract, two engines (test/integration/taskEngines.test.ts runs it against both): in
 * memory (memory.ts: the embedded coordinator, a standalone one without NATS) and NATS JetStream
 * (nats.ts: a team's replicas, loaded only with `--nats`).
 */
import type { TaskSpec } from './spec.js';

/** One record of a task's stream. */
export interface TaskRecord {
  /** What it is, and who asked (their certificate's name, or their agent id on loopback): only they answer its requests. */
  created?: { owner: string; spec: TaskSpec };
  /** Waiting in the work queue. */
  queued?: { ticket: number };
  /**
   * A coordinator took it, and runs it; again once its agent's session is known: which agent
   * (its description), the ACP session, and whether the agent can load it again elsewhere.
   */
  started?: { replica: string; agent?: string; agentSession?: string; resumable?: boolean };
  /** What its callers see: the fields of a wire TaskEvent (but its task id, timestamp and sequence). */
  event?: Record<string, unknown>;
  /**
   * A stream of its caller's (by an id of its own) began or ended: a task none of whose caller's
   * streams is open for long is cancelled (a detached task's caller may come back, runner.ts).
   */
  caller?: { attached: string } | { detached: string };
  /** A caller's reply to a request of the turn (by its id), or `cancel`. */
  reply?: { id: string; by: string; answer: unknown };
  /** Its one final state: no record follows it. */
  final?: 'completed' | 'failed' | 'cancelled';
}

export interface StoredRecord extends TaskRecord {
  taskId: string;
  /** Increasing along the task's stream (not necessarily by one). */
  seq: number;
  /** When it was appended, ms since the epoch. */
  at: number;
}

/** What is known of a task at a glance (a snapshot of its stream: status, listings, recovery). */
export interface TaskState {
  owner: string;
  status: 'queued' | 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';
  /** A few words of what was asked. */
  title: string;
  /** The coordinator running it. */
  replica?: string;
  /** The sequence number of its stream's first record (followed whole from there). */
  seq: number;
  updatedAt: number;
  /** The ids of its requests waiting for the caller's reply (approvals, files, writes, questions). */
  pending?: string[];
}

export interface TaskLog {
  /** Appends a record to the task's stream: its sequence number. */
  append(taskId: string, record: TaskRecord): Promise<number>;
  /**
   * The task's records from `fromSeq` on (those stored, then those appended as they come), until
   * `signal` aborts or the consumer stops iterating.
   */
  follow(taskId: string, fromSeq: number, signal: AbortSignal): AsyncIterable<StoredRecord>;
  /** The records stored now, from `fromSeq` on. */
  read(taskId: string, fromSeq?: number): Promise<StoredRecord[]>;
}

export interface TaskStates {
  put(taskId: string, state: TaskState): Promise<void>;
  get(taskId: string): Promise<TaskState | undefined>;
  /**
   * Changes a task's state as `change` says, atomically: no other change comes between its read
   * and its write (any coordinator's). `change` returns undefined to leave it as it is. The state
   * as it is now (undefined for no task).
   */
  update(taskId: string, change: (state: TaskState) => TaskState | undefined): Promise<TaskState | undefined>;
  /** Every task known, with its state. */
  list(): Promise<Map<string, TaskState>>;
}

/** A task taken from the queue: done once `handle` settles; another coordinator gets it again if this one dies first. */
export interface Job {
  taskId: string;
  /** It was handed out before, to a coordinator that did not finish it. */
  redelivered: boolean;
}

export interface WorkQueue {
  /** Queues a task: its ticket, for `ahead`. */
  enqueue(taskId: string): Promise<number>;
  /** How many queued tasks will be taken before the one with `ticket` (0 once it is taken). */
  ahead(ticket: number): Promise<number>;
  /** Queued tasks not yet taken. */
  depth(): Promise<number>;
  /** Its consumers' lag: tasks not yet handed out, and handed out but not yet done (every coordinator's). */
  lag(): Promise<{ pending: number; unacknowledged: number }>;
  /** Takes tasks, at most `concurrency` running at once, until stopped. */
  work(concurrency: number, handle: (job: Job) => Promise<void>): { stop(): Promise<void> };
}

/**
 * Whether a store kept elsewhere (NATS) can be reached: what it keeps waits while it is away, up
 * to `patienceMs`; past that, the tasks running here fail and their callers here are told (a
 * store in memory never goes away: it has none).
 */
export interface StoreHealth {
  /** The store, for words: "NATS at nats://127.0.0.1:4222". */
  readonly where: string;
  /** How long it is waited for. */
  readonly patienceMs: number;
  /** Since when it has been away (ms since the epoch), or undefined while it is there. */
  awaySince(): number | undefined;
  /** Called when it goes away, when it comes back, and once it has been away for `patienceMs` ('lost'); the function stops it. */
  watch(listener: (change: 'away' | 'back' | 'lost') => void): () => void;
}

/** One engine: the tasks' streams, their states and the work queue. */
export interface TaskEngine {
  readonly name: 'memory' | 'nats';
  readonly log: TaskLog;
  readonly states: TaskStates;
  readonly queue: WorkQueue;
  readonly health?: StoreHealth;
  /** From now on, what fails is tried again only briefly: this coordinator stops (its tasks' last records, then close). */
  stopping(): void;
  close(): Promise<void>;
}
