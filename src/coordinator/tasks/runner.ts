/**
 * Runs the tasks a coordinator takes from the work queue (store.ts): each one's agent turn, with
 * what it does recorded on the task's stream — progress batched (batcher.ts), the answer in
 * pieces, tool calls, approvals asked and decided, the editor's buffers and writes asked of the
 * caller, the agent's questions — and its one final state. Replies come back on the same stream,
 * whichever coordinator took them (requests.ts); so does a cancel.
 *
 * A task handed out again (its coordinator died while running it) ends failed, in words, unless
 * its coordinator is in fact still at it (its state says so, freshly); a task already over is left.
 */
import type { Logger } from '../../logger.js';
import type { AgentDriver, AgentQuestion, FileReadRequest, PermissionDecision, PermissionRequest, TurnSink } from '../agents/driver.js';
import { EventBatcher } from '../batcher.js';
import { agentFailure } from '../callers.js';
import { FileAccessError, workspaceOf } from '../files.js';
import { makeModelEdit, MODEL_EDIT_REPLY, replacementIn, selectionEditOf } from '../modelEdits.js';
import { QUESTION_TIMEOUT_MS, questionAnswer } from '../questions.js';
import { askSink, assessCall, effectiveKind, refusalNote, withNotes } from '../turnRules.js';
import { afterTurnNote, TurnFiles } from '../turnFiles.js';
import { FINAL_STATUSES, type FileContent, type FileWritten, type PlanEntry, type QuestionAnswer, type TerminalAnswer, type WireToolExecution } from '../../wire/contract.js';
import { uriToPath } from '../../uri.js';
import { TaskRequests } from './requests.js';
import { toolSpans } from './toolSpans.js';
import { tracer } from '../../tracing.js';
import { outsideRoots, titleOf, turnOf, type TaskSpec } from './spec.js';
import type { Job, StoredRecord, TaskEngine, TaskState } from './store.js';

/** How long the caller may take to answer a file_request before the disk is read instead. */
export const FILE_REQUEST_TIMEOUT_MS = 10_000;
/** How long the caller may take to make an approved write in the editor (it answers at once). */
export const FILE_WRITE_TIMEOUT_MS = 30_000;
/** A coordinator-side limit, so a task whose approval nobody answers never waits forever. */
export const APPROVAL_TIMEOUT_MS = 15 * 60_000;
/** How often a running task's state says its coordinator is still at it (a third of the queue's lease, 10 s on NATS). */
const HEARTBEAT_MS = 2_000;

export interface RunnerOptions {
  engine: TaskEngine;
  driver: AgentDriver | undefined;
  agentProblem?: string;
  logger: Logger;
  /** This coordinator's name among the team's. */
  replica: string;
  /** How long a detached task's caller may be gone before it is cancelled (CALLER_GRACE_MS). */
  callerGraceMs?: number;
  /** The only folders whose workspaces it runs tasks in. */
  roots?: string[];
}

/** How long a detached task waits for its caller to follow it again (a failover, a blip). */
export const CALLER_GRACE_MS = 60_000;

/** One running task's handle: how it records, what it asks, when it is cancelled. */
interface Running {
  taskId: string;
  spec: TaskSpec;
  owner: string;
  send: Send;
  requests: TaskRequests;
  signal: AbortSignal;
  /** The task's span: its turn's is a child. */
  traceparent: string;
  /** The agent's session of the coordinator that ran it and stopped, taken up again here. */
  resume?: string;
}

type FinalStatus = 'completed' | 'failed' | 'cancelled';
/** Records an event of the task's for its callers; with `final`, its last (its final state). */
type Send = (event: Record<string, unknown>, final?: FinalStatus) => Promise<void>;

/** How long a terminal call may take in the client (output, kill, release, create); waiting for a command's exit, at most as long as a task. */
const TERMINAL_CALL_MS = 30_000;
const TERMINAL_WAIT_MS = 60 * 60_000;

/** A task whose request its coordinator cannot read (the store lost it, or never had it whole). */
export const UNREADABLE = 'the coordinator that took this task could not read its request from the team\'s store (NATS): run it again';

/** What an agent taking up a task again is told, before the task. */
const TAKEN_UP = '(This task was interrupted: the coordinator running it stopped, and another took it up. Where you already did part of it, go on from where you were, without doing again what is done.)';

/** Why a coordinator that stops aborts its tasks' turns. */
const SHUTDOWN = 'the coordinator running it stopped: run it again';

/** Why a turn is aborted that ends the task failed, not cancelled: this coordinator stops, or cannot record it. */
class Failure extends Error {}

/** Why the tasks running here fail when the team's store was away too long. */
const storeLost = (where: string, patienceMs: number) =>
  `the team's store (${where}) could not be reached for ${Math.round(patienceMs / 1000)} s, so this task could not be recorded and was stopped: run it again once NATS is back`;
/** Why a detached task whose caller did not come back is cancelled. */
const callerGone = (graceMs: number) => `Task cancelled: its caller went away and did not follow it again within ${Math.round(graceMs / 1000)} s`;

export class TaskRunner {
  /** The turns running here, to end when this coordinator stops. */
  private readonly running = new Map<AbortController, Promise<void>>();

  constructor(private readonly options: RunnerOptions) {
    const health = options.engine.health;
    // Every turn here would go on unrecorded, its callers told nothing: they end, failed, and say why.
    health?.watch((change) => {
      if (change !== 'lost') return;
      if (this.running.size) options.logger.warn(`${health.where} away for ${Math.round(health.patienceMs / 1000)} s: the ${this.running.size} task(s) running here are stopped (failed)`);
      for (const turn of this.running.keys()) turn.abort(new Failure(storeLost(health.where, health.patienceMs)));
    });
  }

  /** How many turns run here now. */
  get runningHere(): number {
    return this.running.size;
  }

  /** Ends the turns running here (failed, in words), and waits for them to end. */
  async stop(): Promise<void> {
    for (const turn of this.running.keys()) turn.abort(new Failure(SHUTDOWN));
    await Promise.allSettled(this.running.values());
  }

  /**
   * A task's records when its job is taken. The job proves the task was made (its record stored
   * first): a read without that record came from a replica a moment behind (a cluster's direct
   * gets), and is made again, for a few seconds, before the task is given up as unknown.
   */
  private async recordsOf(taskId: string): Promise<StoredRecord[]> {
    let records = await this.options.engine.log.read(taskId);
    for (let tries = 0; tries < 6 && !records.some((record) => record.created); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** tries));
      records = await this.options.engine.log.read(taskId);
    }
    if (!records.some((record) => record.created)) this.options.logger.warn(`task ${taskId}: taken from the queue, but its request is not in the store: ended as failed`);
    return records;
  }

  /** Takes tasks from the queue, `concurrency` at a time, until stopped. */
  start(concurrency: number): { stop(): Promise<void> } {
    // What fails on the way (NATS away past every retry) is said, and the job given back: never a crash.
    return this.options.engine.queue.work(concurrency, (job) => this.run(job).catch((error: unknown) => this.options.logger.warn(`task ${job.taskId}: ${(error as Error).message}`)));
  }

  private async run(job: Job): Promise<void> {
    const { engine, logger } = this.options;
    const records = await this.recordsOf(job.taskId);
    if (records.some((record) => record.final)) return;
    const controller = new AbortController();
    // Its final event and final state are one record: stored together, or not at all. An event the
    // store would not take (every retry spent) leaves the task's story with a hole: it ends, failed.
    const send: Send = (event, final) =>
      engine.log.append(job.taskId, final ? { event, final } : { event }).then(
        () => undefined,
        (error: unknown) => {
          logger.warn(`task ${job.taskId}: ${final ? `its end (${final})` : 'an event'} was not stored: ${(error as Error).message}`);
          if (!final && !controller.signal.aborted) controller.abort(new Failure(`the team's store did not take this task's progress (${(error as Error).message}), so it was stopped: run it again`));
        },
      );
    const created = records.find((record) => record.created)?.created;
    // Its caller waits on its stream: told at once, not at its deadline.
    if (!created) return this.end(job.taskId, send, 'failed', UNREADABLE);
    // Handed out again: its coordinator stopped. Taken up where its agent can load its session, else over.
    let resume: string | undefined;
    if (records.some((record) => record.started)) {
      if (await this.stillRunElsewhere(job.taskId)) return;
      resume = this.resumable(records);
      if (!resume) return this.end(job.taskId, send, 'failed', SHUTDOWN);
    }
    if (records.some((record) => record.reply?.id === 'cancel')) return this.end(job.taskId, send, 'cancelled', 'Task cancelled');
    // Taken by a replica that does not serve its workspace (another of the team's gateways let it in).
    const outside = outsideRoots(this.options.roots, created.spec.cwd, `replica ${this.options.replica}`);
    if (outside) return this.end(job.taskId, send, 'failed', outside);
    const absence = this.absence(controller);
    for (const record of records) absence.note(record);
    if (absence.goneFor() >= this.graceMs) return this.end(job.taskId, send, 'cancelled', callerGone(this.graceMs));
    await engine.log.append(job.taskId, { started: { replica: this.options.replica } });
    await this.setState(job.taskId, { status: 'running', replica: this.options.replica });
    const requests = new TaskRequests(job.taskId, engine);
    // Replies, a cancel, its caller gone and back, from any coordinator: this task's stream, from here on.
    const listening = this.listen(job.taskId, records.at(-1)!.seq + 1, requests, controller, absence);
    const heartbeat = setInterval(() => void this.setState(job.taskId, {}).catch(() => undefined), HEARTBEAT_MS);
    heartbeat.unref();
    const span = tracer().start('buckley.task', created.spec.traceparent, { 'buckley.task_id': job.taskId, 'buckley.intent': created.spec.intent, 'buckley.replica': this.options.replica });
    // Its one final event ends its span, saying how it ended.
    const traced: Send = (event, final) => {
      if (typeof event.status === 'string' && FINAL_STATUSES.has(event.status)) {
        span.set({ 'buckley.status': event.status });
        span.end(event.status === 'failed' ? String(event.message) : undefined);
      }
      return send(event, final);
    };
    const work = this.turn({ taskId: job.taskId, spec: created.spec, owner: created.owner, send: traced, requests, signal: controller.signal, traceparent: span.traceparent, ...(resume ? { resume } : {}) });
    this.running.set(controller, work);
    try {
      await work;
    } finally {
      span.end();
      clearInterval(heartbeat);
      absence.stop();
      listening.abort();
      this.running.delete(controller);
    }
  }

  /**
   * The agent's session of a task whose coordinator stopped, where this replica runs the same
   * agent and the agent can load its sessions (it keeps them on disk: the same machine, or a
   * shared home); undefined where it cannot be taken up again.
   */
  private resumable(records: StoredRecord[]): string | undefined {
    const started = records.findLast((record) => record.started?.agentSession)?.started;
    return started?.resumable && started.agent === this.options.driver?.description ? started.agentSession : undefined;
  }

  /** Whether another coordinator still runs the task: its state says so, freshly. */
  private async stillRunElsewhere(taskId: string): Promise<boolean> {
    const state = await this.options.engine.states.get(taskId);
    // Three heartbeats missed: it has stopped (its lease ran out too, or the task would not be here).
    return Boolean(state && state.replica && state.replica !== this.options.replica && ['running', 'awaiting_approval'].includes(state.status) && Date.now() - state.updatedAt < HEARTBEAT_MS * 3);
  }

  private get graceMs(): number {
    return this.options.callerGraceMs ?? CALLER_GRACE_MS;
  }

  /**
   * The caller's streams open on the task (any coordinator's): when the last one ends, the turn is
   * cancelled unless one is open again within the grace. A coordinator that died with one open
   * never says it ended: that stream counts as open.
   */
  private absence(turn: AbortController): { note(record: StoredRecord): void; goneFor(): number; stop(): void } {
    const open = new Set<string>();
    let timer: NodeJS.Timeout | undefined;
    let goneAt: number | undefined;
    return {
      note: (record) => {
        const caller = record.caller;
        if (!caller) return;
        if ('attached' in caller) open.add(caller.attached);
        else open.delete(caller.detached);
        clearTimeout(timer);
        goneAt = open.size === 0 && 'detached' in caller ? record.at : undefined;
        if (goneAt === undefined) return;
        timer = setTimeout(() => turn.abort(callerGone(this.graceMs)), Math.max(0, goneAt + this.graceMs - Date.now()));
        timer.unref();
      },
      goneFor: () => (goneAt === undefined ? 0 : Date.now() - goneAt),
      stop: () => clearTimeout(timer),
    };
  }

  /** Follows the task's stream for its replies (to the requests waiting), a cancel, and its caller going and coming back. */
  private listen(taskId: string, fromSeq: number, requests: TaskRequests, turn: AbortController, absence: { note(record: StoredRecord): void }): AbortController {
    const stop = new AbortController();
    void (async () => {
      for await (const record of this.options.engine.log.follow(taskId, fromSeq, stop.signal)) {
        if (record.reply?.id === 'cancel') turn.abort();
        else if (record.reply) requests.reply(record.reply.id, record.reply.answer);
        else absence.note(record);
      }
    })().catch((error: unknown) => {
      if (!stop.signal.aborted) this.options.logger.warn(`task ${taskId}: its replies could not be followed: ${(error as Error).message}`);
    });
    return stop;
  }

  private async setState(taskId: string, change: Partial<TaskState>): Promise<void> {
    await this.options.engine.states.update(taskId, (state) => ({ ...state, ...change, updatedAt: Date.now() }));
  }

  /** The task's one final state, with its event. */
  private async end(taskId: string, send: Send, status: FinalStatus, message: string, extra: Record<string, unknown> = {}): Promise<void> {
    await send({ status, message, ...extra }, status);
    await this.setState(taskId, { status, pending: [] });
  }

  /** The agent's turn, what it does recorded; its final state at the end, whatever happens. */
  private async turn(task: Running): Promise<void> {
    const { driver, logger } = this.options;
    if (!driver) return this.end(task.taskId, task.send, 'failed', this.options.agentProblem ?? 'no agent is configured');
    const span = tracer().start('buckley.turn', task.traceparent, { 'buckley.agent': driver.shortName, 'buckley.read_only': task.spec.intent === 'ask' });
    const asked = turnOf(task.spec);
    const turn = { ...asked, traceparent: span.traceparent, ...(task.resume ? { resume: task.resume, prompt: `${TAKEN_UP}\n\n${asked.prompt}` } : {}) };
    const readOnly = task.spec.intent === 'ask';
    // An edit of the selection by a model that cannot write files: its answer becomes the change.
    const selection = task.spec.intent === 'edit' ? selectionEditOf(task.spec.context, (uri) => (uri.startsWith('file:') ? uriToPath(uri) : undefined)) : undefined;
    const modelEdit = driver.writesFiles ? undefined : selection;
    if (modelEdit) turn.prompt += `\n\n${MODEL_EDIT_REPLY}`;
    task.send({ status: 'pending', message: task.resume ? `Taken up again by ${this.options.replica}: the coordinator running it stopped` : `Starting ${driver.shortName}…` });
    const batch = new EventBatcher(task.send);
    // Whatever is batched goes out before an approval or the final event, in order.
    const sendNow = (event: Record<string, unknown>) => {
      batch.flush();
      task.send(event);
    };
    const tools = toolSpans(span.traceparent);
    const events = this.events(batch, sendNow, task, tools);
    const decides = readOnly ? askSink(events, turn.cwd, logger) : this.taskSink(events, sendNow, task, driver.shortName, span.traceparent);
    const files = new TurnFiles(decides, turn.cwd, {
      readOnly,
      changed: (change) => sendNow({ status: 'in_progress', file_changed: { path: change.path, before: change.before, after: change.after, in_editor: change.inEditor, unasked: change.unasked ?? false } }),
      ...(task.spec.servesBuffers ? { fromEditor: (read, signal) => this.askEditor(read, signal, sendNow, task), toEditor: (write, signal) => this.writeInEditor(write, signal, sendNow, task) } : {}),
    });
    try {
      // An agent that writes the disk itself is watched: what it changed is taken into the editor
      // and the review when its turn ends (an ask in a sandbox cannot change anything).
      if (driver.writesFiles && (!readOnly || driver.unsafeAsks)) files.watch();
      const result = await driver.run(turn, files.sink, task.signal);
      if (modelEdit && result.stopReason === 'end_turn') events.text(`\n\n${await makeModelEdit(modelEdit, result.text, files.sink, task.signal)}`);
      // An agent that can only end its turn when refused (Codex) was refused, not cancelled.
      const refusal = refusalNote(result, task.signal, driver.shortName, readOnly);
      const settled = task.signal.aborted ? undefined : await files.settle(logger);
      // An agent that answered the edit in text (the lines in a code block) and changed nothing: its answer is the proposal, as a model's is.
      if (selection && !modelEdit && result.stopReason === 'end_turn' && !files.touched(selection.path) && replacementIn(result.text) !== undefined) {
        events.text(`\n\n${await makeModelEdit(selection, result.text, files.sink, task.signal)}`);
      }
      const notes = withNotes(result.text, [refusal, afterTurnNote(driver.shortName, settled, result.unasked ?? [], workspaceOf(turn.cwd))]);
      if (notes) events.text(notes);
      batch.flush();
      files.close();
      if (task.signal.reason instanceof Failure) await this.end(task.taskId, task.send, 'failed', task.signal.reason.message);
      else if (result.stopReason === 'cancelled' && !refusal) await this.end(task.taskId, task.send, 'cancelled', typeof task.signal.reason === 'string' ? task.signal.reason : 'Task cancelled');
      else await this.end(task.taskId, task.send, 'completed', 'Done', { progress: 100, ...(result.usage ? { usage: result.usage } : {}) });
      span.set({ 'buckley.stop_reason': result.stopReason });
    } catch (error) {
      const failure = agentFailure(error);
      // What a failed agent changed on disk is taken in all the same: into the editor, the review.
      if (!task.signal.aborted) await files.settle(logger).catch((problem: unknown) => logger.warn(`the changes of the failed task: ${(problem as Error).message}`));
      batch.flush();
      files.close();
      const reason: unknown = task.signal.reason;
      const failed = reason instanceof Failure || !task.signal.aborted;
      if (failed) span.end(failure.details);
      if (failed) await this.end(task.taskId, task.send, 'failed', reason instanceof Failure ? reason.message : failure.details);
      else await this.end(task.taskId, task.send, 'cancelled', typeof reason === 'string' ? reason : 'Task cancelled');
    } finally {
      tools.close();
      span.end();
    }
  }

  /** What a turn's driver tells the caller; the agent's questions only to a caller that answers them (else they are declined). */
  private events(batch: EventBatcher, sendNow: (event: Record<string, unknown>) => void, task: Running, tools: { note(execution: WireToolExecution): void }) {
    const answers = task.spec.questions;
    return {
      text: (delta: string) => batch.text(delta),
      tool: (execution: WireToolExecution) => {
        tools.note(execution);
        batch.tool(execution);
      },
      plan: (entries: PlanEntry[]) => batch.plan(entries),
      thought: (delta: string) => batch.thought(delta),
      notice: (message: string) => sendNow({ status: 'in_progress', message }),
      // The agent's session, on the task's stream: another replica takes the task up in it if this one stops.
      opened: (session: { id: string; resumable: boolean }) => {
        const started = { replica: this.options.replica, agent: this.options.driver?.description ?? '', agentSession: session.id, resumable: session.resumable };
        void this.options.engine.log.append(task.taskId, { started }).catch((error: unknown) => this.options.logger.warn(`task ${task.taskId}: its agent's session was not stored: ${(error as Error).message}`));
      },
      ...(answers ? { question: (question: AgentQuestion, signal: AbortSignal) => this.question(question, signal, sendNow, task), typedAnswers: answers === 'typed' } : {}),
      ...(task.spec.servesTerminals ? { terminal: (method: string, params: Record<string, unknown>, signal: AbortSignal) => this.terminalCall(method, params, signal, sendNow, task) } : {}),
    };
  }

  /** An agent's terminal call made by the caller in its client's terminals: the client's result, or its refusal (a waiting call waits at most the turn). */
  private async terminalCall(method: string, params: Record<string, unknown>, signal: AbortSignal, sendNow: (event: Record<string, unknown>) => void, task: Running): Promise<unknown> {
    const line = method === 'terminal/create' ? [params.command, ...((params.args as string[] | undefined) ?? [])].join(' ') : '';
    const timeoutMs = method === 'terminal/wait_for_exit' ? TERMINAL_WAIT_MS : TERMINAL_CALL_MS;
    const ending = await task.requests.ask<TerminalAnswer>({ timeoutMs, signal }, (id) =>
      sendNow({ status: 'in_progress', message: line ? 'Running a command in your terminal' : '', terminal: { request_id: id, method, params_json: JSON.stringify(params) } }),
    );
    if (!('answered' in ending)) throw new FileAccessError('aborted' in ending ? `${method}: the turn ended first` : `${method}: the editor did not answer within ${timeoutMs / 1000} s`);
    if (ending.answered.error) throw new FileAccessError(`${method}: ${ending.answered.error}`);
    return ending.answered.result_json ? JSON.parse(ending.answered.result_json) : {};
  }

  /**
   * In a task every permission request becomes a pending approval, announced to the caller in a
   * TaskEvent and decided by ApproveToolExecution / RejectToolExecution (by the caller that
   * started it, through any coordinator), by cancellation, or by APPROVAL_TIMEOUT_MS.
   */
  private taskSink(events: Omit<TurnSink, 'permission' | 'readFile' | 'writeFile'>, sendNow: (event: Record<string, unknown>) => void, task: Running, agent: string, turnTraceparent: string): Omit<TurnSink, 'readFile' | 'writeFile'> {
    const logger = this.options.logger;
    return {
      ...events,
      permission: async (request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision> => {
        const { risk, reasons } = assessCall(request, task.spec.cwd);
        let executionId = '';
        const waiting = tracer().start('buckley.approval', turnTraceparent, { 'buckley.tool': request.tool, 'buckley.risk': risk });
        await this.setState(task.taskId, { status: 'awaiting_approval' });
        const ending = await task.requests.ask<PermissionDecision>({ timeoutMs: APPROVAL_TIMEOUT_MS, signal }, (id) => {
          executionId = id;
          sendNow({
            status: 'awaiting_approval',
            message: `Waiting for approval: ${request.tool}`,
            approval: {
              execution_id: id,
              ...(request.toolCallId ? { tool_call_id: request.toolCallId } : {}),
              tool: request.tool,
              parameters: request.parameters,
              risk,
              agent_id: agent,
              title: request.title,
              reason: reasons.join('; '),
              kind: effectiveKind(request),
              locations: [...new Set([...request.locations, ...request.writes])],
              ...(request.diff ? { diff: request.diff.text, lines_added: request.diff.added, lines_removed: request.diff.removed } : {}),
            },
          });
        });
        await this.setState(task.taskId, { status: 'running' });
        const decision = 'answered' in ending && isDecision(ending.answered) ? ending.answered : 'reject';
        const why = 'answered' in ending ? '(decided by the editor)' : 'aborted' in ending ? '(task cancelled)' : `(no decision within ${APPROVAL_TIMEOUT_MS / 60_000} minutes)`;
        logger.info(`approval ${executionId} for ${request.tool} (${risk}): ${decision} ${why}`);
        waiting.set({ 'buckley.decision': decision, 'buckley.decided_by': 'answered' in ending ? 'editor' : 'aborted' in ending ? 'cancel' : 'timeout' });
        waiting.end();
        sendNow({ status: 'in_progress', message: `${decision === 'reject' ? 'Denied' : 'Approved'}: ${request.tool}` });
        return decision;
      },
    };
  }

  /**
   * Asks the caller for the editor's buffer of a file the agent reads (TaskEvent `file_request`):
   * its text when the file is open there, undefined when it is not, or when no answer comes
   * within FILE_REQUEST_TIMEOUT_MS (the disk is read then).
   */
  private async askEditor(read: FileReadRequest, signal: AbortSignal, sendNow: (event: Record<string, unknown>) => void, task: Running): Promise<string | undefined> {
    const ending = await task.requests.ask<FileContent>({ timeoutMs: FILE_REQUEST_TIMEOUT_MS, signal }, (id) =>
      sendNow({ status: 'in_progress', file_request: { request_id: id, path: read.path, line: read.line ?? 0, limit: read.limit ?? 0 } }),
    );
    if ('timedOut' in ending) this.options.logger.warn(`the editor did not answer for ${read.path} within ${FILE_REQUEST_TIMEOUT_MS / 1000} s: the agent reads it from disk`);
    if (!('answered' in ending) || !ending.answered.open) return undefined;
    if (ending.answered.error) throw new FileAccessError(ending.answered.error);
    return ending.answered.text;
  }

  /**
   * Has the caller make an approved write in the editor's buffer (TaskEvent `file_write`), where
   * the file is open there; fails when no answer comes within FILE_WRITE_TIMEOUT_MS — the buffer
   * may or may not have the change then, and the disk must not get it behind the editor's back.
   */
  private async writeInEditor(write: { path: string; base: string; content: string }, signal: AbortSignal, sendNow: (event: Record<string, unknown>) => void, task: Running): Promise<{ open: boolean; applied: boolean; message: string }> {
    const ending = await task.requests.ask<FileWritten>({ timeoutMs: FILE_WRITE_TIMEOUT_MS, signal }, (id) =>
      sendNow({ status: 'in_progress', message: `Writing ${write.path}`, file_write: { request_id: id, ...write } }),
    );
    if ('answered' in ending) return ending.answered;
    throw new FileAccessError('aborted' in ending ? `${write.path}: the turn ended before the editor made the change` : `${write.path}: the editor did not confirm the change within ${FILE_WRITE_TIMEOUT_MS / 1000} s`);
  }

  /** The agent's question, asked of the caller: the option chosen, the text typed, or undefined (declined, unanswered, the turn ended). */
  private async question(question: AgentQuestion, signal: AbortSignal, sendNow: (event: Record<string, unknown>) => void, task: Running): Promise<number | string | undefined> {
    const ending = await task.requests.ask<QuestionAnswer>({ timeoutMs: QUESTION_TIMEOUT_MS, signal }, (id) =>
      sendNow({ status: 'in_progress', message: `Question: ${question.message.replace(/\s+/g, ' ').slice(0, 200)}`, question: { request_id: id, message: question.message, options: question.options, input: question.input ?? '', url: question.url ?? '' } }),
    );
    if ('timedOut' in ending) this.options.logger.info(`no answer to "${question.message}" within ${QUESTION_TIMEOUT_MS / 60_000} minutes: declined`);
    return 'answered' in ending ? questionAnswer(question, ending.answered) : undefined;
  }
}

const isDecision = (answer: unknown): answer is PermissionDecision => answer === 'allow_once' || answer === 'allow_always' || answer === 'reject';

/** The state of a task just created. */
export function createdState(spec: TaskSpec, owner: string, seq: number): TaskState {
  return { owner, status: 'queued', title: titleOf(spec), seq, updatedAt: Date.now(), pending: [] };
}

export type { StoredRecord };
