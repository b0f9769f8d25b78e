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
  /** Its one final state: no record of a run follows it. */
  final?: 'completed' | 'failed' | 'cancelled';
  /**
   * The run (a coordinator's taking of the task, hold.ts) whose record it is: its `started`, its
   * events, its final state. Stored only while that run holds the task (`admits`).
   */
  run?: string;
}

const KINDS = ['created', 'queued', 'started', 'event', 'caller', 'reply'] as const;

/** What a record is, by what it holds (not by the order of its fields: a run's records carry `run` too); a task's last event is its final record. */
export function kindOf(record: TaskRecord): 'final' | (typeof KINDS)[number] | 'unknown' {
  if (record.final) return 'final';
  return KINDS.find((kind) => record[kind] !== undefined) ?? 'unknown';
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
  /** The run holding it (hold.ts). */
  run?: string;
  /** The ids of its requests waiting for the caller's reply (approvals, files, writes, questions). */
  pending?: string[];
}

/** Where a task's stream stands for the records of its runs. */
export interface RunFence {
  /** The run of its latest `started` record. */
  run?: string;
  /** It holds a final record. */
  ended: boolean;
}

export const OPEN_FENCE: RunFence = { ended: false };

/**
 * Whether a task's stream, standing at `fence`, takes `record`, and where it stands after it. A
 * run's record is taken while that run holds the task: the stream holds no final record, and its
 * latest `started` record is that run's — or the record is such a `started` (the run begins).
 * What others write (the caller's replies, its coming and going) is always taken.
 */
export function admits(fence: RunFence, record: TaskRecord): { admitted: boolean; next: RunFence } {
  if (record.run === undefined) return { admitted: true, next: record.final ? { ...fence, ended: true } : fence };
  if (fence.ended) return { admitted: false, next: fence };
  if (record.started) return { admitted: true, next: { run: record.run, ended: record.final !== undefined } };
  if (record.run !== fence.run) return { admitted: false, next: fence };
  return { admitted: true, next: record.final ? { ...fence, ended: true } : fence };
}

/** Why a run's record was not stored: another run holds the task (it was taken up elsewhere), or it ended. */
export class Superseded extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} was taken up by another coordinator, or ended, while this one could not record it`);
  }
}

/**
 * What the store holds is not in the form this coordinator writes (another program wrote it, or
 * it is damaged: natsRead.ts): asking again does not mend it.
 */
export class Unreadable extends Error {
  override name = 'Unreadable';
}

export interface TaskLog {
  /**
   * Appends a record to the task's stream: its sequence number. A run's record the stream does
   * not take where it stands (`admits`) is refused with Superseded, decided with what every
   * coordinator wrote before it.
   */
  append(taskId: string, record: TaskRecord): Promise<number>;
  /**
   * The task's records from `fromSeq` on (those stored, then those appended as they come), until
   * `signal` aborts or the consumer stops iterating.
   */
  follow(taskId: string, fromSeq: number, signal: AbortSignal): AsyncIterable<StoredRecord>;
  /** The records stored now, from `fromSeq` on. */
  read(taskId: string, fromSeq?: number): Promise<StoredRecord[]>;
  /** The task's last record stored now (undefined: none, or none readable). */
  last(taskId: string): Promise<StoredRecord | undefined>;
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
  /**
   * It only waits (on another coordinator's run of the task): it no longer counts among the jobs
   * running here, so it keeps no other task waiting.
   */
  idle?: () => void;
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
  /**
   * Takes tasks, at most `concurrency` running at once, until stopped. A job is done when `handle`
   * settles — unless it says 'let go': another coordinator was handed it meanwhile, and it is theirs.
   */
  work(concurrency: number, handle: (job: Job) => Promise<'let go' | void>): { stop(): Promise<void> };
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
