/**
 * The tasks' streams on NATS JetStream (nats.ts): one subject a task in BUCKLEY_TASKS. A task's
 * records are appended in order; those appended while one message is being stored go together in
 * the next (one NATS round trip for many records: thousands a second a task, in order, a retried
 * message stored once by its id). A message too big for NATS (1 MB by default: a changed file
 * before and after, a long context) is kept in the object store, its name in the stream.
 *
 * A record's sequence is its message's stream sequence × SPAN plus its place in the message:
 * increasing along the task, and a reader goes on from any of them.
 */
import { randomBytes } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { ObjectStore } from '@nats-io/obj';
import { storedMessages, type RawMessage, type TaskFeed } from './natsFeed.js';
import { readBody, readRecords, type Body, type Dated } from './natsRead.js';
import type { Logger } from '../../logger.js';
import { admits, OPEN_FENCE, Superseded, Unreadable, type RunFence, type StoredRecord, type TaskLog, type TaskRecord } from './store.js';

export const TASKS = 'BUCKLEY_TASKS';
export const subjectOf = (taskId: string) => `buckley.tasks.${taskId}`;
/** Records a message holds at most; a record's sequence is its message's × SPAN + its place. */
const SPAN = 1000;
/** Messages bigger than this go to the object store (well under NATS's 1 MB limit). */
const INLINE_BYTES = 256 * 1024;
/** What may wait here for NATS (away, or slow), all tasks together: past it, an append fails at once. */
const MAX_WAITING_BYTES = 256 * 1024 * 1024;

export const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/**
 * Does `work`, again while NATS is away (a restart, a node lost, a cluster electing its leader),
 * within `withinMs`. `writes`: it stores something — whether such requests are answered says
 * whether JetStream works (a cluster without its quorum still answers reads from a copy).
 */
export type Retry = <T>(work: () => Promise<T>, withinMs: number, writes?: boolean) => Promise<T>;

/** Task ids become subjects: only what a subject token may hold. */
export function checkTaskId(taskId: string): void {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(taskId)) throw new Error(`a task id is letters, digits, _ and - (at most 128): ${JSON.stringify(taskId).slice(0, 80)}`);
}

/** Where a task's stream stands, and the sequence of its last message known here. */
type KnownFence = RunFence & { lastSeq: number };

/** The subject's last sequence NATS said it has, where a conditional publish was refused for it. */
export function wrongLast(error: unknown): number | undefined {
  if (!(error instanceof JetStreamApiError) || error.code !== JetStreamApiCodes.StreamWrongLastSequence) return undefined;
  return Number(/wrong last sequence: (\d+)/.exec(error.message)?.[1] ?? 0);
}

interface Waiting {
  /** The record as JSON, measured once. */
  json: string;
  /** What the task's stream weighs of it before it takes it (`admits`). */
  gate: Pick<TaskRecord, 'run' | 'started' | 'final'>;
  resolve(seq: number): void;
  reject(error: unknown): void;
}

export class NatsLog implements TaskLog {
  /** Each task's records waiting for the next message. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** The tasks whose message is being stored. */
  private readonly sending = new Set<string>();
  private readonly origin = randomBytes(6).toString('hex');
  private sent = 0;
  /** The bytes of the records waiting in `waiting` and being stored. */
  private waitingBytes = 0;
  /** Where the streams of the tasks whose runs write here stand, as far as this coordinator knows. */
  private readonly fences = new Map<string, KnownFence>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly deadlineMs: number,
    private readonly retry: Retry,
    private readonly blobs: ObjectStore,
    /** Every task's new messages, for the followers (natsFeed.ts). */
    private readonly feed: TaskFeed,
    private readonly maxWaitingBytes = MAX_WAITING_BYTES,
    private readonly logger?: Logger,
  ) {}

  append(taskId: string, record: TaskRecord): Promise<number> {
    checkTaskId(taskId);
    const json = JSON.stringify({ ...record, at: Date.now() });
    // A task's end is never refused: it is what its watchers wait for.
    if (!record.final && this.waitingBytes + json.length > this.maxWaitingBytes) {
      return Promise.reject(new Error(`${Math.round(this.waitingBytes / 2 ** 20)} MB of the tasks' records wait for NATS already (at most ${Math.round(this.maxWaitingBytes / 2 ** 20)} MB)`));
    }
    this.waitingBytes += json.length;
    return new Promise<number>((resolve, reject) => {
      const queue = this.waiting.get(taskId) ?? [];
      const gate = { run: record.run, final: record.final, ...(record.started ? { started: { replica: record.started.replica } } : {}) };
      queue.push({ json, gate, resolve, reject });
      this.waiting.set(taskId, queue);
      if (!this.sending.has(taskId)) void this.send(taskId);
    });
  }

  /** Stores the task's waiting records, a message at a time, until none wait. */
  private async send(taskId: string): Promise<void> {
    this.sending.add(taskId);
    try {
      for (let queue = this.waiting.get(taskId); queue?.length; queue = this.waiting.get(taskId)) {
        const batch = nextBatch(queue);
        if (!queue.length) this.waiting.delete(taskId);
        // A task's final record waits for NATS as long as this coordinator runs: without it, its watchers would wait forever.
        const withinMs = batch.some((waiting) => waiting.gate.final) ? Infinity : this.deadlineMs;
        try {
          // A run's records, and what follows them from here, are stored only where the stream takes them.
          if (this.fences.has(taskId) || batch.some((waiting) => waiting.gate.run !== undefined)) await this.sendFenced(taskId, batch, withinMs);
          else this.stored(taskId, batch, await this.publish(taskId, batch, withinMs));
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        } finally {
          this.waitingBytes -= batch.reduce((bytes, waiting) => bytes + waiting.json.length, 0);
        }
      }
    } finally {
      this.sending.delete(taskId);
    }
  }

  private stored(taskId: string, batch: Waiting[], seq: number): void {
    this.feed.stored(taskId, seq);
    batch.forEach((waiting, i) => waiting.resolve(seq * SPAN + i));
  }

  /**
   * Stores what of the batch the task's stream takes where it stands (`admits`), on condition
   * that nothing was stored on it since what this coordinator knows of it (NATS checks: the
   * subject's last sequence). Where something was, it is read, and the batch weighed again.
   */
  private async sendFenced(taskId: string, batch: Waiting[], withinMs: number): Promise<void> {
    let fence = this.fences.get(taskId) ?? (await this.catchUp(taskId, { ...OPEN_FENCE, lastSeq: 0 }, 0, withinMs)).fence;
    for (;;) {
      let after: RunFence = fence;
      const kept: Waiting[] = [];
      for (const waiting of batch) {
        const weighed = admits(after, waiting.gate);
        after = weighed.next;
        if (weighed.admitted) kept.push(waiting);
        else waiting.reject(new Superseded(taskId));
      }
      if (!kept.length) return this.keep(taskId, fence);
      const msgID = `${this.origin}-${++this.sent}`;
      try {
        const seq = await this.publish(taskId, kept, withinMs, msgID, fence.lastSeq);
        this.keep(taskId, { ...after, lastSeq: seq });
        return this.stored(taskId, kept, seq);
      } catch (error) {
        const last = wrongLast(error);
        if (last === undefined) throw error;
        const caught = await this.catchUp(taskId, fence, last, withinMs, msgID);
        fence = caught.fence;
        // Stored after all (its answer was lost, and the message sent again).
        if (caught.ours !== undefined) return (this.keep(taskId, fence), this.stored(taskId, kept, caught.ours));
        batch = kept;
      }
    }
  }

  /** Remembers where the task's stream stands, while a run of it may still write here. */
  private keep(taskId: string, fence: KnownFence): void {
    if (fence.ended) this.fences.delete(taskId);
    else this.fences.set(taskId, fence);
  }

  /** Where the task's stream stands after what was stored on it since `fence` (at least up to `atLeast`); the message `msgID`'s sequence, if among them. */
  private async catchUp(taskId: string, fence: KnownFence, atLeast: number, withinMs: number, msgID?: string): Promise<{ fence: KnownFence; ours?: number }> {
    let next = fence;
    let ours: number | undefined;
    for await (const message of storedMessages(this.jsm, TASKS, subjectOf(taskId), fence.lastSeq + 1, this.retry, withinMs, atLeast)) {
      for (const record of await this.recordsOf(taskId, message)) next = { ...admits(next, record).next, lastSeq: next.lastSeq };
      next = { ...next, lastSeq: message.seq };
      if (msgID && message.id === msgID) ours = message.seq;
    }
    return { fence: next, ...(ours !== undefined ? { ours } : {}) };
  }

  /**
   * Publishes the batch as one message, again while NATS is away (its id stores it once), for
   * `withinMs` at most: its stream sequence. With `lastSeq`, only where the subject's last message
   * is that one (else wrongLast says which is).
   */
  private async publish(taskId: string, batch: Waiting[], withinMs: number, msgID = `${this.origin}-${++this.sent}`, lastSeq?: number): Promise<number> {
    let data = new TextEncoder().encode(`[${batch.map((waiting) => waiting.json).join(',')}]`);
    try {
      if (data.length > INLINE_BYTES) {
        // Named by the message's id: a put tried again replaces the same blob.
        const whole = data;
        await this.retry(() => this.blobs.putBlob({ name: msgID }, whole), withinMs, true);
        data = encode({ blob: msgID } satisfies Body);
      }
      const body = data;
      const expect = lastSeq === undefined ? {} : { expect: { lastSubjectSequence: lastSeq } };
      return (await this.retry(() => this.js.publish(subjectOf(taskId), body, { msgID, timeout: 5_000, ...expect }), withinMs, true)).seq;
    } catch (error) {
      if (wrongLast(error) !== undefined) throw error;
      throw new Error(`the task's record could not be stored: ${(error as Error).message}`);
    }
  }

  /** Every record stored now, from `fromSeq`: all of them, or an error — never some. */
  async read(taskId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkTaskId(taskId);
    const records: StoredRecord[] = [];
    // What this coordinator stored, or saw stored, is in the read, whichever replica answers it.
    for await (const message of storedMessages(this.jsm, TASKS, subjectOf(taskId), Math.floor(fromSeq / SPAN), this.retry, this.deadlineMs, this.feed.seen(taskId))) {
      records.push(...(await this.recordsOf(taskId, message)).filter((record) => record.seq >= fromSeq));
    }
    return records;
  }

  /** The last record of the task's last message (a replica a little behind may say an earlier one). */
  async last(taskId: string): Promise<StoredRecord | undefined> {
    checkTaskId(taskId);
    const message = await this.retry(() => this.jsm.direct.getMessage(TASKS, { last_by_subj: subjectOf(taskId) }), this.deadlineMs);
    if (!message) return undefined;
    return (await this.recordsOf(taskId, { seq: message.seq, data: message.data })).at(-1);
  }

  /** What is stored from `fromSeq`, then what comes, from the feed: listened to first, so nothing falls between. */
  async *follow(taskId: string, fromSeq: number, signal: AbortSignal): AsyncIterable<StoredRecord> {
    checkTaskId(taskId);
    if (signal.aborted) return;
    const listener = this.feed.listen(taskId);
    try {
      let next = Math.floor(fromSeq / SPAN);
      // What the feed delivered before this listened must come from the read: it reads up to that at least.
      for await (const message of storedMessages(this.jsm, TASKS, subjectOf(taskId), next, this.retry, this.deadlineMs, this.feed.seen(taskId))) {
        for (const record of await this.recordsOf(taskId, message)) if (record.seq >= fromSeq) yield record;
        next = message.seq + 1;
        if (signal.aborted) return;
      }
      for (let message = await listener.next(signal); message; message = await listener.next(signal)) {
        // Stored before the read above ended: given already.
        if (message.seq < next) continue;
        for (const record of await this.recordsOf(taskId, message)) if (record.seq >= fromSeq) yield record;
        next = message.seq + 1;
      }
    } finally {
      listener.close();
    }
  }

  /**
   * A message's records; none where it holds none buckley-lsp can read (written by another
   * program, or its blob gone): said in the log, and the task's stream goes on past it.
   */
  private async recordsOf(taskId: string, message: RawMessage): Promise<StoredRecord[]> {
    const where = `message ${message.seq} of task ${taskId}`;
    try {
      return (await this.bodyOf(readBody(message.data, where), where)).map((record, i) => ({ ...record, taskId, seq: message.seq * SPAN + i }));
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error;
      this.skipped(message.seq, error);
      return [];
    }
  }

  /** A message's records, its blob read where it has one. */
  private async bodyOf(body: Body, where: string): Promise<Dated[]> {
    if (Array.isArray(body)) return body;
    const bytes = await this.retry(() => this.blobs.getBlob(body.blob), this.deadlineMs);
    if (!bytes) throw new Unreadable(`the records of ${where} are missing from NATS (their blob ${body.blob} is gone)`);
    return readRecords(bytes, `the blob of ${where}`);
  }

  /** Says once (whoever reads it: every watcher, every replay) that a message was skipped. */
  private readonly said = new Set<number>();
  private skipped(seq: number, error: Unreadable): void {
    if (this.said.has(seq)) return;
    if (this.said.size >= 1000) this.said.clear();
    this.said.add(seq);
    this.logger?.warn(`${error.message}: skipped`);
  }
}

/** The next message's records, taken from `queue`: as many as fit (the first whatever its size: a big one goes alone, as a blob). */
function nextBatch(queue: Waiting[]): Waiting[] {
  let bytes = queue[0]!.json.length;
  let count = 1;
  while (count < queue.length && count < SPAN && bytes + queue[count]!.json.length + 1 <= INLINE_BYTES) bytes += queue[count++]!.json.length + 1;
  return queue.splice(0, count);
}
