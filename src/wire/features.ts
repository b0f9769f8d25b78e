/**
 * The coordinator features (`GetServerCapabilities.features`), by the flag the bridge knows each
 * by: declared once, for our coordinator to announce, the bridge to negotiate, and doctor to check.
 */
export const FEATURE = {
  /** SendMessage answers a question. */
  chat: 'chat',
  /** StreamTask runs a task and streams its events. */
  streamTask: 'stream_task',
  /** StreamTask streams the answer (`answer_delta`) and progress: asks go through it (ours). */
  answerStream: 'answer_stream',
  /** Tool approvals are asked of the caller (ToolApprovalRequest). */
  toolApproval: 'tool_approval',
  /** Approval requests arrive as StreamTask events. */
  approvalEvents: 'approval_events',
  /** It reads the request's `context` itself: the message is the bare question. */
  readsContext: 'editor_context',
  /** It keeps an ask read-only (ours, where its agent runs in a sandbox). */
  readOnlyAsks: 'ask_read_only',
  /** It honours `x-buckley-intent: ask` (read-only rules) even where it cannot promise more. */
  askIntent: 'ask_intent',
  /**
   * An agent's reads ask the caller for the editor's buffer first (`file_request`, answered with
   * ProvideFile); its approved writes are made there (`file_write`, answered with ConfirmFileWrite).
   */
  editorBuffers: 'editor_buffers',
  /** buckley.edit's task is an edit (`x-buckley-intent: edit`): a model's answer becomes the change. */
  editSelection: 'edit_selection',
  /** It proposes edits itself (ProposeEdits: Buckley). */
  proposesEdits: 'propose_edits',
  /** One agent session per conversation (`x-buckley-conversation`), earlier turns sent where lost. */
  conversations: 'conversations',
  /** It completes code at the cursor (StreamInlineCompletions). */
  inlineCompletion: 'inline_completion',
  /** It says what a turn cost, where its agent reports it (`usage` on a task's final event). */
  usage: 'usage',
  /** It sends the agent's plan, whole, each time it changes (`plan`). */
  plan: 'plan',
  /** It streams the agent's thinking apart from its answer (`thought_delta`). */
  thoughts: 'thoughts',
  /** It says what the agent offers — commands, models, modes — and sets the model (GetAgentControls, SetAgentModel). */
  agentControls: 'agent_controls',
  /** It puts the agent's tasks in a mode chosen by the caller, among those that ask first (SetAgentMode). */
  agentModes: 'agent_modes',
  /** The agent's questions (ACP elicitation: one choice) reach the caller as `question` events, answered with AnswerQuestion. */
  questions: 'questions',
  /**
   * A task outlives its stream: its events carry sequence numbers and are followed again from one
   * (SubscribeTaskEvents) on any of its coordinators — by its caller after a failover, by a
   * colleague watching; it is cancelled with CancelTask (a stream opened with `x-buckley-detach`
   * does not cancel it by ending) and listed with ListTasks.
   */
  taskEvents: 'task_events',
  /**
   * Its tasks are kept where all its replicas find them, beyond any one's life (NATS JetStream): a
   * task whose stream broke is followed again — on the next replica, or the same one back.
   */
  sharedTasks: 'shared_tasks',
  /**
   * The agent's terminal calls go to a caller that serves terminals (`x-buckley-terminals: 1`,
   * `terminal` events, answered with AnswerTerminal): its commands run in the client's terminals,
   * judged and approved first, inside the agent's sandbox all the same.
   */
  clientTerminals: 'client_terminals',
  /** It gives the agent the images a prompt carries (related documents marked `buckley.image`: wire/images.ts). */
  promptImages: 'prompt_images',
} as const;

export type FeatureFlag = keyof typeof FEATURE;
export type FeatureName = (typeof FEATURE)[FeatureFlag];

/** Every feature the bridge acts on, by its wire name. */
export const KNOWN_FEATURES: readonly string[] = Object.values(FEATURE);

/** Which features a coordinator announced, as flags (all false for `undefined`: not answered yet). */
export function featureFlags(announced: readonly string[] | undefined): Record<FeatureFlag, boolean> {
  const has = new Set(announced ?? []);
  return Object.fromEntries(Object.entries(FEATURE).map(([flag, name]) => [flag, has.has(name)])) as Record<FeatureFlag, boolean>;
}
