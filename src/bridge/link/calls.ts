/**
 * What the flows ask of the coordinator (ask, task, edit proposals, completions, an approval's
 * decision) and what each call ends with: the one surface between the features and the link, so
 * the flows are tested in-process against a fake session as well as against real coordinators.
 */
import type { Failure } from '../../errors.js';
import type { AgentControls, TurnUsage, EditorContext, ProposeEditsResponse, Question, TaskEvent, TaskSummary } from '../../wire/contract.js';
import type { PlanStep } from '../flows/plans.js';

/**
 * What every call ends with: completed (with what it gave), failed (said in words: errors.ts,
 * link/failures.ts), or cancelled. The flows turn it into what the editor gets (flows/outcomes.ts).
 */
export type Outcome<T extends object> = ({ status: 'completed' } & T) | { status: 'failed'; failure: Failure } | { status: 'cancelled' };

/**
 * An answer; `report` where the coordinator sent none, only what it did (status lines; a fixed
 * reply that echoes the request) — shown as its report, never as the model's answer.
 */
export interface Answered {
  answer: string;
  report?: string[];
  /** What the agent says the turn cost, where it says (our coordinator's `usage`). */
  usage?: TurnUsage;
  /** The agent's plan as it last sent it (our coordinator's `plan`). */
  plan?: PlanStep[];
  /** The end of the agent's thinking (`thought_delta`), where it thought aloud. */
  thinking?: string;
}

/**
 * The editor's files, as a call's agent reaches them: its reads ask for the editor's buffer first
 * (`file_request`), and an approved write is made in the editor where the file is open
 * (`file_write`, see flows/agentEdits.ts).
 */
export interface EditorFiles {
  /** The editor's buffer of a file (absolute path), when it is open (an ACP client is asked for it). */
  buffer(path: string): { text: string; version: number } | undefined | Promise<{ text: string; version: number } | undefined>;
  write(write: { path: string; base: string; content: string }): Promise<{ open: boolean; applied: boolean; message: string }>;
}

/**
 * The agent's questions to the user (`question` events): the option chosen (index), the text typed
 * (a question with `input`), or undefined (declined); `ended` when its turn is over.
 */
/** The caller's client's terminals (an ACP panel's): an ACP terminal call made there, its result. */
export interface EditorTerminals {
  call(method: string, params: Record<string, unknown>): Promise<unknown>;
}

export interface EditorQuestions {
  ask(question: Question, ended: AbortSignal): Promise<number | string | undefined>;
}

export interface AskCall {
  question: string;
  /** The conversation it belongs to: the coordinator keeps one agent session (history) per conversation. */
  conversation: string;
  /** A follow-up's earlier turns (within the budget): for a coordinator whose agent no longer holds them, or never did. */
  earlier?: string;
  /** Refuse the ask where the coordinator does not keep asks read-only (buckley.ask.requireReadOnly). */
  requireReadOnly?: boolean;
  /** The ask ends as timed out after this long. */
  timeoutMs: number;
  context: EditorContext;
  signal: AbortSignal;
  /** A progress line from the coordinator (tool calls, plan steps). */
  onEvent?: (event: TaskEvent) => void;
  /** A streamed piece of the answer. */
  onDelta?: (delta: string) => void;
  files?: EditorFiles;
  questions?: EditorQuestions;
}

export type AskOutcome = Outcome<Answered>;

export interface StreamCall {
  taskId: string;
  query: string;
  context: EditorContext;
  signal: AbortSignal;
  timeoutMs: number;
  /** The setting that sets `timeoutMs`, named when the task times out. */
  timeoutSetting: string;
  /** `ask`: the coordinator keeps it read-only. */
  /** The conversation (an ask's, or the task's own): its agent session, never shared with another. */
  conversation: string;
  /** A follow-up's earlier turns (within the budget): for a coordinator whose agent no longer holds them, or never did. */
  earlier?: string;
  /** `edit`: a task that changes the selection (buckley.edit); a coordinator that knows (`edit_selection`) makes even a model's answer the change. */
  intent: 'ask' | 'task' | 'edit';
  onEvent?: (event: TaskEvent) => void;
  onDelta?: (delta: string) => void;
  files?: EditorFiles;
  questions?: EditorQuestions;
  /** The agent's commands run in these, where the coordinator can (`client_terminals`). */
  terminals?: EditorTerminals;
}

export type StreamOutcome = Outcome<Answered>;

/** A task followed from its start (SubscribeTaskEvents): a colleague's, watched. */
export type WatchCall = Pick<StreamCall, 'taskId' | 'signal' | 'timeoutMs' | 'timeoutSetting' | 'onEvent' | 'onDelta'>;

export interface ApprovalDecision {
  approved: boolean;
  remember?: boolean;
  reason?: string;
}

/** What the agent offers (GetAgentControls); with `model` or `mode`, that choice made first. */
export interface AgentControlsCall {
  discover: boolean;
  model?: string;
  mode?: string;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface CoordinatorSession {
  /** The coordinator's announced features (empty until it has answered). */
  readonly features: string[];
  ask(call: AskCall): Promise<AskOutcome>;
  /** Runs a task (StreamTask) to its end. */
  runTask(call: StreamCall): Promise<StreamOutcome>;
  /** Buckley's ProposeEdits: edits for the selection in `context`, proposed, not applied. */
  proposeEdits(call: { instruction: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ proposal: ProposeEditsResponse }>>;
  /** Completions at the cursor, streamed pieces joined. */
  inlineCompletions(call: { prompt: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ texts: string[] }>>;
  /** What the agent offers and uses; with `model`, the model its turns use from now on. */
  agentControls(call: AgentControlsCall): Promise<Outcome<{ controls: AgentControls }>>;
  /** The user's decision on a pending approval. */
  decideApproval(executionId: string, decision: ApprovalDecision): Promise<void>;
  /** The tasks the coordinator knows, newest first (ListTasks: a team's); only those still running with `runningOnly`. */
  listTasks(call: { runningOnly: boolean; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ tasks: TaskSummary[] }>>;
  /** Follows a task from its start to its end (a colleague's, watched). */
  watchTask(call: WatchCall): Promise<StreamOutcome>;
  /** Resolves once the session is up or has failed, or after `ms`; never rejects. */
  whenSettled(ms: number): Promise<void>;
}
