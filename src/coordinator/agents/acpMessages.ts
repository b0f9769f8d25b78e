/**
 * What the ACP driver reads of an agent's messages, checked at the boundary with narrow schemas
 * (updates are taken off the agent's output before the SDK: updateStream.ts), and what it makes
 * of them: the facts of a tool call, gathered from every update that names it, for judging its
 * permission request; the option that carries a decision.
 */
import type * as acp from '@agentclientprotocol/sdk';
import * as z from '../../schema.js';
import type { FileEdit, PermissionDecision, TurnResult } from './driver.js';

const notificationOf = <Update extends z.core.$ZodShape>(update: Update) => z.object({ sessionId: z.string(), update: z.object(update) });
const toolCallFields = {
  toolCallId: z.string(),
  title: z.nullish(z.string()),
  status: z.nullish(z.string()),
  kind: z.nullish(z.string()),
  rawInput: z.optional(z.unknown()),
  locations: z.nullish(z.array(z.object({ path: z.string() }))),
  content: z.nullish(
    z.array(
      z.object({
        type: z.string(),
        path: z.optional(z.string()),
        oldText: z.nullish(z.string()),
        newText: z.optional(z.string()),
        terminalId: z.optional(z.string()),
        content: z.optional(z.unknown()),
      }),
    ),
  ),
};
const toolUpdate = notificationOf({
  sessionUpdate: z.enum(['tool_call', 'tool_call_update']),
  ...toolCallFields,
  rawOutput: z.optional(z.unknown()),
});
/** The tool call of a permission request, read the same way (the SDK checked it against ACP). */
export const permissionToolCall = z.object(toolCallFields);
export type ToolCallFields = z.infer<typeof permissionToolCall>;

/** ACP fs/write_text_file, as far as we read it. */
export const writeTextFileParams = z.object({ sessionId: z.string(), path: z.string().check(z.minLength(1)), content: z.string() });

/** ACP fs/read_text_file, as far as we read it. */
export const readTextFileParams = z.object({
  sessionId: z.string(),
  path: z.string().check(z.minLength(1)),
  line: z.optional(z.nullable(z.int().check(z.minimum(1)))),
  limit: z.optional(z.nullable(z.int().check(z.minimum(1)))),
});

const textChunk = z.object({ type: z.string(), text: z.optional(z.string()) });
const updateSchemas = {
  agent_message_chunk: notificationOf({ sessionUpdate: z.literal('agent_message_chunk'), content: textChunk }),
  agent_thought_chunk: notificationOf({ sessionUpdate: z.literal('agent_thought_chunk'), content: textChunk }),
  tool_call: toolUpdate,
  tool_call_update: toolUpdate,
  plan: notificationOf({ sessionUpdate: z.literal('plan'), entries: z.array(z.object({ content: z.string(), status: z.string(), priority: z.nullish(z.string()) })) }),
  current_mode_update: notificationOf({ sessionUpdate: z.literal('current_mode_update'), currentModeId: z.string() }),
  config_option_update: notificationOf({ sessionUpdate: z.literal('config_option_update'), configOptions: z.array(z.unknown()) }),
  usage_update: notificationOf({
    sessionUpdate: z.literal('usage_update'),
    used: z.number().check(z.nonnegative()),
    size: z.number().check(z.nonnegative()),
    cost: z.nullish(z.object({ amount: z.number(), currency: z.string() })),
  }),
  available_commands_update: notificationOf({
    sessionUpdate: z.literal('available_commands_update'),
    availableCommands: z.array(z.object({ name: z.string(), description: z.nullish(z.string()), input: z.nullish(z.object({ hint: z.nullish(z.string()) })) })),
  }),
};
const otherUpdate = z.pipe(z.object({ sessionId: z.string() }), z.transform((notification) => ({ ...notification, update: { sessionUpdate: 'other' as const } })));
export type SessionUpdate = z.infer<(typeof updateSchemas)[keyof typeof updateSchemas]> | z.infer<typeof otherUpdate>;

/** What is read of an update, checked; undefined (and ignored) when it is not what ACP says. */
export function parseSessionUpdate(params: unknown): SessionUpdate | undefined {
  const kind = (params as { update?: { sessionUpdate?: unknown } } | null)?.update?.sessionUpdate;
  const schema = typeof kind === 'string' && Object.hasOwn(updateSchemas, kind) ? updateSchemas[kind as keyof typeof updateSchemas] : otherUpdate;
  const parsed = schema.safeParse(params);
  return parsed.success ? parsed.data : undefined;
}

/** What the agent said about a tool call so far, for judging its permission request. */
export interface CallFacts {
  title?: string;
  kind?: string;
  input?: unknown;
  locations: string[];
  writes: string[];
  /** The changes it shows (ACP `diff` content), latest per file. */
  diffs: FileEdit[];
  /** Terminals it runs in (ACP `terminal` content). */
  terminals: string[];
}

/** Adds what an update says about a tool call to what is known of it; returns the whole. */
export function rememberCall(calls: Map<string, CallFacts>, update: ToolCallFields): CallFacts {
  const known = calls.get(update.toolCallId) ?? { locations: [], writes: [], diffs: [], terminals: [] };
  const content = update.content ?? [];
  const diffs = content.flatMap((item) => (item.type === 'diff' && item.path && item.newText !== undefined ? [{ path: item.path, oldText: item.oldText ?? undefined, newText: item.newText }] : []));
  const facts: CallFacts = {
    title: update.title ?? known.title,
    kind: update.kind ?? known.kind,
    input: update.rawInput !== undefined && !isEmptyObject(update.rawInput) ? update.rawInput : known.input,
    locations: update.locations?.length ? [...new Set([...known.locations, ...update.locations.map((location) => location.path)])] : known.locations,
    writes: content.length ? [...new Set([...known.writes, ...content.flatMap((item) => (item.type === 'diff' && item.path ? [item.path] : []))])] : known.writes,
    diffs: diffs.length ? [...known.diffs.filter((earlier) => !diffs.some((diff) => diff.path === earlier.path)), ...diffs] : known.diffs,
    terminals: [...new Set([...known.terminals, ...content.flatMap((item) => (item.type === 'terminal' && item.terminalId ? [item.terminalId] : []))])],
  };
  calls.set(update.toolCallId, facts);
  return facts;
}

/** `{}`: what some agents send as the input of a call they have not filled in yet (Claude Code's first update). */
function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

/**
 * The option that carries a decision. An approval is always given once, never "always": buckley-lsp
 * remembers what the user trusts (trust.json) and the agent keeps asking, so the next call is
 * judged again — and the options agents offer for "always" may change their mode (Claude Code's
 * "bypass permissions" to leave plan mode). "always" is used only where the agent offers no "once".
 */
export function chooseOption(options: acp.PermissionOption[], decision: PermissionDecision): acp.PermissionOption | undefined {
  // Of two options of a kind, the one that does not also change the agent's mode (Qwen Code's
  // "Switch to Default Mode and allow once").
  const changesMode = (option: acp.PermissionOption) => /mode|bypass|switch|yolo/i.test(`${option.optionId} ${option.name}`);
  const byKind = (kind: acp.PermissionOptionKind) => {
    const ofKind = options.filter((option) => option.kind === kind);
    return ofKind.find((option) => !changesMode(option)) ?? ofKind[0];
  };
  switch (decision) {
    case 'allow_always':
    case 'allow_once':
      return byKind('allow_once') ?? byKind('allow_always');
    case 'reject':
      return byKind('reject_once') ?? byKind('reject_always');
  }
}

export function toolKind(kind: string): string {
  switch (kind) {
    case 'delete':
    case 'move':
      return 'edit';
    case 'switch_mode':
      return 'other';
    default:
      return kind;
  }
}

export function mapStopReason(reason: acp.StopReason): TurnResult['stopReason'] {
  switch (reason) {
    case 'end_turn':
    case 'cancelled':
    case 'max_tokens':
    case 'refusal':
      return reason;
    default:
      return 'other';
  }
}

/** A tool's input or output as text: a string as it is, else as JSON — one nested past any stack (an agent that writes its JSON itself can send one) said so, never thrown. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '(nested too deep to show)';
  }
}

/** Tool input as the flat string map the wire carries (`command`, `path`, …). */
export function flattenParameters(input: unknown): Record<string, string> {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) return { input: describeValue(input) };
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [key, describeValue(value)]));
}

const tokenCount = z.optional(z.nullable(z.number()));
const promptUsageSchema = z.looseObject({
  // ACP's (unstable) PromptResponse.usage: Claude Code's adapter.
  usage: z.optional(z.nullable(z.looseObject({ inputTokens: tokenCount, outputTokens: tokenCount }))),
  // Where Gemini CLI puts it.
  _meta: z.optional(z.nullable(z.looseObject({ quota: z.optional(z.nullable(z.looseObject({ token_count: z.optional(z.nullable(z.looseObject({ input_tokens: tokenCount, output_tokens: tokenCount }))) }))) }))),
});

/** The turn's tokens an agent's answer to session/prompt reports; undefined where it reports none. */
export function promptTokens(response: unknown): { input: number; output: number } | undefined {
  const parsed = promptUsageSchema.safeParse(response);
  if (!parsed.success) return undefined;
  const usage = parsed.data.usage;
  const meta = parsed.data._meta?.quota?.token_count;
  const input = usage?.inputTokens ?? meta?.input_tokens ?? 0;
  const output = usage?.outputTokens ?? meta?.output_tokens ?? 0;
  return input > 0 || output > 0 ? { input: Math.round(input), output: Math.round(output) } : undefined;
}
