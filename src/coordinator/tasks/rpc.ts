/**
 * The task RPCs of our coordinator, on the task engine (store.ts): StreamTask creates a task,
 * queues it and streams its records as TaskEvents (each with its sequence) until its final
 * state; SubscribeTaskEvents follows any tasks from a sequence (a colleague watching, a bridge
 * back after a failover); the replies to a task's requests (approvals, files, writes, questions)
 * and CancelTask are taken from the caller that started it — its identity, on any coordinator of
 * the team; ListTasks says what is known.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../logger.js';
import { DETACH_HEADER, type FileContent, type FileWritten, type QuestionAnswer, type TaskStreamRequest, type TerminalAnswer } from '../../wire/contract.js';
import { CallOut } from '../callOut.js';
import { fail, identityOf, type Caller } from '../callers.js';
import { claimRequest, taskOfRequest } from './requests.js';
import { createdState } from './spec.js';
import type { TaskSpec } from './spec.js';
import { Unreadable, type StoredRecord, type TaskEngine, type TaskRecord, type TaskState } from './store.js';

type Unary<Request> = (call: grpc.ServerUnaryCall<Request, unknown>, callback: grpc.sendUnaryData<unknown>) => void;
type Stream<Request> = grpc.ServerWritableStream<Request, unknown>;

/** How often a queued task's caller is told how many are ahead of it. */
const QUEUE_NEWS_MS = 1_000;
/** How long a task may take to start before its caller is told it waits in the queue. */
const QUEUE_GRACE_MS = 300;
const TASK_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** The tasks one SubscribeTaskEvents call may follow. */
const MAX_FOLLOWED = 1_000;
const FINAL = new Set<TaskState['status']>(['completed', 'failed', 'cancelled']);

export interface TaskRpcOptions {
  engine: TaskEngine;
  logger: Logger;
  /** The task a StreamTask asks for, checked (identity, session); or the error to answer with. */
  specOf(call: Stream<TaskStreamRequest>): { spec: TaskSpec; error?: undefined } | { error: grpc.ServiceError };
}

/** A failure of the team's store, to the caller: what it holds that cannot be read (asking again will not mend it), or the store away for now. */
function storeFailure(error: unknown, doing: string): grpc.ServiceError {
  if (error instanceof Unreadable) return fail(grpc.status.DATA_LOSS, `${doing}: ${error.message}`, 'store');
  return fail(grpc.status.UNAVAILABLE, `${doing}: ${(error as Error).message}; try again once it is back`, 'store');
}

export function timestamp(ms = Date.now()) {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

export class TaskRpc {
  /** The calls following tasks here, each ended by its function when this coordinator stops. */
  private readonly open = new Set<() => Promise<void>>();

  constructor(private readonly options: TaskRpcOptions) {}

  readonly streamTask = async (call: Stream<TaskStreamRequest>) => {
    const out = new CallOut(call);
    const made = this.options.specOf(call);
    if (made.error) return out.fail(made.error);
    const taskId = call.request.task_id || randomUUID();
    if (!TASK_ID.test(taskId)) return out.fail(fail(grpc.status.INVALID_ARGUMENT, 'task_id is letters, digits, _ and - (at most 128)'));
    const { engine, logger } = this.options;
    // Who may answer its requests and cancel it: known as those replies know their caller (they
    // name no agent_id), so a caller that sends no identity is "local" here as there.
    const owner = identityOf(call, '');
    logger.debug(`StreamTask ${taskId}${made.spec.intent === 'ask' ? ' (ask)' : ''}${made.spec.traceparent ? ` traceparent ${made.spec.traceparent}` : ''}`);
    try {
      if (await engine.states.get(taskId)) return out.fail(fail(grpc.status.ALREADY_EXISTS, `task ${taskId} exists; follow it with SubscribeTaskEvents`));
      const seq = await engine.log.append(taskId, { created: { owner, spec: made.spec } });
      await engine.states.put(taskId, createdState(made.spec, owner, seq));
      await engine.log.append(taskId, { queued: { ticket: await engine.queue.enqueue(taskId) } });
    } catch (error) {
      return out.fail(storeFailure(error, 'the task could not be queued'));
    }
    // A detached task's caller may be back (a failover, a blip): it is told it went, not cancelled.
    const detached = call.metadata.get(DETACH_HEADER)[0]?.toString() === '1';
    const stream = randomUUID();
    await this.note(taskId, { caller: { attached: stream } });
    await this.stream(out, [taskId], 1, detached ? (id) => this.note(id, { caller: { detached: stream } }) : (id) => this.cancel(id, owner));
  };

  readonly subscribe = async (call: Stream<{ plan_id: string; task_ids: string[]; from_sequence: number }>) => {
    const out = new CallOut(call);
    const ids = [...new Set(call.request.task_ids)];
    if (ids.length === 0) return out.fail(fail(grpc.status.INVALID_ARGUMENT, 'task_ids is empty: name the tasks to follow (ListTasks lists them)'));
    // Each is looked up and followed at once: what one call holds open is bounded.
    if (ids.length > MAX_FOLLOWED) return out.fail(fail(grpc.status.INVALID_ARGUMENT, `task_ids names ${ids.length.toLocaleString('en')} tasks: follow at most ${MAX_FOLLOWED.toLocaleString('en')} a call`));
    const unknown = ids.find((id) => !TASK_ID.test(id));
    if (unknown !== undefined) return out.fail(fail(grpc.status.NOT_FOUND, `no task ${unknown.slice(0, 128)}`));
    let states: Map<string, TaskState | undefined>;
    try {
      states = new Map(await Promise.all(ids.map(async (id) => [id, await this.options.engine.states.get(id)] as const)));
    } catch (error) {
      return out.fail(storeFailure(error, 'the tasks cannot be looked up'));
    }
    const missing = ids.find((id) => !states.get(id));
    if (missing !== undefined) return out.fail(fail(grpc.status.NOT_FOUND, `no task ${missing}`));
    // Its caller, back (a failover, a blip): a detached task is followed again, until this stream
    // ends. A colleague watching changes nothing.
    const who = identityOf(call, '');
    const own = ids.filter((id) => states.get(id)!.owner === who && !FINAL.has(states.get(id)!.status));
    const stream = randomUUID();
    for (const id of own) await this.note(id, { caller: { attached: stream } });
    await this.stream(out, ids, Number(call.request.from_sequence) || 1, (id) => (own.includes(id) ? this.note(id, { caller: { detached: stream } }) : undefined));
  };

  /**
   * Writes the tasks' events to the call, from `fromSeq`, until each has its final state (then
   * the call ends), the caller goes, or this coordinator stops (the call ends UNAVAILABLE: follow
   * them on another). `left` says what becomes of each unfinished task when the call is left.
   */
  private async stream(out: CallOut, taskIds: string[], fromSeq: number, left?: (taskId: string) => unknown): Promise<void> {
    const controller = new AbortController();
    const finished = new Set<string>();
    const leave = async () => {
      if (controller.signal.aborted) return;
      controller.abort();
      await Promise.all(taskIds.filter((taskId) => !finished.has(taskId)).map((taskId) => left?.(taskId)));
    };
    // Also when gone already, while the task was being made.
    out.onCancelled(() => void leave());
    const stopping = async () => {
      await leave();
      out.fail(fail(grpc.status.UNAVAILABLE, 'this coordinator is stopping: follow the tasks on another of the team (SubscribeTaskEvents)'));
    };
    this.open.add(stopping);
    const seen = new Map<string, { seq: number; status: string }>();
    const unwatch = this.watchStore(out, taskIds, seen, controller);
    try {
      await Promise.all(taskIds.map((taskId) => this.follow(out, taskId, fromSeq, controller.signal, seen).then((final) => final && finished.add(taskId))));
    } finally {
      this.open.delete(stopping);
      unwatch();
    }
    if (controller.signal.aborted) return;
    controller.abort();
    if (finished.size === taskIds.length) out.end();
    else out.fail(fail(grpc.status.UNAVAILABLE, "the tasks' streams could not be followed to their end: follow them again with SubscribeTaskEvents", 'store'));
  }

  /**
   * While the team's store is away, the call's tasks cannot be followed: their caller is told, and
   * told again when it is back; once it has been away too long the call ends, saying so (a bridge
   * follows them on another coordinator of the team).
   */
  private watchStore(out: CallOut, taskIds: string[], seen: Map<string, { seq: number; status: string }>, controller: AbortController): () => void {
    const health = this.options.engine.health;
    if (!health) return () => undefined;
    const patience = `${Math.round(health.patienceMs / 1000)} s`;
    const say = (message: string) => {
      for (const taskId of taskIds) out.write({ task_id: taskId, timestamp: timestamp(), sequence: seen.get(taskId)?.seq ?? 0, status: seen.get(taskId)?.status ?? 'pending', message });
    };
    const unwatch = health.watch((change) => {
      if (controller.signal.aborted || !out.open) return;
      if (change === 'away') say(`The team's store (${health.where}) cannot be reached: waiting up to ${patience} for it to come back`);
      else if (change === 'back') say(`The team's store (${health.where}) is back`);
      else {
        controller.abort();
        out.fail(fail(grpc.status.UNAVAILABLE, `this coordinator could not reach the team's store (${health.where}) for ${patience}: follow the task on another of the team (SubscribeTaskEvents), or run it again once NATS is back`, 'store'));
      }
    });
    // Away already when the call came.
    if (health.awaySince() !== undefined) say(`The team's store (${health.where}) cannot be reached: waiting for it to come back`);
    return unwatch;
  }

  /** One task's records to the call, until its final one (true) or the signal. */
  private async follow(out: CallOut, taskId: string, fromSeq: number, signal: AbortSignal, seen: Map<string, { seq: number; status: string }>): Promise<boolean> {
    try {
      for await (const record of this.options.engine.log.follow(taskId, await this.startOf(taskId, fromSeq), signal)) {
        if (record.event) seen.set(taskId, { seq: record.seq, status: typeof record.event.status === 'string' ? record.event.status : (seen.get(taskId)?.status ?? 'pending') });
        this.forward(out, record, signal);
        if (record.final) return true;
      }
    } catch (error) {
      if (!signal.aborted) this.options.logger.warn(`task ${taskId}: its stream could not be followed: ${(error as Error).message}`);
    }
    return false;
  }

  /**
   * Where a follower starts: at `fromSeq`, but never past the task's last record — a call from
   * beyond it would wait for ever for records numbered after its end. Asked from further on, it
   * starts after that record; from past a task's end, at its final record: a watcher always
   * learns how the task ended.
   */
  private async startOf(taskId: string, fromSeq: number): Promise<number> {
    // From the start (a new task's stream, a watcher from 0): nothing to look up on the ask's path.
    if (fromSeq <= 1) return fromSeq;
    const last = await this.options.engine.log.last(taskId);
    if (!last || fromSeq <= last.seq) return fromSeq;
    return last.final ? last.seq : last.seq + 1;
  }

  /** Ends every call following tasks here (this coordinator stops): their callers follow them on another. */
  async stop(): Promise<void> {
    await Promise.all([...this.open].map((stopping) => stopping()));
  }

  /** One record as the caller sees it: an event, or news of the queue. */
  private forward(out: CallOut, record: StoredRecord, signal: AbortSignal): void {
    const base = { task_id: record.taskId, timestamp: timestamp(record.at), sequence: record.seq };
    if (record.event) out.write({ ...record.event, ...base });
    if (record.queued) void this.queueNews(out, record, signal);
  }

  /**
   * While a task waits in the queue (every running slot taken): how many are ahead of it, now and
   * then, until it starts. Nothing is said of a task that starts at once.
   */
  private async queueNews(out: CallOut, record: StoredRecord, signal: AbortSignal): Promise<void> {
    const { engine } = this.options;
    for (let said = ''; !signal.aborted && out.open; ) {
      await new Promise((resolve) => setTimeout(resolve, said ? QUEUE_NEWS_MS : QUEUE_GRACE_MS).unref());
      const state = await engine.states.get(record.taskId).catch(() => undefined);
      if (!state || state.status !== 'queued' || signal.aborted || !out.open) return;
      const ahead = await engine.queue.ahead(record.queued!.ticket).catch(() => 0);
      const message = ahead > 0 ? `Queued, ${ahead} ahead` : 'Queued, next in line';
      if (message !== said && !signal.aborted) out.write({ task_id: record.taskId, timestamp: timestamp(), sequence: record.seq, status: 'pending', message });
      said = message;
    }
  }

  private async note(taskId: string, record: TaskRecord): Promise<void> {
    await this.options.engine.log.append(taskId, record).catch((error: unknown) => this.options.logger.warn(`task ${taskId}: ${Object.keys(record).join()} was not recorded: ${(error as Error).message}`));
  }

  private async cancel(taskId: string, by: string): Promise<void> {
    await this.options.engine.log.append(taskId, { reply: { id: 'cancel', by, answer: true } }).catch((error: unknown) => this.options.logger.warn(`task ${taskId} could not be cancelled: ${(error as Error).message}`));
  }

  readonly cancelTask: Unary<{ task_id: string }> = (call, callback) =>
    void (async () => {
      const taskId = call.request.task_id;
      const { engine } = this.options;
      // Said as it is: the store away, or the cancel not recorded, is not "no task", nor a cancel.
      try {
        const state = TASK_ID.test(taskId) ? await engine.states.get(taskId) : undefined;
        if (!state) return callback(fail(grpc.status.NOT_FOUND, `no task ${taskId.slice(0, 128)}`));
        if (state.owner !== identityOf(call, '')) return callback(fail(grpc.status.PERMISSION_DENIED, 'only the caller that started the task can cancel it'));
        if (!FINAL.has(state.status)) await engine.log.append(taskId, { reply: { id: 'cancel', by: state.owner, answer: true } });
        callback(null, {});
      } catch (error) {
        callback(storeFailure(error, `task ${taskId} could not be cancelled`));
      }
    })();

  readonly listTasks: Unary<{ running_only: boolean }> = (call, callback) =>
    void this.options.engine.states.list().then(
      (states) => {
        const tasks = [...states]
          .filter(([, state]) => !call.request.running_only || ['queued', 'running', 'awaiting_approval'].includes(state.status))
          .sort(([, a], [, b]) => b.updatedAt - a.updatedAt)
          .map(([taskId, state]) => ({ task_id: taskId, owner: state.owner, status: state.status, title: state.title, replica: state.replica ?? '', sequence: state.seq, updated_at: timestamp(state.updatedAt) }));
        callback(null, { tasks });
      },
      (error: unknown) => callback(storeFailure(error, 'the tasks could not be listed')),
    );

  readonly approve: Unary<{ execution_id: string; remember: boolean }> = (call, callback) =>
    void this.reply(call, call.request.execution_id, call.request.remember ? 'allow_always' : 'allow_once', 'approval', 'decide its approvals').then((error) => callback(error, {}));

  readonly reject: Unary<{ execution_id: string; reason: string }> = (call, callback) =>
    void this.reply(call, call.request.execution_id, 'reject', 'approval', 'decide its approvals').then((error) => callback(error, {}));

  readonly provideFile: Unary<FileContent> = (call, callback) =>
    void this.reply(call, call.request.request_id, call.request, 'file request', 'answer its file requests').then((error) => callback(error, {}));

  readonly confirmFileWrite: Unary<FileWritten> = (call, callback) =>
    void this.reply(call, call.request.request_id, call.request, 'file write', 'confirm its file writes').then((error) => callback(error, {}));

  readonly answerTerminal: Unary<TerminalAnswer> = (call, callback) =>
    void this.reply(call, call.request.request_id, call.request, 'terminal call', 'answer its terminal calls').then((error) => callback(error, {}));

  readonly answerQuestion: Unary<QuestionAnswer> = (call, callback) =>
    void this.reply(call, call.request.request_id, call.request, 'question', 'answer its questions').then((error) => callback(error, {}));

  /** A reply to a request of a task: claimed (once, by the caller that started it), then recorded for the task's coordinator. */
  private async reply(caller: Caller, id: string, answer: unknown, what: string, only: string): Promise<grpc.ServiceError | null> {
    const by = identityOf(caller, '');
    try {
      const outcome = await claimRequest(this.options.engine, id, by);
      if (outcome === 'unknown') return fail(grpc.status.NOT_FOUND, `no pending ${what} ${id.slice(0, 200)} (unknown, or already answered)`);
      if (outcome === 'notTheCaller') return fail(grpc.status.PERMISSION_DENIED, `only the caller that started the task can ${only}`);
      await this.options.engine.log.append(taskOfRequest(id)!, { reply: { id, by, answer } });
      return null;
    } catch (error) {
      return storeFailure(error, `the ${what} could not be recorded`);
    }
  }
}
