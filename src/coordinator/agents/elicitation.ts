/**
 * An agent's question to the user (ACP `elicitation/create`, form mode) as a choice the editor can
 * offer — a confirmation, yes or no, one of a list — or, where the caller takes typed answers,
 * one text or number field to type; asked through the turn (questions.ts) and answered as ACP
 * says. A form the editor cannot take (several fields, text where it cannot type) is declined at
 * once and the user told what was asked: never a wait nobody can end.
 */
import type * as acp from '@agentclientprotocol/sdk';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import type { ActiveTurn } from './acpSessions.js';

type Content = Record<string, string | number | boolean | string[]>;
interface Choice {
  label: string;
  content: Content;
}

const propertySchema = z.looseObject({
  type: z.string(),
  title: z.optional(z.nullable(z.string())),
  description: z.optional(z.nullable(z.string())),
  enum: z.optional(z.nullable(z.array(z.string()))),
  enumNames: z.optional(z.nullable(z.array(z.string()))),
  oneOf: z.optional(z.nullable(z.array(z.looseObject({ const: z.string(), title: z.optional(z.nullable(z.string())) })))),
});
const requestSchema = z.looseObject({
  sessionId: z.optional(z.string()),
  message: z.string(),
  mode: z.string(),
  requestedSchema: z.optional(z.nullable(z.looseObject({ properties: z.optional(z.nullable(z.record(z.string(), propertySchema))) }))),
  url: z.optional(z.nullable(z.string())),
});

/** The choices a form comes down to; undefined when it needs more than a choice. */
export function choicesOf(properties: Record<string, z.infer<typeof propertySchema>> | null | undefined): Choice[] | undefined {
  const entries = Object.entries(properties ?? {});
  if (entries.length === 0) return [{ label: 'OK', content: {} }];
  if (entries.length > 1) return undefined;
  const [name, property] = entries[0]!;
  if (property.type === 'boolean') {
    return [
      { label: 'Yes', content: { [name]: true } },
      { label: 'No', content: { [name]: false } },
    ];
  }
  if (property.type !== 'string') return undefined;
  if (property.oneOf?.length) return property.oneOf.map((option) => ({ label: option.title || option.const, content: { [name]: option.const } }));
  if (property.enum?.length) return property.enum.map((value, i) => ({ label: property.enumNames?.[i] || value, content: { [name]: value } }));
  return undefined;
}

/** One field to type (a string that is no choice, a number): its name, what it asks for, and its kind; undefined for any other form. */
export function typedFieldOf(properties: Record<string, z.infer<typeof propertySchema>> | null | undefined): { name: string; label: string; kind: 'string' | 'number' | 'integer' } | undefined {
  const entries = Object.entries(properties ?? {});
  if (entries.length !== 1) return undefined;
  const [name, property] = entries[0]!;
  if (property.type !== 'string' && property.type !== 'number' && property.type !== 'integer') return undefined;
  if (property.oneOf?.length || property.enum?.length) return undefined;
  return { name, label: property.title || property.description || name, kind: property.type };
}

/** The content of a typed answer, or why it is not one (a number field given words). */
function typedContent(field: NonNullable<ReturnType<typeof typedFieldOf>>, text: string): Content | string {
  if (field.kind === 'string') return { [field.name]: text };
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value) || (field.kind === 'integer' && !Number.isInteger(value))) return `"${text.slice(0, 40)}" is not ${field.kind === 'integer' ? 'a whole number' : 'a number'}`;
  return { [field.name]: value };
}

/** Answers `elicitation/create` with the user's choice, asked through the session's turn. */
export async function answerElicitation(params: unknown, turnOf: (sessionId: string) => ActiveTurn | undefined, agent: string, logger: Logger): Promise<acp.CreateElicitationResponse> {
  const parsed = requestSchema.safeParse(params);
  if (!parsed.success || !parsed.data.sessionId) {
    logger.info(`${agent} asked a question buckley-lsp cannot take (not a question of a session's turn): declined`);
    return { action: 'decline' };
  }
  const { sessionId, message, mode, requestedSchema } = parsed.data;
  const turn = turnOf(sessionId);
  if (!turn || turn.signal.aborted) return { action: 'cancel' };
  if (mode === 'url') return answerUrl(turn, message, parsed.data.url ?? '', agent, logger);
  const choices = mode === 'form' ? choicesOf(requestedSchema?.properties) : undefined;
  const typed = mode === 'form' && !choices && turn.sink.typedAnswers ? typedFieldOf(requestedSchema?.properties) : undefined;
  const said = `${agent} asked: "${message.replace(/\s+/g, ' ').slice(0, 200)}"`;
  if (!(choices || typed) || !turn.sink.question) {
    const why = !choices ? (mode === 'form' ? 'it needs typed input, which the editor cannot give' : `its "${mode}" mode is not one buckley-lsp takes`) : 'the editor cannot be asked';
    declined(turn, logger, `${said} — declined: ${why}; answer it in a follow-up`);
    return { action: 'decline' };
  }
  turn.deciding++;
  try {
    const answer = await turn.sink.question({ message, options: choices?.map((choice) => choice.label) ?? [], ...(typed ? { input: typed.label } : {}) }, turn.signal);
    if (turn.signal.aborted) return { action: 'cancel' };
    if (answer === undefined) {
      if (typed) declined(turn, logger, `${said} — no answer typed: answer it in a follow-up`);
      return { action: 'decline' };
    }
    if (typeof answer === 'number') return choices?.[answer] ? { action: 'accept', content: choices[answer].content } : { action: 'decline' };
    const content = typed ? typedContent(typed, answer) : 'no field to type';
    if (typeof content === 'string') {
      declined(turn, logger, `${said} — declined: ${content}`);
      return { action: 'decline' };
    }
    return { action: 'accept', content };
  } finally {
    turn.deciding--;
  }
}

/**
 * URL mode: the agent asks the user to open a web page (a login, a consent): "Open <host>" or
 * "Decline"; opened by the editor where chosen. Only http and https: anything else is declined.
 */
async function answerUrl(turn: ActiveTurn, message: string, url: string, agent: string, logger: Logger): Promise<acp.CreateElicitationResponse> {
  const said = `${agent} asked to open ${url.slice(0, 200)}: "${message.replace(/\s+/g, ' ').slice(0, 200)}"`;
  const page = webPage(url);
  if (!page || !turn.sink.question) {
    declined(turn, logger, `${said} — declined: ${page ? 'the editor cannot be asked' : 'it is not a web address (http or https)'}`);
    return { action: 'decline' };
  }
  turn.deciding++;
  try {
    const answer = await turn.sink.question({ message, options: [`Open ${page.host}`, 'Decline'], url: page.href }, turn.signal);
    if (turn.signal.aborted) return { action: 'cancel' };
    return answer === 0 ? { action: 'accept' } : { action: 'decline' };
  } finally {
    turn.deciding--;
  }
}

function webPage(url: string): URL | undefined {
  try {
    const page = new URL(url);
    return page.protocol === 'https:' || page.protocol === 'http:' ? page : undefined;
  } catch {
    return undefined;
  }
}

/** A question declined: the user is told (the turn's progress) and the log keeps it (progress lines pass). */
function declined(turn: ActiveTurn, logger: Logger, words: string): void {
  turn.sink.notice(words);
  logger.info(words);
}
