/**
 * A StreamTask run to its end: the events read in order, the answer's pieces joined, the
 * coordinator's questions about the editor's files answered on the side (a read gets the
 * buffer, an approved write is made in the editor), and one outcome — completed, failed (in
 * words, see failures.ts) or cancelled. A coordinator that lost the call before it delivered
 * anything gets it once more on a new session (session.ts). On one whose tasks outlive their
 * streams (`task_events`) a task is cancelled with CancelTask, since the end of its stream does not
 * cancel it; and on a team's (`shared_tasks`) a task whose stream broke is followed again — on the
 * next replica, or the same one back — from the last event read: nothing missed, nothing twice.
 */
import type { Logger } from '../../logger.js';
import * as z from '../../schema.js';
import { selectLines } from '../../text.js';
import type { CoordinatorClient } from '../../wire/client.js';
import { DETACH_HEADER, MAX_READ_BYTES, TERMINALS_HEADER, taskEventSchema, tooBigToRead, type EditorContext, type FileContent, type FileRequest, type FileWrite, type Question, type TaskEvent, type TerminalCall } from '../../wire/contract.js';
import { isRefusal } from './identity.js';
import { failureOf, plainDetails, type FailureContext } from './failures.js';
import type { SessionKeeper } from './session.js';
import { FINAL_STATUSES } from '../../wire/contract.js';
import type { EditorFiles, EditorQuestions, EditorTerminals, StreamCall, StreamOutcome, WatchCall } from './calls.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import type { FeatureFlag } from '../../wire/features.js';
import { planSteps, Thinking, type PlanStep } from '../flows/plans.js';
import { brokeOff, followAgain } from './followAgain.js';
import { tracer } from '../../tracing.js';

export interface StreamRunner {
  keeper: SessionKeeper;
  logger: Logger;
  /** What the agent is asked, as this coordinator reads it (connection.ts). */
  messageFor(query: string, context: EditorContext, intent: StreamCall['intent']): string;
  /** The call's metadata: session, intent, conversation, and the trace it is part of. */
  metadata(intent: StreamCall['intent'], conversation?: string, traceparent?: string): Record<string, string>;
  /** What the coordinator offers. */
  offers(flag: FeatureFlag): boolean;
}

/** Runs a StreamTask to its end: what it gave, why it failed, or that it was cancelled; never throws. */
export async function runStream(runner: StreamRunner, call: StreamCall): Promise<StreamOutcome> {
  const read = newRead();
  // The editor's ask or task: the first span of its trace (the coordinator's, the agent's follow).
  const span = tracer().start(`buckley.${call.intent}`, undefined, { 'buckley.task_id': call.taskId });
  try {
    const outcome = await readStream(runner, call, read, (client) => {
      const { keeper } = runner;
      const request = { task_id: call.taskId, agent_id: keeper.identity.agentId, query: runner.messageFor(call.query, call.context, call.intent), context: call.context };
      // Its tasks outlive their streams: one that broke is followed again, one given up is cancelled.
      read.detached = runner.offers('taskEvents');
      const metadata = {
        ...runner.metadata(call.intent, call.conversation, span.traceparent),
        ...(read.detached ? { [DETACH_HEADER]: '1' } : {}),
        // Its agent's commands in the caller's terminals (an ACP panel), where the coordinator can.
        ...(call.terminals && runner.offers('clientTerminals') ? { [TERMINALS_HEADER]: '1' } : {}),
      };
      return client.open.StreamTask(request, { timeoutMs: call.timeoutMs, signal: call.signal, metadata });
    });
    span.set({ 'buckley.status': outcome.status });
    span.end(outcome.status === 'failed' ? outcome.failure.message : undefined);
    return outcome;
  } finally {
    span.end();
    // The turn is over: a question of its agent still open in the editor is gone.
    read.ended.abort();
    if (read.detached && !read.final) await cancelTask(runner, call.taskId);
  }
}

/**
 * Follows a task from its start to its end (SubscribeTaskEvents): a colleague's, watched — what
 * it gave, or why it failed; its requests (approvals, files, questions) are its caller's, not ours.
 */
export async function watchStream(runner: StreamRunner, call: WatchCall): Promise<StreamOutcome> {
  const read = newRead(true);
  try {
    return await readStream(runner, call, read, (client) =>
      client.open.SubscribeTaskEvents({ plan_id: '', task_ids: [call.taskId], from_sequence: 0 }, { timeoutMs: call.timeoutMs, signal: call.signal, metadata: runner.metadata('task') }),
    );
  } finally {
    read.ended.abort();
  }
}

const newRead = (watching = false): StreamRead => ({ answer: '', lines: [], final: undefined, received: 0, sequence: 0, detached: false, watching, thinking: new Thinking(), ended: new AbortController() });

async function readStream(runner: StreamRunner, call: WatchCall, read: StreamRead, open: (client: CoordinatorClient) => AsyncIterable<TaskEvent>): Promise<StreamOutcome> {
  const { keeper } = runner;
  const deadline = Date.now() + call.timeoutMs;
  let attempts = 0;
  try {
    await keeper.calling(
      call.signal,
      async (client) => {
        attempts++;
        for await (const event of open(client)) readEvent(runner, client, call, event, read);
      },
      // Nothing happened yet: connect anew and start it once more. Otherwise it failed midway.
      () => read.received === 0,
    );
  } catch (error) {
    if (call.signal.aborted) return { status: 'cancelled' };
    // Broken midway, on a team's coordinator: the task goes on there, and is followed again. So
    // is one started again after a break before its first event, that the first try had made
    // (the coordinator got it; only its stream was lost): its id is ours.
    const madeBefore = attempts > 1 && error instanceof CoordinatorError && error.code === Status.ALREADY_EXISTS;
    if (!runner.offers('sharedTasks') || !(madeBefore || (read.sequence > 0 && brokeOff(error)))) return failed(runner, call, error);
    try {
      const notice = (message: string) => call.onEvent?.(z.parse(taskEventSchema, { task_id: call.taskId, status: 'in_progress', message }));
      await followAgain({ runner, taskId: call.taskId, signal: call.signal, deadline, after: () => read.sequence, broke: error, notice }, (client, event) => readEvent(runner, client, call, event, read));
    } catch (again) {
      if (call.signal.aborted) return { status: 'cancelled' };
      return failed(runner, call, again);
    }
  }
  return outcomeOf(call, read);
}

/** How long a task given up waits for its coordinator to hear it is cancelled. */
const CANCEL_TIMEOUT_MS = 2_000;

/**
 * A task given up (cancelled, out of time, its stream lost for good): cancelled on its
 * coordinator. One that cannot be told is cancelled there once its caller has been gone a while.
 */
async function cancelTask(runner: StreamRunner, taskId: string): Promise<void> {
  const { keeper, logger } = runner;
  await keeper.client?.call.CancelTask({ task_id: taskId }, { timeoutMs: Math.min(keeper.callTimeoutMs, CANCEL_TIMEOUT_MS) }).catch((error: unknown) => logger.debug(`task ${taskId} could not be cancelled on the coordinator: ${detailsOf(error)}`));
}

function failed(runner: StreamRunner, call: WatchCall, error: unknown): StreamOutcome {
  const { keeper } = runner;
  const context: FailureContext = { address: keeper.address!, identity: keeper.identity, call: 'stream', timeoutMs: call.timeoutMs, timeoutSetting: call.timeoutSetting };
  return { status: 'failed', failure: isRefusal(error) ? keeper.refused(error) : failureOf(error, context) };
}

/** What a stream read to its end gave. */
function outcomeOf(call: WatchCall, read: StreamRead): StreamOutcome {
  if (call.signal.aborted || read.final?.status === 'cancelled') return { status: 'cancelled' };
  if (read.final?.status === 'failed') return { status: 'failed', failure: { message: read.final.message || 'the agent failed' } };
  // Buckley ends its stream without a final status and sends status lines only ("Planning task…",
  // "✅ Task completed"): they are its report, not an answer. An answer comes as answer_delta.
  const usage = read.final?.usage;
  const thinking = read.thinking.kept;
  return {
    status: 'completed',
    answer: read.answer,
    ...(read.lines.length ? { report: read.lines } : {}),
    ...(usage ? { usage } : {}),
    ...(read.plan?.length ? { plan: read.plan } : {}),
    ...(thinking ? { thinking } : {}),
  };
}

/** What a stream gave so far. */
interface StreamRead {
  answer: string;
  lines: string[];
  final: TaskEvent | undefined;
  received: number;
  /** The sequence number of the last event read (0: its coordinator does not number them). */
  sequence: number;
  /** Started detached (`task_events`): its stream's end does not cancel it. */
  detached: boolean;
  /** Someone else's task, watched: its requests are not ours to answer. */
  watching: boolean;
  /** The plan as the agent last sent it. */
  plan?: PlanStep[];
  thinking: Thinking;
  /** Aborted when the stream is over (its questions with it). */
  ended: AbortController;
}

function readEvent(runner: StreamRunner, client: CoordinatorClient, call: WatchCall & Partial<Pick<StreamCall, 'files' | 'questions' | 'terminals'>>, event: TaskEvent, read: StreamRead): void {
  read.received++;
  if (event.sequence > read.sequence) read.sequence = event.sequence;
  if (event.file_request) return read.watching ? undefined : provideFile(runner, client, event.file_request, call.files);
  if (event.file_write && !read.watching) makeWrite(runner, client, event.file_write, call.files);
  if (event.question && !read.watching) answerQuestion(runner, client, event.question, call.questions, read.ended.signal);
  if (event.terminal && !read.watching) runTerminal(runner, client, event.terminal, call.terminals);
  if (event.answer_delta) {
    read.answer += event.answer_delta;
    call.onDelta?.(event.answer_delta);
  }
  if (event.message) read.lines.push(event.message);
  if (event.plan) read.plan = planSteps(event.plan.entries);
  if (event.thought_delta) read.thinking.push(event.thought_delta);
  call.onEvent?.(event);
  if (FINAL_STATUSES.has(event.status)) read.final = event;
}

/**
 * Answers a coordinator's file_request with the editor's buffer (cut to the lines asked for),
 * or `open: false`: the coordinator then reads the disk. Not awaited: the stream reads on.
 */
function provideFile(runner: StreamRunner, client: CoordinatorClient, request: FileRequest, files: EditorFiles | undefined): void {
  const buffer = files?.buffer(request.path);
  if (buffer instanceof Promise) {
    buffer.then((got) => answerFile(runner, client, request, got), () => answerFile(runner, client, request, undefined));
    return;
  }
  answerFile(runner, client, request, buffer);
}

function answerFile(runner: StreamRunner, client: CoordinatorClient, request: FileRequest, buffer: { text: string; version: number } | undefined): void {
  const text = buffer ? selectLines(buffer.text, request.line, request.limit) : '';
  // Measured cheaply first: a UTF-16 unit is at most 3 bytes of UTF-8.
  const tooBig = text.length * 3 > MAX_READ_BYTES ? tooBigToRead(request.path, Buffer.byteLength(text, 'utf8'), request.limit) : undefined;
  const answer: FileContent = { request_id: request.request_id, open: buffer !== undefined, text: tooBig ? '' : text, version: buffer?.version ?? 0, ...(tooBig ? { error: tooBig } : {}) };
  runner.logger.debug(`the agent reads ${request.path}: ${buffer ? `the editor's buffer, version ${buffer.version}` : 'not open, from disk'}`);
  client.call.ProvideFile(answer, { timeoutMs: runner.keeper.callTimeoutMs }).catch((error: unknown) => {
    runner.logger.warn(`could not give the coordinator the buffer of ${request.path}: ${detailsOf(error)}`);
  });
}

/** Makes an approved write in the editor and tells the coordinator how it went. Not awaited. */
function makeWrite(runner: StreamRunner, client: CoordinatorClient, write: FileWrite, files: EditorFiles | undefined): void {
  const done = (outcome: { open: boolean; applied: boolean; message: string }) => client.call.ConfirmFileWrite({ request_id: write.request_id, ...outcome }, { timeoutMs: runner.keeper.callTimeoutMs });
  (files?.write(write) ?? Promise.resolve({ open: false, applied: false, message: '' }))
    .catch((error: unknown) => ({ open: true, applied: false, message: `the bridge failed to make it: ${(error as Error).message}` }))
    .then(done)
    .catch((error: unknown) => {
      runner.logger.warn(`could not tell the coordinator what became of the write of ${write.path}: ${detailsOf(error)}`);
    });
}

/** Asks the user the agent's question and gives the coordinator the answer (-1: declined). Not awaited. */
function answerQuestion(runner: StreamRunner, client: CoordinatorClient, question: Question, questions: EditorQuestions | undefined, ended: AbortSignal): void {
  (questions?.ask(question, ended) ?? Promise.resolve(undefined))
    .catch(() => undefined)
    // Once the turn is over the coordinator has ended the question: nothing to answer.
    .then((answer) => {
      if (ended.aborted) return undefined;
      const given = typeof answer === 'string' ? { option: 0, text: answer } : { option: answer ?? -1 };
      return client.call.AnswerQuestion({ request_id: question.request_id, ...given }, { timeoutMs: runner.keeper.callTimeoutMs });
    })
    .catch((error: unknown) => runner.logger.warn(`could not give the coordinator the answer to "${question.message.slice(0, 80)}": ${detailsOf(error)}`));
}

/** Makes the agent's terminal call in the caller's terminals and gives the coordinator the result, or why not. Not awaited. */
function runTerminal(runner: StreamRunner, client: CoordinatorClient, terminal: TerminalCall, terminals: EditorTerminals | undefined): void {
  const made = async (): Promise<unknown> => {
    if (!terminals) throw new Error('this editor runs no terminals');
    return terminals.call(terminal.method, terminal.params_json ? (JSON.parse(terminal.params_json) as Record<string, unknown>) : {});
  };
  made()
    .then(
      (result) => ({ request_id: terminal.request_id, result_json: JSON.stringify(result ?? {}), error: '' }),
      (error: unknown) => ({ request_id: terminal.request_id, result_json: '', error: (error as Error).message || String(error) }),
    )
    .then((answer) => client.call.AnswerTerminal(answer, { timeoutMs: runner.keeper.callTimeoutMs }))
    .catch((error: unknown) => runner.logger.warn(`could not give the coordinator the answer to its ${terminal.method}: ${detailsOf(error)}`));
}

function detailsOf(error: unknown): string {
  return error instanceof CoordinatorError ? plainDetails(error.details) : String(error);
}
