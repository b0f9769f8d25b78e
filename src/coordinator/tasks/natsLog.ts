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
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { ObjectStore } from '@nats-io/obj';
import type { StoredRecord, TaskLog, TaskRecord } from './store.js';

export const TASKS = 'BUCKLEY_TASKS';
export const subjectOf = (taskId: string) => `buckley.tasks.${taskId}`;
/** Records a message holds at most; a record's sequence is its message's × SPAN + its place. */
const SPAN = 1000;
/** Messages bigger than this go to the object store (well under NATS's 1 MB limit). */
const INLINE_BYTES = 256 * 1024;
/** How long one pass of a read waits for a task's messages (a stalled consumer is made anew, up to the deadline). */
const FETCH_MS = 3_000;
/**
 * How long a follower's pull waits: a consumer whose server went away (a node lost) is noticed by
 * its missed heartbeats (every half of it) and made again on another.
 */
const PULL_EXPIRES_MS = 6_000;

export const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
export const decode = <T>(bytes: Uint8Array): T => JSON.parse(new TextDecoder().decode(bytes)) as T;

/** Does `work`, again while NATS is away (a restart, a node lost, a cluster electing its leader), within `withinMs`. */
export type Retry = <T>(work: () => Promise<T>, withinMs: number) => Promise<T>;

/** Task ids become subjects: only what a subject token may hold. */
export function checkTaskId(taskId: string): void {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(taskId)) throw new Error(`a task id is letters, digits, _ and - (at most 128): ${JSON.stringify(taskId).slice(0, 80)}`);
}

type Dated = TaskRecord & { at: number };
/** A message's body: its records, or the name of the blob that holds them. */
type Body = Dated[] | { blob: string };

interface Waiting {
  /** The record as JSON, measured once. */
  json: string;
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

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly deadlineMs: number,
    private readonly retry: Retry,
    private readonly blobs: ObjectStore,
  ) {}

  append(taskId: string, record: TaskRecord): Promise<number> {
    checkTaskId(taskId);
    return new Promise<number>((resolve, reject) => {
      const queue = this.waiting.get(taskId) ?? [];
      queue.push({ json: JSON.stringify({ ...record, at: Date.now() }), resolve, reject });
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
        try {
          const seq = await this.publish(taskId, `[${batch.map((waiting) => waiting.json).join(',')}]`);
          batch.forEach((waiting, i) => waiting.resolve(seq * SPAN + i));
        } catch (error) {
          for (const waiting of batch) waiting.reject(error);
        }
      }
    } finally {
      this.sending.delete(taskId);
    }
  }

  /** Publishes one message, again while NATS is away (its id stores it once), up to the deadline: its stream sequence. */
  private async publish(taskId: string, json: string): Promise<number> {
    const msgID = `${this.origin}-${++this.sent}`;
    let data = new TextEncoder().encode(json);
    try {
      if (data.length > INLINE_BYTES) {
        // Named by the message's id: a put tried again replaces the same blob.
        const whole = data;
        await this.retry(() => this.blobs.putBlob({ name: msgID }, whole), this.deadlineMs);
        data = encode({ blob: msgID } satisfies Body);
      }
      const body = data;
      return (await this.retry(() => this.js.publish(subjectOf(taskId), body, { msgID, timeout: 5_000 }), this.deadlineMs)).seq;
    } catch (error) {
      throw new Error(`the task's record could not be stored: ${(error as Error).message}`);
    }
  }

  /** Every record stored now, from `fromSeq`: all of them, or an error — never some. */
  async read(taskId: string, fromSeq = 1): Promise<StoredRecord[]> {
    checkTaskId(taskId);
    const last = await this.retry(async () => (await this.jsm.streams.getMessage(TASKS, { last_by_subj: subjectOf(taskId) }))?.seq, this.deadlineMs);
    const records: StoredRecord[] = [];
    const until = Date.now() + this.deadlineMs;
    for (let next = Math.floor(fromSeq / SPAN); last !== undefined && next <= last; ) {
      if (Date.now() > until) throw new Error(`the records of task ${taskId} could not be read from NATS within ${this.deadlineMs / 1000} s`);
      // A pass that stalls (its consumer's server went away) ends; the next goes on from where it stopped.
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), FETCH_MS);
      try {
        for await (const message of this.messages(taskId, next, controller.signal)) {
          records.push(...message.records.filter((record) => record.seq >= fromSeq));
          next = message.seq + 1;
          if (message.seq >= last) break;
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
    for await (const message of this.messages(taskId, Math.floor(fromSeq / SPAN), signal)) {
      for (const record of message.records) if (record.seq >= fromSeq) yield record;
      if (signal.aborted) return;
    }
  }

  /** The task's messages from the stream sequence `from`, each with its records, until `signal` aborts. */
  private async *messages(taskId: string, from: number, signal: AbortSignal): AsyncIterable<{ seq: number; records: StoredRecord[] }> {
    if (signal.aborted) return;
    // Again while NATS is away (a node lost, its stream's leader elected anew): the connection comes back.
    const consumer = await this.retry(() => this.js.consumers.get(TASKS, { filter_subjects: [subjectOf(taskId)], deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(1, from) }), this.deadlineMs);
    const messages = await consumer.consume({ expires: PULL_EXPIRES_MS });
    const stop = () => messages.stop();
    signal.addEventListener('abort', stop, { once: true });
    try {
      for await (const message of messages) {
        const records = (await this.bodyOf(decode<Body>(message.data))).map((record, i) => ({ ...record, taskId, seq: message.seq * SPAN + i }));
        yield { seq: message.seq, records };
        if (signal.aborted) return;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      messages.stop();
    }
  }

  /** A message's records, its blob read where it has one. */
  private async bodyOf(body: Body): Promise<Dated[]> {
    if (Array.isArray(body)) return body;
    const bytes = await this.retry(() => this.blobs.getBlob(body.blob), this.deadlineMs);
    if (!bytes) throw new Error(`records of the task are missing from NATS (their blob ${body.blob} is gone)`);
    return decode<Dated[]>(bytes);
  }
}

/** The next message's records, taken from `queue`: as many as fit (the first whatever its size: a big one goes alone, as a blob). */
function nextBatch(queue: Waiting[]): Waiting[] {
  let bytes = queue[0]!.json.length;
  let count = 1;
  while (count < queue.length && count < SPAN && bytes + queue[count]!.json.length + 1 <= INLINE_BYTES) bytes += queue[count++]!.json.length + 1;
  return queue.splice(0, count);
}
