/**
 * TypeScript shapes of the buckley.acp.v1 messages the bridge and our coordinator exchange, as
 * proto-loader presents them (snake_case field names, `defaults: true`), and zod schemas for
 * what comes back from a coordinator: a reply is validated before the bridge trusts it.
 */
import * as z from '../schema.js';

/** Request metadata: the caller's agent identity (Buckley reads it from loopback plaintext peers). */
export const AGENT_HEADER = 'x-buckley-agent-id';
/** Our extension: the coordinator session a call belongs to. */
export const SESSION_HEADER = 'x-buckley-session-id';
/** The embedded coordinator's per-process secret: `Bearer <hex>`. */
export const AUTHORIZATION_HEADER = 'authorization';
/** Our extension: `ask` marks a StreamTask that must stay read-only. */
export const INTENT_HEADER = 'x-buckley-intent';
/**
 * Our extension: `1` on a StreamTask says the caller answers its `file_request` events with
 * ProvideFile (it holds the editor's buffers); without it the coordinator reads the disk.
 */
export const BUFFERS_HEADER = 'x-buckley-editor-buffers';
/**
 * Our extension: `1` on a StreamTask says the caller answers its `question` events (AnswerQuestion)
 * that are a choice; `2`, typed ones too. Without it the agent's questions are declined at once.
 */
export const QUESTIONS_HEADER = 'x-buckley-questions';
/**
 * Our extension: `1` on a StreamTask says the caller makes the agent's terminal calls in its
 * client's terminals (`terminal` events, answered with AnswerTerminal): an ACP panel that shows
 * them. Without it the coordinator runs the agent's commands itself (in the agent's sandbox alike).
 */
export const TERMINALS_HEADER = 'x-buckley-terminals';
/** In a `terminal` event's terminal/create params, `_meta[TERMINAL_COMMAND_META]`: the command as the agent gave it (the panel's title for it). */
export const TERMINAL_COMMAND_META = 'buckley/commandLine';
/** Our extension: the conversation a StreamTask belongs to; one agent session (history) each, never shared. */
export const CONVERSATION_HEADER = 'x-buckley-conversation';
/**
 * On StreamTask, `1`: the task goes on when this stream ends, for its caller to follow again
 * (SubscribeTaskEvents, the same identity, within a minute — a failover, a network blip) or to
 * cancel (CancelTask); a caller gone longer has it cancelled. Without it, ending the stream
 * cancels the task, as Buckley's clients expect.
 */
export const DETACH_HEADER = 'x-buckley-detach';
/**
 * Our extension, a trailer of a failed call: what failed is behind the coordinator — `agent` (its
 * agent or model) or `store` (a team's NATS) — not the coordinator, which answered. Without it, an
 * UNAVAILABLE means the coordinator itself went away (a client connects anew).
 */
export const BEHIND_TRAILER = 'x-buckley-behind';
/**
 * Our extension: in `EditorContext.metadata`, a follow-up's earlier turns (within the budget), for
 * a coordinator with `conversations` to send where its agent no longer holds them.
 */
export const EARLIER_TURNS_KEY = 'conversation_earlier';
/**
 * Our extension: in `EditorContext.metadata`, the request's workspace (a file: URI) where it
 * carries no document to name it (an ACP client's prompt with no file attached).
 */
export const WORKSPACE_KEY = 'workspace_root';
/** Our extension: in `EditorContext.metadata`, the most bytes of context the prompt may carry (the user's `context.maxBytes`). */
export const BUDGET_KEY = 'budget_bytes';
/**
 * Our extension: in `EditorContext.metadata`, the agent's mode this task runs in — one of
 * `AgentControls.task_modes` (those that ask first), for this task only (an ACP panel's session in
 * "Task: Plan"); SetAgentMode's choice for every task stays as it is. An ask stays in the read-only
 * mode; a mode that would run tools unasked is not taken (the task runs in the one that asks first).
 */
export const AGENT_MODE_KEY = 'agent_mode';

export interface WirePosition {
  line: number;
  character: number;
}
export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface DocumentSnapshot {
  uri: string;
  language_id: string;
  content: string;
  selection?: WireRange;
  visible_ranges?: WireRange[];
  version: number;
  workspace_root: string;
  metadata: Record<string, string>;
}

export interface EditorContext {
  document?: DocumentSnapshot;
  related_documents: DocumentSnapshot[];
  symbols: string[];
  metadata: Record<string, string>;
}

/**
 * An EditorContext as grpc-js gives a caller's message: proto3 leaves an absent message field null
 * (a document without selection, a range without start) and an int32 may be negative. In the
 * shape the coordinator reads — absent fields gone, a range's missing end at the document's start,
 * lines and characters not below 0 — so nothing past the gRPC edge meets a null it was not told of.
 */
export function receivedContext(raw: EditorContext | null | undefined): EditorContext | undefined {
  if (!raw) return undefined;
  const document = raw.document ? receivedDocument(raw.document) : undefined;
  return { ...(document ? { document } : {}), related_documents: (raw.related_documents ?? []).map(receivedDocument), symbols: raw.symbols ?? [], metadata: raw.metadata ?? {} };
}

function receivedDocument(raw: DocumentSnapshot): DocumentSnapshot {
  const { selection, visible_ranges: visible, ...rest } = raw;
  return { ...rest, metadata: raw.metadata ?? {}, ...(selection ? { selection: receivedRange(selection) } : {}), ...(visible ? { visible_ranges: visible.map(receivedRange) } : {}) };
}

function receivedRange(raw: WireRange): WireRange {
  const at = (position: WirePosition | null | undefined) => ({ line: Math.max(0, position?.line ?? 0), character: Math.max(0, position?.character ?? 0) });
  return { start: at(raw.start), end: at(raw.end) };
}

export interface WireMessage {
  role: string;
  content: string;
}

export interface SendMessageRequest {
  agent_id: string;
  message: WireMessage;
  context?: EditorContext;
}

export interface TaskStreamRequest {
  task_id: string;
  agent_id: string;
  query: string;
  context?: EditorContext;
}

export interface ContextDelta {
  session_id: string;
  added_files: string[];
  removed_files: string[];
  metadata: Record<string, string>;
}

export interface CreateSessionRequest {
  agent_id: string;
  metadata: Record<string, string>;
}

// proto3: an absent field is its zero value.
const text = () => z._default(z.string(), '');
const list = <Item extends z.core.$ZodType>(item: Item) => z._default(z.array(item), []);
const stringMap = z._default(z.record(z.string(), z.string()), {});

export const serverCapabilitiesSchema = z.object({
  protocol_version: text(),
  features: list(z.string()),
  max_agents: z._default(z.number(), 0),
  supported_auth: list(z.string()),
  /** Ours: what the coordinator cannot promise here, in words for the user. */
  notes: list(z.string()),
});
export type ServerCapabilities = z.infer<typeof serverCapabilitiesSchema>;

export const sessionSchema = z.object({
  session_id: z.string().check(z.minLength(1, 'the coordinator returned a session without session_id')),
  agent_id: text(),
  metadata: stringMap,
});
export type Session = z.infer<typeof sessionSchema>;

export const sendMessageResponseSchema = z.object({
  response: z.optional(z.nullable(z.object({ role: z._default(z.string(), 'assistant'), content: z.string() }))),
});

const toolExecutionSchema = z.object({
  id: text(),
  tool: text(),
  status: text(),
  kind: text(),
  input: text(),
  output: text(),
});

const toolApprovalRequestSchema = z.object({
  execution_id: z.string(),
  tool: text(),
  parameters: stringMap,
  risk: text(),
  agent_id: text(),
  title: text(),
  reason: text(),
  kind: text(),
  locations: list(z.string()),
  diff: text(),
  lines_added: z._default(z.int(), 0),
  lines_removed: z._default(z.int(), 0),
  tool_call_id: text(),
});

const fileRequestSchema = z.object({
  request_id: z.string().check(z.minLength(1)),
  path: z.string(),
  line: z._default(z.int(), 0),
  limit: z._default(z.int(), 0),
});
export type FileRequest = z.infer<typeof fileRequestSchema>;

const questionSchema = z.object({
  request_id: z.string().check(z.minLength(1)),
  message: text(),
  options: list(z.string()),
  /** Not empty: the answer is typed, and this names what to type. */
  input: text(),
  /** Not empty: the agent asks the user to open this web page; the caller opens it where the first option is chosen. */
  url: text(),
});
export type Question = z.infer<typeof questionSchema>;

const terminalCallSchema = z.object({
  request_id: z.string().check(z.minLength(1)),
  method: z.string().check(z.minLength(1)),
  /** The ACP request's params, JSON, without its sessionId. */
  params_json: text(),
});
export type TerminalCall = z.infer<typeof terminalCallSchema>;

/** The answer to a TerminalCall (AnswerTerminal): the client's result as JSON, or an error in words. */
export interface TerminalAnswer {
  request_id: string;
  result_json: string;
  error: string;
}

/** The answer to a Question (AnswerQuestion): the option chosen, by index, or -1 for declined; a typed answer's text (option 0). */
export interface QuestionAnswer {
  request_id: string;
  option: number;
  text?: string;
}

/** The answer to a FileRequest (ProvideFile): the editor's buffer, or `open: false`, or why it cannot be given. */
export interface FileContent {
  request_id: string;
  open: boolean;
  text: string;
  version: number;
  error?: string;
}

/** The most a file read gives at once (UTF-8 bytes): bigger files are read in parts (`line`, `limit`). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** Why a read of `size` bytes is refused, or undefined when it may go ahead. */
export function tooBigToRead(path: string, size: number, limit: number | undefined): string | undefined {
  return size > MAX_READ_BYTES && !limit ? `${path} is ${Math.round(size / 1024 / 1024)} MB: read it in parts (line and limit)` : undefined;
}

const fileWriteSchema = z.object({
  request_id: z.string().check(z.minLength(1)),
  path: z.string(),
  base: text(),
  content: text(),
});
export type FileWrite = z.infer<typeof fileWriteSchema>;

/** What became of a FileWrite (ConfirmFileWrite). */
export interface FileWritten {
  request_id: string;
  open: boolean;
  applied: boolean;
  message: string;
}

const fileChangedSchema = z.object({ path: z.string(), before: text(), after: text(), in_editor: z._default(z.boolean(), false), unasked: z._default(z.boolean(), false) });
export type FileChanged = z.infer<typeof fileChangedSchema>;

/** What the agent says a turn cost (the final TaskEvent's `usage`). */
const turnUsageSchema = z.object({
  cost: z._default(z.number(), 0),
  currency: text(),
  context_used: z._default(z.int(), 0),
  context_size: z._default(z.int(), 0),
  input_tokens: z._default(z.int(), 0),
  output_tokens: z._default(z.int(), 0),
});
export type TurnUsage = z.infer<typeof turnUsageSchema>;

const agentChoiceSchema = z.object({ id: z.string(), name: text(), description: text() });
/** What the agent offers and uses now (GetAgentControls, SetAgentModel, SetAgentMode). */
export const agentControlsSchema = z.object({
  agent: text(),
  known: z._default(z.boolean(), false),
  commands: list(z.object({ name: z.string(), description: text(), hint: text() })),
  models: list(agentChoiceSchema),
  model: text(),
  model_source: text(),
  modes: list(agentChoiceSchema),
  ask_mode: text(),
  task_mode: text(),
  task_modes: list(z.string()),
  mode_source: text(),
});
export type AgentControls = z.infer<typeof agentControlsSchema>;
export type AgentChoice = z.infer<typeof agentChoiceSchema>;

/** The agent's plan, whole (TaskEvent `plan`): each entry's words and state. */
const taskPlanSchema = z.object({ entries: list(z.object({ content: text(), status: text(), priority: text() })) });
export type TaskPlan = z.infer<typeof taskPlanSchema>;
export type PlanEntry = TaskPlan['entries'][number];

const wireRangeSchema = z.object({
  start: z.object({ line: z._default(z.int(), 0), character: z._default(z.int(), 0) }),
  end: z.object({ line: z._default(z.int(), 0), character: z._default(z.int(), 0) }),
});

/** Buckley's ProposeEdits reply: edits per file, best first by `rank`. */
export const proposeEditsResponseSchema = z.object({
  plan_id: text(),
  task_id: text(),
  summary: text(),
  edits: list(
    z.object({
      uri: z.string(),
      edits: list(z.object({ uri: text(), range: wireRangeSchema, new_text: text() })),
      summary: text(),
      title: text(),
      rank: z._default(z.int(), 0),
    }),
  ),
});
export type ProposeEditsResponse = z.infer<typeof proposeEditsResponseSchema>;

/** One piece (or all) of a completion at the cursor; `is_final` ends that completion. */
export const inlineCompletionEventSchema = z.object({
  completion_id: text(),
  text: text(),
  is_final: z._default(z.boolean(), false),
  finish_reason: text(),
});
export type InlineCompletionEvent = z.infer<typeof inlineCompletionEventSchema>;

/** StreamInlineCompletions: the document around the cursor (an empty selection there) in `context`, its text before the cursor as `prompt`. */
export interface InlineCompletionRequest {
  agent_id: string;
  session_id: string;
  context?: EditorContext;
  prompt: string;
  max_suggestions: number;
}

export const taskEventSchema = z.object({
  task_id: text(),
  plan_id: text(),
  status: text(),
  progress: z._default(z.int(), 0),
  message: text(),
  tool_executions: list(toolExecutionSchema),
  approval: z.optional(z.nullable(toolApprovalRequestSchema)),
  answer_delta: text(),
  file_request: z.optional(z.nullable(fileRequestSchema)),
  file_write: z.optional(z.nullable(fileWriteSchema)),
  file_changed: z.optional(z.nullable(fileChangedSchema)),
  usage: z.optional(z.nullable(turnUsageSchema)),
  plan: z.optional(z.nullable(taskPlanSchema)),
  thought_delta: text(),
  question: z.optional(z.nullable(questionSchema)),
  terminal: z.optional(z.nullable(terminalCallSchema)),
  /** Its place in the task's stream (ours; 0 from a coordinator that does not number them). */
  sequence: z._default(z.number(), 0),
});
export type TaskEvent = z.infer<typeof taskEventSchema>;

/** A task at a glance (ListTasks, ours). */
export const taskSummarySchema = z.object({
  task_id: text(),
  owner: text(),
  status: text(),
  title: text(),
  replica: text(),
  sequence: z._default(z.number(), 0),
});
export const taskListSchema = z.object({ tasks: list(taskSummarySchema) });
export type TaskSummary = z.infer<typeof taskSummarySchema>;

/** A task's final states: its last event has one of them. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);
export type WireToolExecution = z.infer<typeof toolExecutionSchema>;
