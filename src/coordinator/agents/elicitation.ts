/**
 * An agent's question to the user (ACP `elicitation/create`, form mode) as a choice the editor can
 * offer — a confirmation, yes or no, one of a list — asked through the turn (questions.ts) and
 * answered as ACP says. A form an editor prompt cannot take (text to type, several fields) is
 * declined at once and the user told what was asked: never a wait nobody can end.
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
  enum: z.optional(z.nullable(z.array(z.string()))),
  enumNames: z.optional(z.nullable(z.array(z.string()))),
  oneOf: z.optional(z.nullable(z.array(z.looseObject({ const: z.string(), title: z.optional(z.nullable(z.string())) })))),
});
const requestSchema = z.looseObject({
  sessionId: z.optional(z.string()),
  message: z.string(),
  mode: z.string(),
  requestedSchema: z.optional(z.nullable(z.looseObject({ properties: z.optional(z.nullable(z.record(z.string(), propertySchema))) }))),
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
  const choices = mode === 'form' ? choicesOf(requestedSchema?.properties) : undefined;
  if (!choices || !turn.sink.question) {
    const why = !choices ? (mode === 'form' ? 'it needs typed input, which an editor prompt cannot take' : `its "${mode}" mode is not one buckley-lsp takes`) : 'the editor cannot be asked';
    turn.sink.notice(`${agent} asked: "${message.replace(/\s+/g, ' ').slice(0, 200)}" — declined: ${why}; answer it in a follow-up`);
    return { action: 'decline' };
  }
  turn.deciding++;
  try {
    const chosen = await turn.sink.question({ message, options: choices.map((choice) => choice.label) }, turn.signal);
    if (turn.signal.aborted) return { action: 'cancel' };
    return chosen === undefined ? { action: 'decline' } : { action: 'accept', content: choices[chosen]!.content };
  } finally {
    turn.deciding--;
  }
}
