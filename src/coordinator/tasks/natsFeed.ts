/**
 * The tasks' streams read without a consumer each: NATS limits a stream's consumers (1,000 by
 * default), and a thousand callers following their tasks, with the replicas' runners listening,
 * went past it ("maximum consumers limit reached"). So a coordinator has one ordered consumer for
 * every task's new messages, handed to the followers of each task (the feed), and reads what is
 * stored with the stream's own message requests (the leader answers: never behind).
 *
 * A follower listens first, then reads what is stored, then takes the feed's messages beyond it:
 * the feed delivers in stream order, so nothing is missed and nothing comes twice.
 */
import { DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { Retry } from './natsLog.js';

export interface RawMessage {
  seq: number;
  data: Uint8Array;
  /** The id its publisher gave it (Nats-Msg-Id), where known. */
  id?: string;
}

/** A task's new messages as the feed delivers them, queued until taken. */
export class Listener {
  private readonly queue: RawMessage[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(private readonly done: (listener: Listener) => void) {}

  push(message: RawMessage): void {
    this.queue.push(message);
    this.wake?.();
  }

  /** The next message, or undefined once `signal` aborts or the listener is closed. */
  async next(signal: AbortSignal): Promise<RawMessage | undefined> {
    if (!this.queue.length && !this.closed && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const aborted = () => resolve();
        signal.addEventListener('abort', aborted, { once: true });
        this.wake = () => {
          signal.removeEventListener('abort', aborted);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return signal.aborted || this.closed ? undefined : this.queue.shift();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
    this.done(this);
  }
}

/** Tasks whose last message the feed remembers (a follower reads at least up to it). */
const REMEMBERED_TASKS = 100_000;

export class TaskFeed {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Each task's last message the feed delivered (in the order seen, the oldest forgotten first). */
  private readonly lastSeen = new Map<string, number>();
  private readonly stopped = new AbortController();
  private readonly running: Promise<void>;
  /** Ends the consumer of the moment (it is made again from where it was). */
  private renew: () => void = () => undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly stream: string,
    private readonly subjectPrefix: string,
    private readonly retry: Retry,
    private readonly onError: (error: Error) => void,
    /**
     * The stream sequence it starts from: the stream's next when the engine was made, before any
     * follower read what was stored — so whatever comes after their reads, it delivers.
     */
    startSeq: number,
  ) {
    this.running = this.run(startSeq);
  }

  /** Listens for the task's new messages (from now on); close it when done. */
  listen(taskId: string): Listener {
    const listener = new Listener((gone) => {
      const set = this.listeners.get(taskId);
      set?.delete(gone);
      if (set?.size === 0) this.listeners.delete(taskId);
    });
    const set = this.listeners.get(taskId) ?? new Set();
    set.add(listener);
    this.listeners.set(taskId, set);
    return listener;
  }

  /** The task's last message this feed has delivered or this coordinator stored (0: none): what a read of the stored must reach. */
  seen(taskId: string): number {
    return this.lastSeen.get(taskId) ?? 0;
  }

  /** A message this coordinator stored for the task: its own reads reach it too (a replica behind must not hide it). */
  stored(taskId: string, seq: number): void {
    if (seq > this.seen(taskId)) this.remember(taskId, seq);
  }

  private remember(taskId: string, seq: number): void {
    this.lastSeen.delete(taskId);
    this.lastSeen.set(taskId, seq);
    if (this.lastSeen.size > REMEMBERED_TASKS) this.lastSeen.delete(this.lastSeen.keys().next().value!);
  }

  /**
   * Makes its consumer again, from where it was: after NATS came back, the one it had may wait
   * for its heartbeats to be missed before it notices it is gone (seconds of followers told nothing).
   */
  restart(): void {
    this.renew();
  }

  async close(): Promise<void> {
    this.stopped.abort();
    for (const set of this.listeners.values()) for (const listener of set) listener.close();
    await this.running.catch(() => undefined);
  }

  /** The one consumer: every task's new messages, in stream order; made again from where it was if it ends. */
  private async run(from: number): Promise<void> {
    while (!this.stopped.signal.aborted) {
      try {
        const start = { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from };
        const consumer = await this.retry(() => this.js.consumers.get(this.stream, { filter_subjects: [`${this.subjectPrefix}*`], ...start }), 60_000);
        const messages = await consumer.consume({ expires: 6_000 });
        const stop = () => messages.stop();
        this.stopped.signal.addEventListener('abort', stop, { once: true });
        this.renew = stop;
        try {
          for await (const message of messages) {
            from = message.seq + 1;
            const taskId = message.subject.slice(this.subjectPrefix.length);
            this.remember(taskId, message.seq);
            const set = this.listeners.get(taskId);
            if (set) for (const listener of set) listener.push({ seq: message.seq, data: message.data });
          }
        } finally {
          this.renew = () => undefined;
          this.stopped.signal.removeEventListener('abort', stop);
        }
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        this.onError(error as Error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
}

/**
 * The task's stored messages from the stream sequence `from`, one direct get each (no consumer;
 * not through the JetStream API, whose queue a thousand followers' reads flooded until they waited
 * out their deadlines), in order, up to its last one now — never asked past it.
 */
export async function* storedMessages(jsm: JetStreamManager, stream: string, subject: string, from: number, retry: Retry, deadlineMs: number, atLeast = 0): AsyncIterable<RawMessage> {
  const deadline = Date.now() + deadlineMs;
  let seq = Math.max(1, from);
  // A cluster's replicas all answer direct gets, one a little behind another: a read that ends
  // before `atLeast` (a message of the task's known to be stored) is made again from where it ended.
  for (let tries = 0; ; tries++) {
    const last = (await retry(() => jsm.direct.getMessage(stream, { last_by_subj: subject }), deadlineMs))?.seq ?? 0;
    while (seq <= last) {
      const message = await retry(() => jsm.direct.getMessage(stream, { seq, next_by_subj: subject }), deadlineMs);
      if (!message) break;
      yield { seq: message.seq, data: message.data, id: message.header?.get('Nats-Msg-Id') || undefined };
      seq = message.seq + 1;
    }
    if (seq > atLeast) return;
    // Gone since (its age ran out): nothing more to wait for. The leader says (the API, not a replica).
    if (tries === 0 && !(await retry(() => jsm.streams.getMessage(stream, { seq: atLeast }), deadlineMs).catch(() => null))) return;
    if (Date.now() >= deadline) throw new Error(`NATS did not give the task's messages up to ${atLeast} within ${Math.round(deadlineMs / 1000)} s (its replicas are behind)`);
    await new Promise((resolve) => setTimeout(resolve, Math.min(50 * 2 ** tries, 1_000)));
  }
}
