/**
 * The task engine in memory (store.ts): the embedded coordinator's, and a standalone one's
 * without NATS. Nothing survives the process, and nothing outlives its use: a finished task's
 * stream is kept for its late watchers a while (`keepFinishedMs`), and no more than
 * `maxFinished` of them.
 */
import { admits, OPEN_FENCE, Superseded, type Job, type RunFence, type StoredRecord, type TaskEngine, type TaskLog, type TaskRecord, type TaskState, type TaskStates, type WorkQueue } from './store.js';

export interface MemoryEngineOptions {
  /** How long a finished task's stream is kept. */
  keepFinishedMs?: number;
  /** How many finished tasks' streams are kept at most. */
  maxFinished?: number;
}

const KEEP_FINISHED_MS = 10 * 60_000;
const MAX_FINISHED = 200;

interface Stream {
  records: StoredRecord[];
  waiters: Set<() => void>;
  finished?: number;
  fence: RunFence;
}

class MemoryLog implements TaskLog {
  private readonly streams = new Map<string, Stream>();
  private seq = 0;

  constructor(
    private readonly states: MemoryStates,
    private readonly options: Required<MemoryEngineOptions>,
  ) {}

  async append(taskId: string, record: TaskRecord): Promise<number> {
    const stream = this.stream(taskId);
    const { admitted, next } = admits(stream.fence, record);
    if (!admitted) throw new Superseded(taskId);
    stream.fence = next;
    const stored: StoredRecord = { ...record, taskId, seq: ++this.seq, at: Date.now() };
    stream.records.push(stored);
    if (record.final) this.finished(taskId, stream);
    for (const wake of [...stream.waiters]) wake();
    return stored.seq;
  }

  async read(taskId: string, fromSeq = 1): Promise<StoredRecord[]> {
    return (this.streams.get(taskId)?.records ?? []).filter((record) => record.seq >= fromSeq);
  }

  async last(taskId: string): Promise<StoredRecord | undefined> {
    return this.streams.get(taskId)?.records.at(-1);
  }

  async *follow(taskId: string, fromSeq: number, signal: AbortSignal): AsyncIterable<StoredRecord> {
    const stream = this.stream(taskId);
    // Records are kept in the order of their sequence numbers: a follower walks them by index.
    let index = stream.records.findIndex((record) => record.seq >= fromSeq);
    if (index < 0) index = stream.records.length;
    while (!signal.aborted) {
      if (index < stream.records.length) {
        yield stream.records[index++]!;
        continue;
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          stream.waiters.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        stream.waiters.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private stream(taskId: string): Stream {
    let stream = this.streams.get(taskId);
    if (!stream) this.streams.set(taskId, (stream = { records: [], waiters: new Set(), fence: OPEN_FENCE }));
    return stream;
  }

  /** A finished task is forgotten after a while, and the oldest at once beyond the most kept. */
  private finished(taskId: string, stream: Stream): void {
    stream.finished = Date.now();
    const forget = () => {
      if (this.streams.get(taskId) !== stream || stream.waiters.size > 0) return;
      this.streams.delete(taskId);
      this.states.forget(taskId);
    };
    setTimeout(forget, this.options.keepFinishedMs).unref();
    const finished = [...this.streams].filter(([, candidate]) => candidate.finished !== undefined && candidate.waiters.size === 0);
    for (const [oldest] of finished.slice(0, Math.max(0, finished.length - this.options.maxFinished))) {
      this.streams.delete(oldest);
      this.states.forget(oldest);
    }
  }
}

class MemoryStates implements TaskStates {
  private readonly states = new Map<string, TaskState>();

  async put(taskId: string, state: TaskState): Promise<void> {
    this.states.set(taskId, state);
  }

  async get(taskId: string): Promise<TaskState | undefined> {
    return this.states.get(taskId);
  }

  async update(taskId: string, change: (state: TaskState) => TaskState | undefined): Promise<TaskState | undefined> {
    const state = this.states.get(taskId);
    const changed = state && change(state);
    if (changed) this.states.set(taskId, changed);
    return changed ?? state;
  }

  async list(): Promise<Map<string, TaskState>> {
    return new Map(this.states);
  }

  forget(taskId: string): void {
    this.states.delete(taskId);
  }
}

class MemoryQueue implements WorkQueue {
  private readonly waiting: { taskId: string; ticket: number }[] = [];
  private tickets = 0;
  private wake: (() => void) | undefined;
  /** Handed out and not yet done. */
  private taken = 0;

  async enqueue(taskId: string): Promise<number> {
    const ticket = ++this.tickets;
    this.waiting.push({ taskId, ticket });
    this.wake?.();
    return ticket;
  }

  async ahead(ticket: number): Promise<number> {
    return this.waiting.filter((entry) => entry.ticket < ticket).length;
  }

  async depth(): Promise<number> {
    return this.waiting.length;
  }

  async lag(): Promise<{ pending: number; unacknowledged: number }> {
    return { pending: this.waiting.length, unacknowledged: this.taken };
  }

  work(concurrency: number, handle: (job: Job) => Promise<'let go' | void>): { stop(): Promise<void> } {
    let running = 0;
    let stopped = false;
    const pump = () => {
      while (!stopped && running < concurrency && this.waiting.length > 0) {
        const { taskId } = this.waiting.shift()!;
        running++;
        this.taken++;
        void handle({ taskId, redelivered: false })
          .catch(() => undefined)
          .finally(() => {
            running--;
            this.taken--;
            pump();
          });
      }
    };
    this.wake = pump;
    pump();
    return {
      stop: async () => {
        stopped = true;
        this.wake = undefined;
      },
    };
  }
}

export function memoryEngine(options: MemoryEngineOptions = {}): TaskEngine {
  const states = new MemoryStates();
  const log = new MemoryLog(states, { keepFinishedMs: options.keepFinishedMs ?? KEEP_FINISHED_MS, maxFinished: options.maxFinished ?? MAX_FINISHED });
  return { name: 'memory', log, states, queue: new MemoryQueue(), stopping: () => undefined, close: async () => undefined };
}
