/**
 * The agent's questions (the coordinator's `question` events), put to the panel's user as ACP has
 * them asked: `elicitation/create` where the client takes it — a choice as a form of one field
 * picked from the options, a typed answer as a form of one text field, a web page in URL mode — or,
 * for a client without it, a choice as a permission request whose options are the choices. A
 * question the client has no way to show (a typed answer without forms) is declined at once, and
 * the log says what was asked: never a wait nobody can end.
 */
import type { CreateElicitationRequest, PermissionOption } from '@agentclientprotocol/sdk';
import type { Logger } from '../logger.js';
import type { Question } from '../wire/contract.js';
import type { EditorQuestions } from '../bridge/link/calls.js';
import type { Panel } from './panel.js';

const FIELD = 'answer';
const DECLINE = 'decline';

/** The panel's way of answering the session's questions. */
export function questionsOf(panel: Panel, sessionId: string, logger: Logger): EditorQuestions {
  return {
    async ask(question, ended) {
      if (question.url) return page(panel, sessionId, question, ended);
      if (panel.elicit) return form(panel.elicit, sessionId, question, ended);
      if (question.input) {
        logger.warn(`the agent asked "${question.message}" (${question.input}), to be typed; this client takes no forms (ACP elicitation): declined`);
        return undefined;
      }
      return choice(panel, sessionId, question, ended);
    },
  };
}

/** A choice or a typed answer, as a form of one field. */
async function form(elicit: NonNullable<Panel['elicit']>, sessionId: string, question: Question, ended: AbortSignal): Promise<number | string | undefined> {
  const field = question.input
    ? { type: 'string' as const, title: question.input }
    : { type: 'string' as const, title: 'Choose', oneOf: question.options.map((title, i) => ({ const: String(i), title })) };
  const request: CreateElicitationRequest = { sessionId, mode: 'form', message: question.message, requestedSchema: { type: 'object', properties: { [FIELD]: field }, required: [FIELD] } };
  const response = await elicit(request, ended);
  if (response?.action !== 'accept') return undefined;
  const value = (response as { content?: Record<string, unknown> | null }).content?.[FIELD];
  if (typeof value !== 'string') return undefined;
  if (question.input) return value;
  const index = Number(value);
  return Number.isInteger(index) && index >= 0 && index < question.options.length ? index : undefined;
}

/** A web page to open: URL mode where the client takes it, else a permission that shows the address. */
async function page(panel: Panel, sessionId: string, question: Question, ended: AbortSignal): Promise<number | undefined> {
  if (panel.elicitUrl && panel.elicit) {
    const response = await panel.elicit({ sessionId, mode: 'url', elicitationId: question.request_id, message: question.message, url: question.url }, ended);
    return response?.action === 'accept' ? 0 : undefined;
  }
  const options: PermissionOption[] = [
    { optionId: 'opened', name: `Opened ${hostOf(question.url)}`, kind: 'allow_once' },
    { optionId: DECLINE, name: 'Decline', kind: 'reject_once' },
  ];
  const chosen = await panel.askPermission({ sessionId, toolCall: { toolCallId: question.request_id, title: question.message, kind: 'fetch', status: 'pending', content: [{ type: 'content', content: { type: 'text', text: `Open ${question.url} in your browser, then choose "${options[0]!.name}".` } }] }, options }, ended);
  return chosen === 'opened' ? 0 : undefined;
}

/** A choice as a permission request: one option a choice, and Decline. */
async function choice(panel: Panel, sessionId: string, question: Question, ended: AbortSignal): Promise<number | undefined> {
  const options: PermissionOption[] = [...question.options.map((name, i) => ({ optionId: `choice-${i}`, name, kind: 'allow_once' as const })), { optionId: DECLINE, name: 'Decline', kind: 'reject_once' }];
  const chosen = await panel.askPermission({ sessionId, toolCall: { toolCallId: question.request_id, title: question.message, kind: 'other', status: 'pending' }, options }, ended);
  const index = chosen?.startsWith('choice-') ? Number(chosen.slice('choice-'.length)) : -1;
  return index >= 0 && index < question.options.length ? index : undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
