/**
 * Asking about code: resolves what the question is about (document, selection), builds the
 * context, runs the ask on the coordinator with progress and cancellation, and delivers the
 * answer. Used by the `buckley/ask` request and, in the background, by the `buckley.ask`
 * command behind the code actions.
 */
import { randomUUID } from 'node:crypto';
import {
  ErrorCodes,
  ResponseError,
  type CancellationToken,
  type ProgressToken,
  type Range,
} from 'vscode-languageserver';
import type { Features } from '../capabilities.js';
import type { Config } from '../../config.js';
import type { AskCall, CoordinatorSession, EditorFiles, EditorQuestions, Outcome } from '../link/calls.js';
import { responseError, type Unfinished } from './outcomes.js';
import { FINAL_STATUSES } from '../../wire/contract.js';
import type { Logger } from '../../logger.js';
import { AskRequest, type AskResult } from '../protocol.js';
import { reportOnly, startOf, type Answer, type Answers } from '../stores/answers.js';
import { usageLine, type UsageTally } from './usage.js';
import { endLine, turnNotes, TurnSteps } from './plans.js';
import type { Limiter } from '../editor/limits.js';
import type { Targets, TargetInput } from './target.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import { inert, inline, isHighSurrogate, oneLine, utf8Length } from '../../text.js';
import { AnswerTail, type Progress, type ProgressFactory } from '../editor/progress.js';
import { earlierTurns, typedFollowUp, withUndone, type Conversations } from '../stores/conversations.js';


export interface AskInput extends TargetInput {
  question: string;
  /** The conversation to continue; none: a new one (an ask never mixes with another's history). */
  conversation?: string;
}

export interface AskOptions {
  token?: CancellationToken;
  workDoneToken?: ProgressToken;
  partialResultToken?: ProgressToken;
}

export interface AskDependencies {
  editor: EditorClient;
  answers: Answers;
  progress: ProgressFactory;
  logger: Logger;
  config(): Config;
  features(): Features;
  coordinator(): Promise<CoordinatorSession>;
  /** The editor's files as the agent reaches them. */
  files: EditorFiles;
  /** The agent's questions, put to the user. */
  questions: EditorQuestions;
  targets: Targets;
  limiter: Limiter;
  /** What the turns used and cost (for buckley/status). */
  usage: UsageTally;
  /** Told when a turn has ended, however it ended. */
  turnEnded(): void;
  conversations: Conversations;
  /** The text of a document open in the editor. */
  openText(uri: string): string | undefined;
  /** A follow-up of a task's conversation: a task too, in its agent session (tasks.ts). */
  continueTask(input: { task: string; conversation: string; uri?: string; range?: Range }): { taskId: string };
}

/** What `buckley.followUp` and `buckley.newConversation` take: the conversation (or its answer document), and the question. */
export interface FollowUpInput {
  conversation?: string;
  uri?: string;
  question?: string;
}

/** How an ask that did not complete is named to the editor. */
const ASK_WORDS = { failed: 'Buckley could not answer', cancelled: 'the ask was cancelled' };

export class AskService {
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly deps: AskDependencies) {}

  /** Runs an ask to its end: an answer, a ResponseError the user can act on, or cancellation. */
  async ask(request: AskInput, options: AskOptions = {}): Promise<AskResult> {
    const outcome = await this.answer(request, options);
    if (outcome.status !== 'completed') throw responseError(outcome, ASK_WORDS);
    return outcome.result;
  }

  /**
   * Runs an ask to its end: the result, why it failed (said once in the log and the progress), or
   * that it was cancelled. Throws only for a request that cannot be an ask (a bad URI, an unknown
   * conversation): the editor's mistake, not the coordinator's.
   */
  private async answer(request: AskInput, options: AskOptions = {}): Promise<Outcome<{ result: AskResult }>> {
    const { deps } = this;
    const config = deps.config();
    const features = deps.features();
    const input = this.continuing(request);
    const thread = input.conversation ? deps.conversations.get(input.conversation) : undefined;
    // Earlier turns get at most half the budget; the code and the question the rest.
    const earlier = thread ? earlierTurns(thread.turns, Math.floor(config.context.maxBytes / 2)) || undefined : undefined;
    const target = deps.targets.resolve(input, config, input.question, earlier ? utf8Length(earlier) + 100 : 0);
    const release = deps.limiter.acquire(`the ask "${oneLine(input.question, 40)}"`);

    const id = randomUUID();
    const conversation = input.conversation ?? randomUUID();
    const controller = new AbortController();
    this.running.set(id, controller);
    const onCancel = options.token?.onCancellationRequested(() => controller.abort());

    const progress = deps.progress.begin({
      title: input.question,
      kind: 'ask',
      clientToken: options.workDoneToken,
      workDoneProgress: features.workDoneProgress,
    });
    progress.onCancel(() => controller.abort());
    const releasePending = target.document && target.range ? deps.answers.markPending(target.document.uri, target.range, input.question) : () => {};

    try {
      const coordinator = await deps.coordinator();
      // What the user undid of the agent's changes since its last turn here, told after the question (not with an agent's /command).
      const undone = input.conversation && !input.question.trimStart().startsWith('/') ? deps.conversations.takeUndone(conversation) : [];
      const outcome = await coordinator.ask({
        question: withUndone(input.question, undone),
        conversation,
        ...(earlier ? { earlier } : {}),
        timeoutMs: config.ask.timeoutMs,
        context: target.built.context,
        signal: controller.signal,
        requireReadOnly: config.ask.requireReadOnly,
        files: deps.files,
        questions: deps.questions,
        ...this.shown(progress, options.partialResultToken),
      });
      if (outcome.status !== 'completed') {
        // Not answered: the next turn tells it again.
        deps.conversations.noteUndone(conversation, undone);
        return this.unfinished(outcome, input.question, progress);
      }
      // Where it sent no answer, only what it did, that is its report.
      const reported = !outcome.answer.trim() && outcome.report?.length ? outcome.report : undefined;
      const used = usageLine(outcome.usage);
      deps.usage.add(outcome.usage, conversation);
      progress.done(reported ? 'No answer: see its report' : endLine('Answered', outcome.plan, used));
      releasePending();
      const answer = reported ? reportOnly(reported) : outcome.answer;
      const notes = turnNotes(outcome);
      const delivered = this.deliver(
        { question: input.question, answer, ...(reported ? { report: true } : {}), ...(used ? { usage: used } : {}), ...(notes ? { notes } : {}), uri: target.document?.uri, range: target.range, conversation },
        thread?.document,
      );
      const references = target.document && target.range ? [{ uri: target.document.uri, range: target.range, title: 'Asked about' }] : undefined;
      // With a partial-result token the answer went out in pieces; the final result repeats none of it.
      const result = { answer: options.partialResultToken !== undefined ? '' : resultAnswer(delivered.answer), ...(references ? { references } : {}), conversation };
      return { status: 'completed', result: reported ? { ...result, report: true } : result };
    } catch (error) {
      // Not the coordinator's failure (it says those in its outcome): a fault of ours, said as one.
      return this.unfinished({ status: 'failed', failure: { message: `unexpected failure: ${(error as Error).message}` } }, input.question, progress);
    } finally {
      deps.turnEnded();
      releasePending();
      release();
      onCancel?.dispose();
      this.running.delete(id);
    }
  }

  /** How the ask shows while it runs: its steps as progress, its words as they come (partial results, where asked for). */
  private shown(progress: Progress, partialResultToken: ProgressToken | undefined): Pick<AskCall, 'onEvent' | 'onDelta'> {
    const written = new AnswerTail();
    const steps = new TurnSteps();
    return {
      onEvent: (event) => {
        // The final state is the progress's end ("Answered", "Failed: …"), not a step before it.
        if (FINAL_STATUSES.has(event.status)) return;
        const tool = event.tool_executions.at(-1);
        // The plan's step says most; then the tool call; then the thinking or the coordinator's words.
        const step = steps.of(event);
        const line = event.plan && step ? step.line : tool ? `${tool.tool} (${tool.status})` : (step?.line ?? event.message);
        if (line) progress.report(line, step?.percentage ?? (event.progress || undefined));
      },
      onDelta: (delta) => {
        progress.writing(written.push(delta));
        if (partialResultToken !== undefined) for (const piece of piecesOf(inert(delta))) this.deps.editor.progress(AskRequest.partialResult, partialResultToken, { answer: piece });
      },
    };
  }

  /** The answer delivered (a follow-up's below its question in the conversation's document) and kept in its conversation. */
  private deliver(answer: Omit<Answer, 'at' | 'documentUri'> & { conversation: string }, document: string | undefined): Answer {
    const { answers, conversations, features } = this.deps;
    const { conversation } = answer;
    const delivered = answers.deliver(answer, features(), 'answered', { appendTo: document, documented: (uri) => conversations.setDocument(conversation, uri) });
    conversations.record(conversation, { question: delivered.question, answer: delivered.answer }, { uri: answer.uri, range: answer.range });
    return delivered;
  }

  /** An ask that did not complete: its progress ends saying so, and a failure is logged in full. */
  private unfinished(outcome: Unfinished, question: string, progress: Progress): Unfinished {
    if (outcome.status === 'cancelled') {
      progress.done('Cancelled');
      return outcome;
    }
    const { message, summary } = outcome.failure;
    progress.done(`Failed: ${oneLine(summary ?? message, 50)}`);
    this.deps.logger.error(`ask "${question}" failed: ${inline(message)}`);
    return outcome;
  }

  /**
   * An ask made in a conversation's answer document (a code action there, `buckley.ask` with its
   * URI) continues that conversation, about the code it started from: the answer document is not
   * the code asked about.
   */
  private continuing(input: AskInput): AskInput {
    const { conversations, targets } = this.deps;
    const thread = input.conversation ? conversations.get(input.conversation) : input.uri ? conversations.ofDocument(input.uri) : undefined;
    // Only a conversation of ours is continued: an id it never gave (made up) would share an agent session unasked.
    if (input.conversation && !thread) throw unknownConversation(input.conversation);
    if (!thread) return input;
    const asked = input.uri && !conversations.ofDocument(input.uri) ? input : { ...input, uri: undefined, range: undefined, text: undefined };
    // The code it started from, where the editor still has it open (the agent may not hold the first turn any more).
    const code = !asked.uri && thread.uri && targets.isOpen(thread.uri) ? { uri: thread.uri, range: thread.range } : {};
    return { ...asked, ...code, conversation: thread.id };
  }

  /**
   * `buckley.followUp`: the question (else the one written below the follow-up line of the answer
   * document) asked in the conversation; `fresh`: in a new one about the same code ("Buckley: new
   * conversation"). Answers at once; the answer is appended to the document (fresh: a new one).
   */
  followUp(input: FollowUpInput, fresh = false): { started: boolean; conversation?: string } {
    const { conversations } = this.deps;
    const thread = input.conversation ? conversations.get(input.conversation) : input.uri ? conversations.ofDocument(input.uri) : undefined;
    if (!thread) {
      if (input.conversation) throw unknownConversation(input.conversation);
      throw new ResponseError(ErrorCodes.InvalidParams, `${input.uri ?? 'this document'} is not a Buckley answer document: follow up in the document an answer opened, or ask from the code`);
    }
    const text = thread.document ? this.deps.openText(thread.document) : undefined;
    const question = input.question?.trim() || (text !== undefined ? typedFollowUp(text) : undefined);
    if (!question) {
      throw new ResponseError(ErrorCodes.InvalidParams, 'no question: write it below the last line of the answer document ("Follow up: …"), then run "Buckley: follow up" again');
    }
    const code = thread.uri && this.deps.targets.isOpen(thread.uri) ? { uri: thread.uri, range: thread.range } : {};
    if (fresh) {
      this.askInBackground({ question, ...code });
      return { started: true };
    }
    if (thread.task) {
      this.deps.continueTask({ task: question, conversation: thread.id, ...code });
      return { started: true, conversation: thread.id };
    }
    this.askInBackground({ question, conversation: thread.id });
    return { started: true, conversation: thread.id };
  }

  /**
   * For commands and code actions: answer the command at once and ask in the background.
   * Failures reach the user as a one-line message (and the log).
   */
  askInBackground(input: AskInput): void {
    const { editor } = this.deps;
    const couldNot = () => messages.error(editor, messages.fit('could not answer «', input.question, '» (see log)'));
    this.answer(input).then((outcome) => {
      if (outcome.status === 'cancelled') messages.info(editor, messages.fit('cancelled «', input.question, '»'));
      // The message says what to do; the log has it all.
      else if (outcome.status === 'failed') outcome.failure.summary ? messages.error(editor, `could not answer: ${outcome.failure.summary}`) : couldNot();
    }, couldNot);
  }

  /** Cancels every ask in flight (shutdown). */
  cancelAll(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  get inFlight(): number {
    return this.running.size;
  }
}

function unknownConversation(id: string): ResponseError<void> {
  return new ResponseError(ErrorCodes.InvalidParams, `no conversation ${id}: it is not one of the conversations kept (buckley.conversations lists them); ask again from the code`);
}

/**
 * The most of an answer one message to the editor carries. Its replies share one pipe in order: a
 * 20 MB result held every hover sent meanwhile until the editor had read and parsed it (1.6–2 s
 * in Neovim). The answer document has the whole answer.
 */
const RESULT_ANSWER_CHARS = 1024 * 1024;
/** A partial result's piece at most: a huge delta goes out in pieces, replies between them. */
const PIECE_CHARS = 64 * 1024;

/** The answer as the ask's result carries it: the start of a huge one, and where the rest is. */
export function resultAnswer(answer: string): string {
  if (answer.length <= RESULT_ANSWER_CHARS) return answer;
  const start = startOf(answer, RESULT_ANSWER_CHARS);
  return `${start}\n\n… ${(answer.length - start.length).toLocaleString('en')} more characters: the whole answer is in its answer document (buckley.answers.directory)`;
}

/** A delta in pieces of at most PIECE_CHARS, never splitting a surrogate pair. */
export function piecesOf(text: string): string[] {
  if (text.length <= PIECE_CHARS) return [text];
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + PIECE_CHARS, text.length);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    pieces.push(text.slice(at, end));
    at = end;
  }
  return pieces;
}
