/**
 * The agent's questions to the user (ACP `elicitation/create`, as elicitation.ts makes them a
 * choice): sent on the turn's stream as a `question` event to a caller that answers them (it says
 * so with QUESTIONS_HEADER), answered with AnswerQuestion. Unanswered, a question ends with the
 * turn or after QUESTION_TIMEOUT_MS: declined, never waited on for ever.
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../logger.js';
import type { QuestionAnswer } from '../wire/contract.js';
import { CallerRequests, type TurnCaller } from './callerRequests.js';
import { answerOf } from './callers.js';
import type { AgentQuestion } from './agents/driver.js';

/** As long as an approval may wait: the user may be away. */
export const QUESTION_TIMEOUT_MS = 15 * 60_000;
/** A typed answer, at most: an answer, not a document. */
const MAX_TYPED_CHARS = 10_000;

export class TurnQuestions {
  private readonly requests = new CallerRequests<QuestionAnswer>();

  constructor(private readonly logger: Logger) {}

  /**
   * The option the user chose (its index), or the text typed (a question with `input`), or
   * undefined: declined, dismissed, unanswered in time, or the turn ended.
   */
  async ask(question: AgentQuestion, signal: AbortSignal, turn: TurnCaller & { send: (event: Record<string, unknown>) => void }): Promise<number | string | undefined> {
    const ending = await this.requests.ask(turn, { timeoutMs: QUESTION_TIMEOUT_MS, signal }, (id) =>
      turn.send({ status: 'in_progress', message: `Question: ${question.message.replace(/\s+/g, ' ').slice(0, 200)}`, question: { request_id: id, message: question.message, options: question.options, input: question.input ?? '', url: question.url ?? '' } }),
    );
    if ('timedOut' in ending) this.logger.info(`no answer to "${question.message}" within ${QUESTION_TIMEOUT_MS / 60_000} minutes: declined`);
    if (!('answered' in ending)) return undefined;
    const { option, text } = ending.answered;
    if (question.input) return option === 0 && typeof text === 'string' ? text.slice(0, MAX_TYPED_CHARS) : undefined;
    return Number.isInteger(option) && option >= 0 && option < question.options.length ? option : undefined;
  }

  /** AnswerQuestion: only from the connection that started the turn. */
  readonly answer = (call: grpc.ServerUnaryCall<QuestionAnswer, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    callback(answerOf(this.requests, call, call.request.request_id, call.request, 'question', 'only the connection that started the turn can answer its questions'), {});
  };
}
