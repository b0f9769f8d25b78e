/**
 * The agent's questions to the user (ACP `elicitation/create`, as elicitation.ts makes them a
 * choice): sent on the task's stream as a `question` event to a caller that answers them (it says
 * so with QUESTIONS_HEADER), answered with AnswerQuestion (tasks/runner.ts). Unanswered, a
 * question ends with the turn or after QUESTION_TIMEOUT_MS: declined, never waited on for ever.
 */
import type { QuestionAnswer } from '../wire/contract.js';
import type { AgentQuestion } from './agents/driver.js';

/** As long as an approval may wait: the user may be away. */
export const QUESTION_TIMEOUT_MS = 15 * 60_000;
/** A typed answer, at most: an answer, not a document. */
const MAX_TYPED_CHARS = 10_000;

/** The option the user chose (its index), or the text typed (a question with `input`); undefined for what answers neither. */
export function questionAnswer(question: AgentQuestion, answer: QuestionAnswer): number | string | undefined {
  const { option, text } = answer;
  if (question.input) return option === 0 && typeof text === 'string' ? text.slice(0, MAX_TYPED_CHARS) : undefined;
  return Number.isInteger(option) && option >= 0 && option < question.options.length ? option : undefined;
}
