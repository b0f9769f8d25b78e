/**
 * An agent's question to the user (ACP `elicitation/create`, form mode) as choices the editor can
 * offer — a confirmation, yes or no, one of a list — or, where the caller takes typed answers, a
 * text or number field to type; a form of several fields one question each. URL mode: a web page
 * to open. Asked through the turn (questions.ts) and answered as ACP says. A form the editor
 * cannot take (text where it cannot type, several picks) is declined at once and the user told
 * what was asked: never a wait nobody can end.
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
  requestedSchema: z.optional(z.nullable(z.looseObject({ properties: z.optional(z.nullable(z.record(z.string(), propertySchema))), required: z.optional(z.nullable(z.array(z.string()))) }))),
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
function typedContent(field: TypedField, text: string): Content | string {
  if (field.kind === 'string') return { [field.name]: text };
  const value = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(value) || (field.kind === 'integer' && !Number.isInteger(value))) return `"${text.slice(0, 40)}" is not ${field.kind === 'integer' ? 'a whole number' : 'a number'}`;
  return { [field.name]: value };
}

type TypedField = NonNullable<ReturnType<typeof typedFieldOf>>;
/** One question of a form: a field's choice, or a field to type. */
type Step = { label: string; required: boolean } & ({ choices: Choice[]; typed?: undefined } | { typed: TypedField; choices?: undefined });

/**
 * The questions a form comes down to, one per field (a form of none: OK); undefined where a field
 * is neither a choice nor, where the caller takes typed answers, one to type.
 */
export function stepsOf(properties: Record<string, z.infer<typeof propertySchema>> | null | undefined, required: readonly string[], typedAnswers: boolean): Step[] | undefined {
  const entries = Object.entries(properties ?? {});
  if (entries.length === 0) return [{ label: '', required: true, choices: choicesOf({})! }];
  const steps: Step[] = [];
  for (const [name, property] of entries) {
    const one = { [name]: property };
    const choices = choicesOf(one);
    const typed = !choices && typedAnswers ? typedFieldOf(one) : undefined;
    const label = property.title || property.description || name;
    if (choices) steps.push({ label, required: required.includes(name), choices });
    else if (typed) steps.push({ label, required: required.includes(name), typed });
    else return undefined;
  }
  return steps;
}

/** A step's answer as the form's content, or why the form is declined (empty: dismissed, nothing to say). */
function contentOf(step: Step, answer: number | string | undefined): Content | string {
  if (answer === undefined) return step.typed ? 'no answer typed: answer it in a follow-up' : '';
  if (step.choices) return typeof answer === 'number' && step.choices[answer] ? step.choices[answer].content : '';
  return typeof answer === 'string' ? typedContent(step.typed, answer) : '';
}

/**
 * Answers `elicitation/create`: a form asked through the session's turn, one question per field
 * (several fields: "… — Size (1 of 2)"; an optional one dismissed is left out), its content
 * accepted once every field is answered; declined where a field cannot be asked or is not answered.
 */
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
  const steps = mode === 'form' ? stepsOf(requestedSchema?.properties, requestedSchema?.required ?? [], turn.sink.typedAnswers === true) : undefined;
  const said = `${agent} asked: "${message.replace(/\s+/g, ' ').slice(0, 200)}"`;
  if (!steps || !turn.sink.question) {
    const why = !steps ? (mode === 'form' ? 'it needs typed input, which the editor cannot give' : `its "${mode}" mode is not one buckley-lsp takes`) : 'the editor cannot be asked';
    declined(turn, logger, `${said} — declined: ${why}; answer it in a follow-up`);
    return { action: 'decline' };
  }
  turn.deciding++;
  try {
    const content: Content = {};
    for (const [index, step] of steps.entries()) {
      const asked = steps.length > 1 ? `${message} — ${step.label} (${index + 1} of ${steps.length})` : message;
      const answer = await turn.sink.question({ message: asked, options: step.choices?.map((choice) => choice.label) ?? [], ...(step.typed ? { input: step.typed.label } : {}) }, turn.signal);
      if (turn.signal.aborted) return { action: 'cancel' };
      const got = contentOf(step, answer);
      if (typeof got !== 'string') Object.assign(content, got);
      else if (answer === undefined && steps.length > 1 && !step.required) continue;
      else {
        if (got) declined(turn, logger, `${said} — ${answer === undefined ? '' : 'declined: '}${got}`);
        return { action: 'decline' };
      }
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
