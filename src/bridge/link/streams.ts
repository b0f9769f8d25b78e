/**
 * A StreamTask run to its end: the events read in order, the answer's pieces joined, the
 * coordinator's questions about the editor's files answered on the side (a read gets the
 * buffer, an approved write is made in the editor), and one outcome — completed, failed (in
 * words, see failures.ts) or cancelled. A coordinator that lost the call before it delivered
 * anything gets it once more on a new session (session.ts).
 */
import type { Logger } from '../../logger.js';
import { selectLines } from '../../text.js';
import type { CoordinatorClient } from '../../wire/client.js';
import { MAX_READ_BYTES, tooBigToRead, type EditorContext, type FileContent, type FileRequest, type FileWrite, type Question, type TaskEvent } from '../../wire/contract.js';
import { isRefusal } from './identity.js';
import { failureOf, plainDetails, type FailureContext } from './failures.js';
import type { SessionKeeper } from './session.js';
import { FINAL_STATUSES } from '../../wire/contract.js';
import type { EditorFiles, EditorQuestions, StreamCall, StreamOutcome } from './calls.js';
import { CoordinatorError } from '../../wire/errors.js';
import { planSteps, Thinking, type PlanStep } from '../flows/plans.js';

export interface StreamRunner {
  keeper: SessionKeeper;
  logger: Logger;
  /** What the agent is asked, as this coordinator reads it (connection.ts). */
  messageFor(query: string, context: EditorContext, intent: StreamCall['intent']): string;
  /** The call's metadata: session, intent, conversation, trace. */
  metadata(intent: StreamCall['intent'], conversation?: string): Record<string, string>;
}

/** Runs a StreamTask to its end: what it gave, why it failed, or that it was cancelled; never throws. */
export async function runStream(runner: StreamRunner, call: StreamCall): Promise<StreamOutcome> {
  const read: StreamRead = { answer: '', lines: [], final: undefined, received: 0, thinking: new Thinking(), ended: new AbortController() };
  try {
    return await readStream(runner, call, read);
  } finally {
    // The turn is over: a question of its agent still open in the editor is gone.
    read.ended.abort();
  }
}

async function readStream(runner: StreamRunner, call: StreamCall, read: StreamRead): Promise<StreamOutcome> {
  const { keeper } = runner;
  try {
    await keeper.calling(
      call.signal,
      async (client) => {
        const request = { task_id: call.taskId, agent_id: keeper.identity.agentId, query: runner.messageFor(call.query, call.context, call.intent), context: call.context };
        const events = client.open.StreamTask(request, { timeoutMs: call.timeoutMs, signal: call.signal, metadata: runner.metadata(call.intent, call.conversation) });
        for await (const event of events) readEvent(runner, client, call, event, read);
      },
      // Nothing happened yet: connect anew and start it once more. Otherwise it failed midway.
      () => read.received === 0,
    );
  } catch (error) {
    if (call.signal.aborted) return { status: 'cancelled' };
    const context: FailureContext = { address: keeper.address!, identity: keeper.identity, call: 'stream', timeoutMs: call.timeoutMs, timeoutSetting: call.timeoutSetting };
    return { status: 'failed', failure: isRefusal(error) ? keeper.refused(error) : failureOf(error, context) };
  }
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
  /** The plan as the agent last sent it. */
  plan?: PlanStep[];
  thinking: Thinking;
  /** Aborted when the stream is over (its questions with it). */
  ended: AbortController;
}

function readEvent(
  runner: StreamRunner,
  client: CoordinatorClient,
  call: StreamCall,
  event: TaskEvent,
  read: StreamRead,
): void {
  read.received++;
  if (event.file_request) return provideFile(runner, client, event.file_request, call.files);
  if (event.file_write) makeWrite(runner, client, event.file_write, call.files);
  if (event.question) answerQuestion(runner, client, event.question, call.questions, read.ended.signal);
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

function detailsOf(error: unknown): string {
  return error instanceof CoordinatorError ? plainDetails(error.details) : String(error);
}
