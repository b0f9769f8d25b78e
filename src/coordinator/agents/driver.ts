/**
 * What our coordinator needs from an agent: run one turn of a conversation, streaming what
 * happens to a sink. Drivers: ACP (an agent subprocess) and OpenAI-compatible HTTP.
 */
import type { PromptImage } from '../../wire/images.js';
import type { AgentControls, PlanEntry, TurnUsage, WireToolExecution } from '../../wire/contract.js';
import type { Completion, CompletionRequest } from './fillInTheMiddle.js';
import type { EditorState } from './editorState.js';

export interface AgentTurn {
  /** Conversation key: one agent session per coordinator session. */
  sessionKey: string;
  /** The prompt, already holding the question and the editor context. */
  prompt: string;
  /** Working directory / workspace root of the session, when known. */
  cwd?: string;
  /** An ask: the agent may read but must not edit files or run commands. */
  readOnly: boolean;
  /**
   * The conversation, named the same across restarts (the caller's identity and its conversation
   * id): an agent that can load sessions gets its session back under it.
   */
  conversationKey?: string;
  /**
   * The conversation's earlier turns as the caller kept them (within its budget): sent along, after
   * the prompt, where the agent has no session holding them (a restart, a session closed idle).
   */
  earlier?: string;
  /**
   * The question as the user typed it, when it may be one of the agent's commands (`/review`): an
   * agent that lists the command gets it as ACP says, alone, not under the context's heading.
   */
  command?: string;
  /** The agent's mode this turn runs in, as its caller chose it (a task's: kept to those that ask first). */
  mode?: string;
  /** Images the prompt carries (named in its text), in order, within the prompt's bound. */
  images?: PromptImage[];
  /** What the editor showed (its file, the selection, the open files), for the agent's editor tools. */
  editor?: EditorState;
  /**
   * The agent's session to take up again (an ACP session id): a task whose coordinator stopped,
   * resumed by another. Where the agent cannot load it, a new session gets the turn.
   */
  resume?: string;
  /** The turn's span (W3C traceparent): sent to an ACP agent in its requests' `_meta`, so its traces join ours. */
  traceparent?: string;
}


export interface PermissionRequest {
  tool: string;
  /** The agent's id of the call (ACP toolCallId), as the turn's tool executions carry it. */
  toolCallId?: string;
  /** The kind the agent gives it (not trusted: the risk comes from what the call does). */
  kind: string;
  title: string;
  /** The input as the flat string map the wire carries (nested values as JSON). */
  parameters: Record<string, string>;
  /** The input as the agent sent it. */
  input: unknown;
  /** Paths the call touches (ACP `locations`). */
  locations: string[];
  /** Paths the call writes (ACP `diff` content). */
  writes: string[];
  /** What the call changes in files, for the user to review: a unified diff, lines added and removed. */
  diff?: { text: string; added: number; removed: number };
  /** The changes a tool call shows (ACP `diff` content): once approved, the agent's write of one of them is not asked again. */
  edits?: FileEdit[];
}

/** One change an agent shows: `oldText` (none: a new file) becomes `newText` in `path`. */
export interface FileEdit {
  path: string;
  oldText?: string;
  newText: string;
}

export type PermissionDecision = 'allow_once' | 'allow_always' | 'reject';

/** The agent writes a file's whole text (ACP `fs/write_text_file`). */
export interface FileWriteRequest {
  path: string;
  content: string;
}

/** The agent reads a file (ACP `fs/read_text_file`): an absolute path, 1-based `line`, `limit` lines. */
export interface FileReadRequest {
  path: string;
  line?: number;
  limit?: number;
}

export interface TurnSink {
  text(delta: string): void;
  tool(execution: WireToolExecution): void;
  /** The agent's plan, whole, each time it changes. */
  plan(entries: PlanEntry[]): void;
  /** A piece of the agent's thinking: shown apart from its answer, never in it. */
  thought(delta: string): void;
  /** The agent asks permission to run a tool; the coordinator decides. */
  permission(request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision>;
  /** The agent reads a file: its text (the editor's buffer where the file is open), or an error saying why not. */
  readFile(request: FileReadRequest, signal: AbortSignal): Promise<string>;
  /** The agent writes a file: done once it is written (in the editor's buffer where the file is open), or an error saying why not. */
  writeFile(request: FileWriteRequest, signal: AbortSignal): Promise<void>;
  /** A line about the turn for the user, not part of the answer ("no word from the agent for 30 s…"). */
  notice(message: string): void;
  /**
   * The agent asks the user: the option chosen (index), or the text typed (a question with
   * `input`), or undefined (declined). Absent where the caller cannot ask.
   */
  question?(question: AgentQuestion, signal: AbortSignal): Promise<number | string | undefined>;
  /**
   * An ACP terminal call (terminal/create already judged, approved and wrapped in the sandbox),
   * made in the caller's client's terminals: its result. Absent where the caller serves none.
   */
  terminal?(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /** The caller takes typed answers (a question with `input`) too. */
  typedAnswers?: boolean;
  /** Whether the turn wrote this file through the coordinator, as the user approved (not by itself in its sandbox). */
  wroteThroughUs?(path: string): boolean;
  /** The agent's session the turn runs in, once known; `resumable`: the agent can load it again (in another process). */
  opened?(session: { id: string; resumable: boolean }): void;
}

/** A question of the agent's for the user: a choice, or (with `input`: what to type) a typed answer (ACP elicitation, elicitation.ts). */
export interface AgentQuestion {
  message: string;
  options: string[];
  input?: string;
  /** A web page the agent asks the user to open (URL mode): opened by the editor where the first option is chosen. */
  url?: string;
}

export interface TurnResult {
  text: string;
  stopReason: 'end_turn' | 'cancelled' | 'max_tokens' | 'refusal' | 'other';
  /**
   * The tool calls declined during the turn (by the user, or because an ask is read-only), in a few
   * words each (`edit “src/a.ts”`): an agent whose only way to take a refusal is to end its turn as cancelled (Codex)
   * was refused, not cancelled.
   */
  refused?: string[];
  /** Tool calls that changed or ran something without a permission request (commands, edits), by what the agent called them. */
  unasked?: string[];
  /** What the agent says the turn cost; absent where it reports nothing. */
  usage?: TurnUsage;
}

export interface AgentDriver {
  /** One line for status and logs, e.g. `ACP agent "node agent.js"`. */
  readonly description: string;
  /** A few words for progress messages and errors: the agent's own name once it said it (ACP agentInfo: `Claude Agent`, `Gemini CLI`), else its program's (`agent.js`), or the model (`llama3`). */
  readonly shortName: string;
  /** The agent writes files itself (ACP fs/write_text_file); a model only answers. */
  readonly writesFiles: boolean;
  run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult>;
  /** Checks that the agent is reachable (starts it if needed); says what answered. For `doctor`. */
  check(signal: AbortSignal): Promise<string>;
  /** Forget a conversation (its coordinator session ended). */
  endSession?(sessionKey: string): void;
  /** Gets ready before the coordinator serves (the ACP pool finds out whether agents can be sandboxed here). */
  prepare?(): Promise<void>;
  /** What its sandbox keeps from the agent (variables, the network), in lines for `doctor` and the log. */
  sandboxNotes?(): string[];
  /** Why an ask may change things with this driver (its agent runs without a sandbox); undefined when asks are read-only. */
  readonly unsafeAsks?: string;
  /**
   * What the agent offers (its commands, models, modes) and uses now; with `discover`, an agent
   * not started yet is started and asked (an ACP agent: a session opened and closed).
   */
  controls?(discover: boolean): Promise<AgentControls>;
  /** The model its turns use from now on (remembered): what it offers then, or why not, in words. */
  chooseModel?(model: string): AgentControls | { error: string };
  /** The mode its tasks run in from now on (remembered; one that asks first): what it offers then, or why not, in words. */
  chooseMode?(mode: string): AgentControls | { error: string };
  /** Completes code at the cursor (a model does; an ACP agent has no such call). */
  complete?(request: CompletionRequest, signal: AbortSignal): Promise<Completion>;
  close(): Promise<void>;
}

/** A failure of the agent itself (crash, exit, protocol error), as opposed to a cancellation. */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    message: string,
    /** The agent's last lines of output, where it said more than the message holds. */
    readonly output: readonly string[] = [],
  ) {
    super(message);
  }
}
