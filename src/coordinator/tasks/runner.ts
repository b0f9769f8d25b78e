/**
 * Runs the tasks a coordinator takes from the work queue (store.ts): each one's agent turn, with
 * what it does recorded on the task's stream — progress batched (batcher.ts), the answer in
 * pieces, tool calls, approvals asked and decided, the editor's buffers and writes asked of the
 * caller, the agent's questions — and its one final state. Replies come back on the same stream,
 * whichever coordinator took them (requests.ts); so does a cancel.
 *
 * A task handed out again (its coordinator died while running it) is taken up where its agent can
 * load its session, else ends failed, in words; one whose coordinator is in fact still at it is
 * waited for (hold.ts: at most one run holds a task, and only its records are stored); a task
 * already over is left.
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
import { outsideRoots, turnOf, type TaskSpec } from './spec.js';
import { Superseded, Unreadable, type Job, type StoredRecord, type TaskEngine } from './store.js';
import { HEARTBEAT_MS, settleState, takeHold, type Hold } from './hold.js';
import { CALLER_GRACE_MS, callerAbsence, callerGone } from './absence.js';
import { Failure, taskSender, type FinalStatus, type Send } from './sender.js';

/** How long the caller may take to answer a file_request before the disk is read instead. */
export const FILE_REQUEST_TIMEOUT_MS = 10_000;
/** How long the caller may take to make an approved write in the editor (it answers at once). */
export const FILE_WRITE_TIMEOUT_MS = 30_000;
/** A coordinator-side limit, so a task whose approval nobody answers never waits forever. */
export const APPROVAL_TIMEOUT_MS = 15 * 60_000;

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


/** One running task's handle: how it records, what it asks, when it is cancelled. */
interface Running {
  taskId: string;
  spec: TaskSpec;
  owner: string;
  /** Its run's hold on it: the state changes it makes. */
  hold: Hold;
  send: Send;
  requests: TaskRequests;
  signal: AbortSignal;
  /** The task's span: its turn's is a child. */
  traceparent: string;
  /** The agent's session of the coordinator that ran it and stopped, taken up again here. */
  resume?: string;
}

/** How long a terminal call may take in the client (output, kill, release, create); waiting for a command's exit, at most as long as a task. */
const TERMINAL_CALL_MS = 30_000;
const TERMINAL_WAIT_MS = 60 * 60_000;

/** A task whose request its coordinator cannot read (the store lost it, or never had it whole). */
export const UNREADABLE = 'the coordinator that took this task could not read it from the team\'s store (NATS): run it again';

/** What an agent taking up a task again is told, before the task. */
const TAKEN_UP = '(This task was interrupted: the coordinator running it stopped, and another took it up. Where you already did part of it, go on from where you were, without doing again what is done.)';

/** Why a coordinator that stops aborts its tasks' turns. */
const SHUTDOWN = 'the coordinator running it stopped: run it again';

/** Why the tasks running here fail when the team's store was away too long. */
const storeLost = (where: string, patienceMs: number) =>
  `the team's store (${where}) could not be reached for ${Math.round(patienceMs / 1000)} s, so this task could not be recorded and was stopped: run it again once NATS is back`;

export class TaskRunner {
  /** The turns running here, to end when this coordinator stops. */
  private readonly running = new Map<AbortController, Promise<void>>();
  /** The tasks run here, each by its run: a job handed out again for one of them waits for it. */
  private readonly here = new Map<string, Promise<void>>();
  /** Aborted when this coordinator stops: nothing more is taken. */
  private readonly stopping = new AbortController();

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
    this.stopping.abort();
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

  private async run(job: Job): Promise<'let go' | void> {
    const here = this.here.get(job.taskId);
    if (here) {
      this.options.logger.info(`task ${job.taskId}: handed out again while it runs here (NATS was away past the lease): it goes on here`);
      return void (await here);
    }
    // From now on, the task handed out here again waits for this.
    const taking = this.take(job);
    const settled = taking.then(() => undefined, () => undefined);
    this.here.set(job.taskId, settled);
    try {
      return await taking;
    } finally {
      if (this.here.get(job.taskId) === settled) this.here.delete(job.taskId);
    }
  }

  private async take(job: Job): Promise<'let go' | void> {
    const { engine, logger } = this.options;
    const records = await this.recordsOf(job.taskId);
    if (records.some((record) => record.final)) return;
    const controller = new AbortController();
    const created = records.find((record) => record.created)?.created;
    // Its caller waits on its stream: told at once, not at its deadline.
    if (!created) return this.end(job.taskId, this.sender(job.taskId, undefined, controller), 'failed', UNREADABLE);
    // At most one run holds a task: where another coordinator's is alive, this one waits, out of
    // the count of tasks running here (it takes the task up if that one dies).
    const hold = await takeHold(engine.states, job.taskId, this.options.replica, this.stopping.signal, (holder) => {
      logger.info(`task ${job.taskId}: handed out again while ${holder} runs it: taken up here only if ${holder} stops`);
      job.idle?.();
    }).catch((error: unknown) => {
      // Its state not in the form a coordinator writes: no run can hold it, and its caller waits.
      if (!(error instanceof Unreadable)) throw error;
      logger.warn(`task ${job.taskId}: ${error.message}`);
      return 'unknown' as const;
    });
    if (!hold) return;
    // Its caller waits on its stream: told at once, not at its deadline.
    if (hold === 'unknown') return this.end(job.taskId, this.sender(job.taskId, undefined, controller), 'failed', UNREADABLE);
    const send = this.sender(job.taskId, hold, controller);
    if (!(await this.begin(hold))) return;
    await this.runHeld(job.taskId, records, created, hold, send, controller);
    // Taken up by another: its job is theirs now.
    return controller.signal.reason instanceof Superseded ? 'let go' : undefined;
  }

  /** The run's `started` record: false where the task ended meanwhile (its state is then set as its stream says). */
  private async begin(hold: Hold): Promise<boolean> {
    try {
      await this.options.engine.log.append(hold.taskId, { run: hold.run, started: { replica: this.options.replica } });
      return true;
    } catch (error) {
      if (!(error instanceof Superseded)) throw error;
      const ended = (await this.options.engine.log.read(hold.taskId)).find((record) => record.final)?.final;
      if (ended) await settleState(this.options.engine.states, hold.taskId, ended);
      return false;
    }
  }

  private sender(taskId: string, hold: Hold | undefined, controller: AbortController): Send {
    return taskSender(this.options.engine.log, this.options.logger, taskId, hold, controller, (why) => this.lose(taskId, hold, controller, why));
  }

  /** Another run holds the task now (this coordinator was cut off from NATS, or paused, past its lease): the turn here stops, said once. */
  private lose(taskId: string, hold: Hold | undefined, controller: AbortController, why: Superseded): void {
    if (controller.signal.aborted && controller.signal.reason instanceof Superseded) return;
    this.options.logger.warn(`task ${taskId}: taken up by ${hold?.lost ?? 'another coordinator'} while this one could not reach NATS: its turn here stops, and nothing more of it is recorded here`);
    controller.abort(why);
  }

  /** A task this run holds: its turn, from where its records stand, with its heartbeat. */
  private async runHeld(taskId: string, records: StoredRecord[], created: NonNullable<StoredRecord['created']>, hold: Hold, send: Send, controller: AbortController): Promise<void> {
    // Handed out again: its coordinator stopped. Taken up where its agent can load its session, else over.
    let resume: string | undefined;
    if (records.some((record) => record.started)) {
      resume = this.resumable(records);
      if (!resume) return this.end(taskId, send, 'failed', SHUTDOWN);
    }
    if (records.some((record) => record.reply?.id === 'cancel')) return this.end(taskId, send, 'cancelled', 'Task cancelled');
    // Taken by a replica that does not serve its workspace (another of the team's gateways let it in).
    const outside = outsideRoots(this.options.roots, created.spec.cwd, `replica ${this.options.replica}`);
    if (outside) return this.end(taskId, send, 'failed', outside);
    const absence = callerAbsence(controller, this.graceMs);
    for (const record of records) absence.note(record);
    if (absence.goneFor() >= this.graceMs) return this.end(taskId, send, 'cancelled', callerGone(this.graceMs));
    const requests = new TaskRequests(taskId, this.options.engine, hold.run);
    // Replies, a cancel, its caller gone and back, from any coordinator: this task's stream, from here on.
    const listening = this.listen(taskId, records.at(-1)!.seq + 1, requests, controller, absence);
    const heartbeat = setInterval(() => void hold.update({}).then((held) => held || this.lose(taskId, hold, controller, new Superseded(taskId)), () => undefined), HEARTBEAT_MS);
    heartbeat.unref();
    const span = tracer().start('buckley.task', created.spec.traceparent, { 'buckley.task_id': taskId, 'buckley.intent': created.spec.intent, 'buckley.replica': this.options.replica });
    // Its one final event ends its span, saying how it ended.
    const traced: Send = Object.assign((event: Record<string, unknown>, final?: FinalStatus) => {
      if (typeof event.status === 'string' && FINAL_STATUSES.has(event.status)) {
        span.set({ 'buckley.status': event.status });
        span.end(event.status === 'failed' ? String(event.message) : undefined);
      }
      return send(event, final);
    }, { settled: send.settled });
    const work = this.turn({ taskId, spec: created.spec, owner: created.owner, hold, send: traced, requests, signal: controller.signal, traceparent: span.traceparent, ...(resume ? { resume } : {}) });
    this.running.set(controller, work);
    try {
      await work;
    } catch (error) {
      // A fault of ours while running it (the agent's failures end it in words in turn()): it
      // ends all the same, its caller told — never left following a task that nothing runs.
      this.options.logger.warn(`task ${taskId}: ${(error as Error).stack ?? String(error)}`);
      await this.end(taskId, send, 'failed', `${this.options.replica} could not run the task, a fault of buckley-lsp (${(error as Error).message}): its log says more; run it again, and report it if it comes back`);
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

  private get graceMs(): number {
    return this.options.callerGraceMs ?? CALLER_GRACE_MS;
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

  /** The task's one final state, with its event. */
  private async end(taskId: string, send: Send, status: FinalStatus, message: string, extra: Record<string, unknown> = {}): Promise<void> {
    // An event the store refused while the turn ended (its last piece, sent in the background) is a hole in the task's story: it fails.
    const failure = status === 'failed' ? undefined : await send.settled();
    const ending = failure ? { status: 'failed' as const, message: failure.message, extra: {} } : { status, message, extra };
    // Stored, it is the task's end (no other run can store one now): its state says so, whoever holds it.
    if (await send({ status: ending.status, message: ending.message, ...ending.extra }, ending.status)) await settleState(this.options.engine.states, taskId, ending.status);
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
    // Taken up again: news of a task under way; starting: a wait.
    task.send(task.resume ? { status: 'in_progress', message: `Taken up again by ${this.options.replica}: the coordinator running it stopped` } : { status: 'pending', message: `Starting ${driver.shortName}…` });
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
        void this.options.engine.log.append(task.taskId, { run: task.hold.run, started }).catch((error: unknown) => this.options.logger.warn(`task ${task.taskId}: its agent's session was not stored: ${(error as Error).message}`));
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
        await task.hold.update({ status: 'awaiting_approval' });
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
        await task.hold.update({ status: 'running' });
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

export type { StoredRecord };
