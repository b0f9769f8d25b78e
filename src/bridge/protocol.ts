/**
 * The custom `buckley/*` messages, declared once: method name, direction, param and result
 * types, and the zod schemas that validate what clients send. See the brief §3.1.
 */
import * as z from '../schema.js';
import { NotificationType, ProgressType, RequestType, RequestType0, type Range } from 'vscode-languageserver';

const position = z.object({
  line: z.int().check(z.nonnegative()),
  character: z.int().check(z.nonnegative()),
});
export const rangeSchema = z.object({ start: position, end: position });

/** Standard params the server acts on, validated like ours: bad ones are InvalidParams. */
export const textDocumentPositionSchema = z.object({
  textDocument: z.object({ uri: z.string() }),
  position,
});
export const codeActionParamsSchema = z.object({
  textDocument: z.object({ uri: z.string() }),
  range: z.object({ start: position, end: position }),
});

/**
 * The document notifications as TextDocuments reads them: a field it reads of the wrong type would
 * make its copy of the buffer something other than text, and fail every request that reads it.
 * A change's `range`, when there, must be a range (TextDocuments takes any `range` for one).
 */
const documentUri = z.object({ uri: z.string().check(z.minLength(1)) });
export const didOpenParamsSchema = z.object({ textDocument: z.object({ uri: z.string().check(z.minLength(1)), languageId: z.string(), version: z.int(), text: z.string() }) });
export const didChangeParamsSchema = z.object({
  textDocument: z.object({ uri: z.string().check(z.minLength(1)), version: z.int() }),
  contentChanges: z.array(z.object({ range: z.optional(rangeSchema), rangeLength: z.optional(z.int()), text: z.string() })),
});
export const didSaveParamsSchema = z.object({ textDocument: documentUri, text: z.optional(z.string()) });
export const documentParamsSchema = z.object({ textDocument: documentUri });
export const executeCommandParamsSchema = z.object({ command: z.string(), arguments: z.optional(z.array(z.unknown())) });

/** A conversation's id as buckley-lsp makes them (a UUID, `task-<UUID>`): it travels as a gRPC header. */
const conversationIdSchema = z.string().check(z.regex(/^[A-Za-z0-9._:-]{1,128}$/, 'conversation must be the id of a conversation (letters, digits, ".", "_", ":", "-"; at most 128)'));

export const askContextSchema = z.object({
  activeFile: z.optional(z.string().check(z.minLength(1))),
  selection: z.optional(rangeSchema),
  openFiles: z.optional(z.array(z.string())),
});
export type AskContext = z.infer<typeof askContextSchema>;

const progressTokenSchema = z.union([z.string(), z.int()]);

export const askParamsSchema = z.object({
  question: z.string().check(z.trim(), z.minLength(1, 'question must not be empty')),
  context: z.optional(askContextSchema),
  /** Continues the conversation of an earlier answer (its `conversation`); none: a new one. */
  conversation: z.optional(conversationIdSchema),
  workDoneToken: z.optional(progressTokenSchema),
  partialResultToken: z.optional(progressTokenSchema),
});
export type AskParams = z.infer<typeof askParamsSchema>;

export interface CodeReference {
  uri: string;
  range: Range;
  title?: string;
}

export interface AskResult {
  answer: string;
  references?: CodeReference[];
  taskId?: string;
  /** The conversation this answer belongs to: ask with it to follow up. */
  conversation: string;
  /** The coordinator sent no answer, only what it did (Buckley's receipt, its status lines): `answer` is its report. */
  report?: true;
}

/** Arguments of the `buckley.ask` command: JSON a Helix key binding can write by hand. */
export const askCommandArgsSchema = z.object({
  question: z.string().check(z.trim(), z.minLength(1, 'question must not be empty')),
  uri: z.optional(z.string().check(z.minLength(1))),
  range: z.optional(rangeSchema),
  text: z.optional(z.string()),
  /** Continues this conversation (as `buckley/ask`'s `conversation`). */
  conversation: z.optional(conversationIdSchema),
});
export type AskCommandArgs = z.infer<typeof askCommandArgsSchema>;

/**
 * Arguments of `buckley.followUp` and `buckley.newConversation`: the conversation, or its answer
 * document (`uri`); the question, else the one written below the document's follow-up line.
 */
export const followUpCommandArgsSchema = z.object({
  conversation: z.optional(conversationIdSchema),
  uri: z.optional(z.string().check(z.minLength(1))),
  question: z.optional(z.string()),
});

export const executeTaskParamsSchema = z.object({
  task: z.string().check(z.trim(), z.minLength(1, 'task must not be empty')),
  planId: z.optional(z.string()),
  context: z.optional(askContextSchema),
});
export type ExecuteTaskParams = z.infer<typeof executeTaskParamsSchema>;

export const cancelTaskParamsSchema = z.object({ taskId: z.string().check(z.minLength(1, 'taskId must not be empty')) });

/** Arguments of the `buckley.runTask` command. */
export const runTaskCommandArgsSchema = z.object({
  task: z.string().check(z.trim(), z.minLength(1, 'task must not be empty')),
  uri: z.optional(z.string().check(z.minLength(1))),
  range: z.optional(rangeSchema),
  text: z.optional(z.string()),
});

/** Arguments of `buckley.edit`: what to change, in which file, on which lines. */
export const editCommandArgsSchema = z.object({
  instruction: z.string().check(z.trim(), z.minLength(1, 'instruction must not be empty')),
  uri: z.string().check(z.minLength(1)),
  range: rangeSchema,
});
export type EditCommandArgs = z.infer<typeof editCommandArgsSchema>;

/** Arguments of `buckley.undoTaskEdits`; without a task id the newest task that changed files. */
export const undoTaskEditsArgsSchema = z.object({ taskId: z.optional(z.string().check(z.minLength(1))) });
/** A change under review (hunkReview.ts): the task and file, and the change by its first line and old text; without `line`, all of the task's. */
export const changeArgsSchema = z.object({ taskId: z.string().check(z.minLength(1)), path: z.string().check(z.minLength(1)), line: z.optional(z.int().check(z.nonnegative())), text: z.optional(z.string()) });
export const chooseModelArgsSchema = z.object({ model: z.optional(z.string().check(z.minLength(1))) });
export const chooseModeArgsSchema = z.object({ mode: z.optional(z.string().check(z.minLength(1))) });
/** An answer to the agent's question (questions.ts): the option's index, -1 to decline. */
export const answerQuestionArgsSchema = z.object({ id: z.string().check(z.minLength(1)), option: z.int() });

/** Arguments of the `buckley.cancelTask` command; without a task id the newest running task. */
export const cancelTaskCommandArgsSchema = z.object({ taskId: z.optional(z.string().check(z.minLength(1))) });
export const watchTaskCommandArgsSchema = cancelTaskCommandArgsSchema;

export type TaskStatus =
  | 'pending'
  | 'in_progress'
  | 'awaiting_approval'
  | 'completed'
  | 'failed'
  | 'cancelled';

export interface ToolExecution {
  id: string;
  tool: string;
  status: 'pending' | 'in_progress' | 'completed' | 'failed';
  kind?: 'read' | 'edit' | 'execute' | 'search' | 'fetch' | 'think' | 'other';
  input?: string;
  output?: string;
}

export interface TaskProgress {
  taskId: string;
  status: TaskStatus;
  progress?: number;
  message?: string;
  toolExecutions?: ToolExecution[];
  /** The agent's plan as it last sent it: each step's words and state (`pending`, `in_progress`, `completed`). */
  plan?: { content: string; status: string }[];
}

export interface StatusResult {
  /** `log`: the server's log file, when it writes one. */
  server: { name: string; version: string; log?: string };
  client: { name?: string; version?: string };
  coordinator: {
    mode: 'embedded' | 'remote';
    /** The coordinator in use. */
    address?: string;
    /** A team's replicas, in the order they are tried (buckley.coordinator.address). */
    addresses?: string[];
    /** Who the bridge is to the coordinator, and why (see bridge/identity.ts). */
    agentId?: string;
    agentIdSource?: 'setting' | 'certificate' | 'instance';
    state: 'starting' | 'ready' | 'unavailable';
    error?: string;
    sessionId?: string;
    protocolVersion?: string;
    features: string[];
    /** Features it announced that the bridge does not use (yet). */
    unusedFeatures: string[];
    agent?: string;
    /** What the agent reads and writes, in words (known once the coordinator has answered). */
    files?: { read: string; write: string };
  };
  features: Record<string, boolean>;
  tasks: TaskProgress[];
  /** A team's coordinator (`shared_tasks`): the tasks running on it, whoever started them (watch one with buckley.watchTask). */
  team?: { tasks: { taskId: string; owner: string; title: string; status: string; replica: string }[] } | { error: string };
  approvals: unknown[];
  /** The conversations kept (newest first): follow one up with its id, or in its document; what its turns used and cost here, where the agent said. */
  conversations: { id: string; title: string; turns: number; updated: string; document?: string; usage?: string }[];
  /** What the turns used and cost while this server runs, where the agents said ("$0.0246 over 2 turns · context 42k of 200k tokens"). */
  usage?: string;
  /** Inline completions (textDocument/inlineCompletion): available, or why not. */
  completions: { available: boolean; why?: string };
  /**
   * What the agent offers, once known (our coordinator, after its first turn or "choose model"):
   * its commands, its models and the one in use (and why that one), its modes and those asks and
   * tasks run in (and why tasks run in theirs: `modeSource`), and those "choose mode" offers (`taskModes`).
   */
  agent?: {
    name: string;
    commands: { name: string; description: string; hint?: string }[];
    models: { id: string; name?: string }[];
    model?: string;
    modelSource?: string;
    modes: { id: string; name?: string }[];
    askMode?: string;
    taskMode?: string;
    modeSource?: string;
    taskModes?: string[];
  };
}

export namespace AskRequest {
  export const method = 'buckley/ask';
  export const type = new RequestType<AskParams, AskResult, void>(method);
  /** Partial results (`partialResultToken`): pieces of the answer, to be appended in order. */
  export const partialResult = new ProgressType<Pick<AskResult, 'answer'>>();
}

export namespace ExecuteTaskRequest {
  export const method = 'buckley/executeTask';
  export const type = new RequestType<ExecuteTaskParams, { taskId: string }, void>(method);
}

export namespace CancelTaskRequest {
  export const method = 'buckley/cancelTask';
  export const type = new RequestType<{ taskId: string }, { cancelled: boolean }, void>(method);
}

export interface ToolApprovalRequest {
  executionId: string;
  tool: string;
  parameters: Record<string, unknown>;
  risk: 'low' | 'medium' | 'high' | 'destructive';
  agent: { id: string; name?: string };
  taskId?: string;
  title?: string;
  /** Why the risk is what it is, e.g. "writes /etc/hosts outside the workspace". */
  reason?: string;
  /** The call in a few words with its key facts — "run `npm test`", "edit package.json" — where it shows them. */
  subject?: string;
  /** A write of a file: its lines added and removed, and the change as a unified diff. */
  change?: { linesAdded: number; linesRemoved: number; diff: string };
  /**
   * A task's approvals are asked one at a time: how many of its approvals wait for the user, this
   * one included ("1 of 1,000"), when more than one does.
   */
  waiting?: number;
  /**
   * What answering `{ approved: true, forTask: true }` approves: this call and every call of its
   * kind in the task, waiting or to come ("edits", "commands", "reads"); absent when the call is
   * not one to approve that way (destructive, or what it does cannot be seen).
   */
  batch?: string;
}

/**
 * `forTask`: the decision holds for the task — approved: every call of this one's kind (`batch`),
 * waiting or to come; denied: every call of the task waiting now.
 */
export const toolApprovalResultSchema = z.object({ approved: z.boolean(), remember: z.optional(z.boolean()), forTask: z.optional(z.boolean()) });
export type ToolApprovalResult = z.infer<typeof toolApprovalResultSchema>;

/** Server → client: may the agent run this tool? */
/** The agent's question that needs a typed answer (`buckley/askText`, to a client that opted in): what it asks, and what to type. */
export interface AskTextParams {
  message: string;
  /** What to type (the form field's title). */
  input: string;
}

export namespace AskTextRequest {
  export const method = 'buckley/askText';
  /** The text typed; null: dismissed (declined). */
  export const type = new RequestType<AskTextParams, { text: string } | null, void>(method);
}

export namespace ApproveToolRequest {
  export const method = 'buckley/approveTool';
  export const type = new RequestType<ToolApprovalRequest, ToolApprovalResult | null, void>(method);
}

/** Arguments of `buckley.approve` / `buckley.deny`; without an id, the newest pending approval. */
export const approvalCommandArgsSchema = z.object({ executionId: z.optional(z.string().check(z.minLength(1))), remember: z.optional(z.boolean()), forTask: z.optional(z.boolean()) });

/** Takes no params: a client may send none, `{}` or `null`. */
export namespace StatusRequest {
  export const method = 'buckley/status';
  export const type = new RequestType0<StatusResult, void>(method);
}

/**
 * The negotiated features (as `experimental.buckley.features` in the initialize result), sent
 * whenever they change: the coordinator's become known once it has answered, after `initialized`.
 */
export namespace FeaturesNotification {
  export const method = '$/buckley/features';
  export const type = new NotificationType<Record<string, unknown>>(method);
}

export namespace TaskProgressNotification {
  export const method = '$/buckley/taskProgress';
  export const type = new NotificationType<TaskProgress>(method);
}

export { Commands, PROTOCOL_VERSION } from './names.js';

/** Formats zod issues as "path: message" lines for an InvalidParams error a person can act on. */
export function describeIssues(error: z.core.$ZodError, root = 'params'): string {
  return error.issues
    .map((issue) => `${[root, ...issue.path].join('.')}: ${issue.message}`)
    .join('; ');
}
