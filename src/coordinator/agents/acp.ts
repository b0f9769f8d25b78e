/**
 * The ACP driver: runs an Agent Client Protocol agent (`buckley acp`, `gemini --acp`, codex-acp,
 * claude-agent-acp, …) as a process (acpProcess.ts; in its sandbox: pool.ts) and its turns in
 * ACP sessions (acpSessions.ts: made, loaded, in the mode of their intent, kept idle, bounded).
 * Message chunks become the answer, tool calls and plans become progress, permission requests go
 * to the coordinator to decide, and so do its file reads and writes (fs/*) and its commands
 * (terminal/*). If the agent crashes or exits, the running turn fails with a clear error and the
 * next turn starts it again.
 *
 * A session belongs to one turn at a time, from `session/prompt` until the agent answers it:
 * updates and permission requests reach that turn and no other. A session whose agent ignores
 * `session/cancel` past the grace period is given up for good (closed where the agent can close
 * sessions) and replaced, and whatever it still sends is dropped and logged. An agent that cannot
 * close sessions is restarted, once no turn runs, when it holds too many that are processes of
 * their own.
 */
import { statSync } from 'node:fs';
import type * as acp from '@agentclientprotocol/sdk';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import type { AgentControls } from '../../wire/contract.js';
import { imageName } from '../../wire/images.js';
import { oneLine, seconds } from '../../text.js';
import { FileAccessError } from '../files.js';
import { AgentError, type AgentDriver, type AgentTurn, type TurnResult, type TurnSink } from './driver.js';
import { inWords, knownOf, remedy, withoutEscapes, type AgentIdentity } from './acpErrors.js';
import { inSandboxWords } from './deniedWrites.js';
import { applyTurnUpdate } from './turnUpdates.js';
import { chooseOption, flattenParameters, mapStopReason, permissionToolCall, promptTokens, readTextFileParams, rememberCall, writeTextFileParams, type SessionUpdate } from './acpMessages.js';
import { abortedAfter, delay, GAVE_UP, isAlive, orDeath, startAgentProcess, type AgentProcess, type Launch } from './acpProcess.js';
import { shortCommandName } from './recognize.js';
import { modelsOf, modesOf } from './modes.js';
import { patchEdits, patchTitle } from './patchEdits.js';
import { AgentChoices } from './choices.js';
import type { McpServers } from './mcp.js';
import type { EditorMcpServer } from './editorMcp.js';
import { AgentSessions, type AcpSession, type ActiveTurn } from './acpSessions.js';
import { processTreeSize, stopGroup } from './processes.js';
import type { SessionStore } from './sessionStore.js';
import { Terminals } from './terminals.js';
import { answerElicitation } from './elicitation.js';

export interface AcpDriverOptions {
  command: string[];
  /** What runs: the command (the default), or bubblewrap with it (pool.ts): `sandbox` says which. */
  launch?: Launch;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Deadline of ACP setup requests (initialize, session/new). */
  requestTimeoutMs?: number;
  /** How long a cancelled turn may go on before its session is given up and replaced. */
  cancelGraceMs?: number;
  logger: Logger;
  clientVersion: string;
  /** Where conversations' ACP sessions are remembered across restarts (for agents that can load them). */
  sessionStore?: SessionStore;
  /** Idle sessions kept for their conversations (buckley.agent.maxIdleSessions). */
  maxIdleSessions?: number;
  /** No word from the agent this long during a turn, and the user is told (and again each time). */
  silenceMs?: number;
  /** MCP servers for every session (buckley.agent.mcpServers). */
  mcpServers?: McpServers;
  /** Our editor MCP server, offered to every session (shared by the pool's processes). */
  editorMcp?: EditorMcpServer;
  /** What the agent offers and the model wanted, shared by its processes (pool.ts); else its own, not remembered. */
  choices?: AgentChoices;
  /** Its process starts through it: one at a time with its pool's others (pool.ts); else at once. */
  startGate?: StartGate;
}

/** Runs a start when no other start it gates runs. */
export type StartGate = <T>(start: () => Promise<T>) => Promise<T>;


type ResolvedOptions = AcpDriverOptions & Required<Pick<AcpDriverOptions, 'launch' | 'requestTimeoutMs' | 'cancelGraceMs' | 'maxIdleSessions' | 'silenceMs' | 'choices'>>;

/** An agent process and its sessions. */
interface Agent extends AgentProcess {
  readonly sessions: AgentSessions;
}

const CANCEL_GRACE_MS = 5_000;
/** Deadline of ACP setup requests, unless set (buckley.agent.requestTimeoutMs). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How a call of each kind is named in a sentence ("its edit “src/a.ts”"). */
const KIND_WORDS: Record<string, string> = { execute: 'command', edit: 'edit', delete: 'deletion', move: 'move', read: 'read', search: 'search', fetch: 'fetch', switch_mode: 'change of mode' };
/** Idle ACP sessions kept for their conversations' next turns; beyond it the one idle longest is closed. */
export const MAX_IDLE_SESSIONS = 4;
export const SILENCE_MS = 30_000;

export class AcpDriver implements AgentDriver {
  readonly writesFiles = true;
  readonly description: string;
  private agent: Promise<Agent> | undefined;
  private live: Agent | undefined;
  /** The name it gave itself (agentInfo), once known. */
  private agentName: string | undefined;
  private acpName: string | undefined;
  private readonly terminals: Terminals;
  /** Closed: a start under way starts nothing more. */
  private closed = false;

  /** The options, their defaults resolved once. */
  private readonly options: ResolvedOptions;

  constructor(options: AcpDriverOptions) {
    this.options = {
      ...options,
      launch: options.launch ?? { program: options.command[0]!, args: options.command.slice(1) },
      requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      cancelGraceMs: options.cancelGraceMs ?? CANCEL_GRACE_MS,
      maxIdleSessions: options.maxIdleSessions ?? MAX_IDLE_SESSIONS,
      silenceMs: options.silenceMs ?? SILENCE_MS,
      choices: options.choices ?? new AgentChoices({ agent: options.command.join(' '), logger: options.logger }),
    };
    this.description = `ACP agent \`${options.command.join(' ')}\``;
    // The launch's, read when a terminal starts: a relaunch brings another sandbox.
    this.terminals = new Terminals({ logger: options.logger, wrap: (command, cwd, client) => this.options.launch.wrap?.(command, cwd, client), env: () => this.options.launch.env ?? options.env, cwd: () => this.options.cwd });
  }

  /** Started as it is, not in a sandbox (pool.ts starts it in one): an ask cannot be kept read-only. */
  get unsafeAsks(): string | undefined {
    return this.options.launch?.sandbox ? undefined : 'the agent runs without a sandbox (it is not started in one)';
  }

  /** How the user knows the agent: its agentInfo title once it said it, else its program's name. */
  get shortName(): string {
    return this.agentName ?? knownOf({ command: this.options.command, title: '' })?.title ?? shortCommandName(this.options.command);
  }

  private get identity(): AgentIdentity {
    return { acpName: this.acpName, command: this.options.command, title: this.shortName, env: this.options.launch.env ?? this.options.env };
  }

  async run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    if (signal.aborted) return { text: '', stopReason: 'cancelled' };
    try {
      return await this.runTurn(turn, sink, signal);
    } catch (error) {
      throw this.sandboxWords(error);
    }
  }

  /** The prompt's text, then its images where the agent takes images; where it takes none, the user is told they were left out. */
  private blocksOf(agent: Agent, text: string, turn: AgentTurn, sink: TurnSink): acp.ContentBlock[] {
    const images = turn.images ?? [];
    if (images.length && !agent.takesImages) sink.notice(`${this.shortName} takes no images: ${images.map(imageName).join(', ')} left out of the prompt`);
    const given = agent.takesImages ? images.map((image): acp.ContentBlock => ({ type: 'image', mimeType: image.mimeType, data: image.data, ...(image.uri && !image.uri.startsWith('data:') ? { uri: image.uri } : {}) })) : [];
    return [{ type: 'text', text }, ...given];
  }

  /** A failure that names a place the sandbox kept the agent from writing, said as that; any other as it is. */
  private sandboxWords(error: unknown): unknown {
    return inSandboxWords(error, this.options.launch.plan, this.shortName, this.live?.stderrTail ?? [], this.options.logger);
  }

  private async runTurn(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const agent = await this.ensureAgent();
    const { session, prompt } = await agent.sessions.acquire(turn);
    sink.opened?.({ id: session.id, resumable: Boolean(agent.canLoad || agent.canResume) });
    try {
      return await this.prompt(agent, session, prompt, sink, signal);
    } finally {
      // Lent again only once its turn has ended (the agent answered session/prompt).
      agent.sessions.release(session);
      this.restartIfHoldingTooMany(agent);
    }
  }

  private async prompt(agent: Agent, session: AcpSession, turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    await agent.sessions.keepMode(session, turn.readOnly, turn.mode);
    await agent.sessions.keepModel(session);
    const text = await this.options.choices.promptOf(turn);
    const active: ActiveTurn = { sink, readOnly: turn.readOnly, editor: turn.editor, cwd: turn.cwd, signal, text: '', textInterrupted: false, tools: new Map(), calls: new Map(), refused: [], asked: new Set(), unasked: new Map(), lastWord: Date.now(), deciding: 0 };
    session.turn = active;
    const onAbort = () => {
      agent.connection.agent.notify('session/cancel', { sessionId: session.id }).catch(() => undefined);
      this.terminals.endTurn(session.id);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const silence = this.watchSilence(agent, active);
    // An agent that ignores session/cancel must not hold the turn forever.
    const gaveUp = abortedAfter(signal, this.options.cancelGraceMs);
    const answered = orDeath(agent, agent.connection.agent.request('session/prompt', { sessionId: session.id, prompt: this.blocksOf(agent, text, turn, sink), ...(turn.traceparent ? { _meta: { traceparent: turn.traceparent } } : {}) }));
    const result = (stopReason: TurnResult['stopReason']): TurnResult => ({
      text: active.text,
      stopReason,
      ...(active.refused.length ? { refused: active.refused } : {}),
      ...(active.unasked.size ? { unasked: [...active.unasked.values()] } : {}),
      ...(active.usage ? { usage: active.usage } : {}),
    });
    try {
      const response = await Promise.race([answered, gaveUp.promise]);
      if (response === GAVE_UP) {
        this.abandon(agent, session, answered);
        return result('cancelled');
      }
      const tokens = promptTokens(response);
      if (tokens) active.usage = { ...(active.usage ?? { cost: 0, currency: '', context_used: 0, context_size: 0 }), input_tokens: tokens.input, output_tokens: tokens.output };
      return result(signal.aborted ? 'cancelled' : mapStopReason(response.stopReason));
    } catch (error) {
      if (signal.aborted) return result('cancelled');
      if (error instanceof AgentError) throw error;
      // A closed connection usually means the process is exiting: report its exit status.
      const death = await orDeath(agent, delay(1_000)).catch((reason: unknown) => reason);
      throw death instanceof AgentError ? death : new AgentError(inWords(`${this.shortName} failed`, error, this.identity));
    } finally {
      clearInterval(silence);
      gaveUp.dispose();
      signal.removeEventListener('abort', onAbort);
      this.terminals.endTurn(session.id);
      session.turn = undefined;
    }
  }

  /**
   * Tells the user when the agent says nothing for `silenceMs` while no permission is being
   * decided (it may be retrying a refused key in silence, as Claude Code does), with its last log line.
   */
  private watchSilence(agent: Agent, turn: ActiveTurn): NodeJS.Timeout {
    const silenceMs = this.options.silenceMs;
    const timer = setInterval(
      () => {
        if (turn.deciding > 0 || Date.now() - turn.lastWord < silenceMs) return;
        const said = agent.stderrTail.at(-1) && oneLine(withoutEscapes(agent.stderrTail.at(-1)!), 240);
        const fix = said && remedy(said, this.identity);
        turn.sink.notice(`no word from ${this.shortName} for ${seconds(Date.now() - turn.lastWord)}; it may be retrying${said ? ` — its last log line: ${said}` : ''}${fix ? `. To fix it, ${fix}` : ''}`);
        turn.lastWord = Date.now();
      },
      Math.min(silenceMs, 1_000),
    );
    timer.unref();
    return timer;
  }

  /**
   * Gives up a session whose agent goes on with a cancelled turn: it is never lent again, closed
   * where the agent can close sessions, and forgotten once the agent does end the turn.
   */
  private abandon(agent: Agent, session: AcpSession, answered: Promise<unknown>): void {
    const { logger } = this.options;
    session.abandoned = true;
    logger.warn(
      `${this.shortName} did not end a cancelled turn within ${seconds(this.options.cancelGraceMs)}: its ACP session ${session.id} is given up${agent.canClose ? ' and closed' : ''}; what it still sends is dropped`,
    );
    agent.sessions.close(session.id);
    void answered
      .catch(() => undefined)
      .finally(() => {
        agent.sessions.forget(session.id);
        logger.info(`${this.shortName} ended the abandoned turn of ACP session ${session.id} (${session.dropped} late update(s) dropped)`);
      });
  }

  /** Starts the agent and opens a session (where a missing login shows, and what it offers), which it then closes. */
  async check(): Promise<string> {
    const agent = await this.ensureAgent().catch((error: unknown) => Promise.reject(this.sandboxWords(error)));
    const response = await agent.sessions.open(this.options.cwd).catch((error: unknown) => Promise.reject(this.sandboxWords(error)));
    this.options.choices.offered(modelsOf(response), modesOf(response));
    agent.sessions.close(response.sessionId);
    return `${this.description}${agent.info?.title ? ` (${agent.info.title}${agent.info.version ? ` ${agent.info.version}` : ''})` : ''} is running (pid ${agent.child.pid}), answered ACP initialize and opened a session`;
  }

  async controls(discover: boolean): Promise<AgentControls> {
    if (discover && !this.options.choices.snapshot('').known) await this.check();
    return this.options.choices.snapshot(this.shortName);
  }

  /** Forgets a coordinator session: its idle ACP sessions, its conversations' (`key#conversation`) too. */
  endSession(sessionKey: string): void {
    const agent = this.live;
    if (!agent) return;
    agent.sessions.end(sessionKey);
    this.restartIfHoldingTooMany(agent);
  }

  /**
   * An agent that cannot close sessions keeps every one it made (Claude Code's older adapter, a
   * process each): once it holds more unused ones than idle ones are kept, its processes are more
   * than those sessions could need, and no turn runs on it, it is restarted. Conversations come
   * back with session/load or their earlier turns.
   */
  private restartIfHoldingTooMany(agent: Agent): void {
    const max = this.options.maxIdleSessions;
    if (agent.sessions.heldUnused <= max || agent.sessions.busy) return;
    // Sessions that cost nothing but a little memory (Gemini CLI's) are not worth a restart: only
    // an agent whose sessions are processes of their own is.
    const processes = agent.child.pid === undefined ? undefined : processTreeSize(agent.child.pid);
    if (processes !== undefined && processes <= max + 3) return;
    this.options.logger.info(`restarting ${this.shortName}: it cannot close ACP sessions and holds ${agent.sessions.heldUnused} that are no longer used`);
    if (this.live === agent) {
      this.live = undefined;
      this.agent = undefined;
    }
    agent.stopping = true;
    agent.connection.close();
    agent.child.stdin?.end();
    void stopGroup(agent.child);
  }

  /**
   * Stops the agent and everything it started (its process group: SIGTERM, then SIGKILL after a
   * grace period) — also one still starting, without waiting for its initialize deadline.
   */
  async close(): Promise<void> {
    this.closed = true;
    const agent = this.live;
    const starting = this.agent;
    this.agent = undefined;
    this.live = undefined;
    this.terminals.closeAll();
    if (agent) {
      agent.stopping = true;
      agent.connection.close();
      agent.child.stdin?.end();
    }
    const children = new Set([agent?.child, this.startingChild]);
    this.startingChild = undefined;
    await Promise.all([...children].map((child) => child && stopGroup(child)));
    await starting?.catch(() => undefined);
  }

  /** The process of the latest start, until it has answered initialize or died. */
  private startingChild: AgentProcess['child'] | undefined;

  private ensureAgent(): Promise<Agent> {
    if (this.live && !isAlive(this.live)) {
      this.live = undefined;
      this.agent = undefined;
    }
    if (!this.agent) {
      this.agent = this.options.startGate ? this.options.startGate(() => this.start()) : this.start();
      // A failed start is not cached: the next turn tries again.
      this.agent.catch(() => {
        this.agent = undefined;
      });
    }
    return this.agent;
  }

  private async start(): Promise<Agent> {
    const first = await this.startProcess();
    // Recognised only now (behind a wrapper): started again, once, in the sandbox it needs.
    const again = await this.options.launch.relaunch?.(first.info?.name);
    if (!again) return first;
    // Its exit is this start's doing, not a death for the next turn to start it again after.
    if (this.live === first) this.live = undefined;
    first.stopping = true;
    first.connection.close();
    await stopGroup(first.child, 0);
    if (this.closed) throw new AgentError(`${this.shortName} was stopped while it started`);
    this.options.launch = again;
    return this.startProcess();
  }

  private async startProcess(): Promise<Agent> {
    const { command, logger } = this.options;
    const { launch } = this.options;
    logger.info(`starting ${this.description}${launch.program !== command[0] ? ` (in a sandbox: ${launch.program})` : ''}`);
    // A workspace folder that is gone (or an editor's made-up root) must not read as "no such agent".
    let cwd = this.options.cwd;
    if (cwd !== undefined && !isDirectory(cwd)) {
      logger.warn(`the workspace folder ${cwd} is not a directory here: starting ${this.description} in ${process.cwd()}`);
      cwd = undefined;
    }
    let started: Agent | undefined;
    // The handlers reach the sessions once they are made (the process answers initialize first).
    const sessions = () => started?.sessions;
    // Its sandbox as the machine is now (a start after a crash, or again): a socket gone since is no mount to make.
    const made = () => ({ program: launch.program, args: launch.args, ...(launch.wrap && launch.plan ? launch.wrap(command, launch.plan.cwd) : {}) });
    const process_ = await startAgentProcess(
      { command, ...made(), remake: launch.wrap ? made : undefined, sandboxed: launch.sandboxed, cwd, env: launch.env ?? this.options.env, logger, clientVersion: this.options.clientVersion, requestTimeoutMs: this.options.requestTimeoutMs, name: this.shortName },
      {
        update: (update) => this.onUpdate(sessions(), update),
        permission: (params) => this.onPermission(sessions(), params),
        readTextFile: (params) => this.onReadTextFile(sessions(), params),
        writeTextFile: (params) => this.onWriteTextFile(sessions(), params),
        terminal: (method, params) => this.terminals.handle(method, params, (sessionId) => sessions()?.turnOf(sessionId, 'a terminal request')),
        elicit: (params) => answerElicitation(params, (sessionId) => sessions()?.turnOf(sessionId, 'a question'), this.shortName, logger),
        died: (agent) => {
          // The next turn starts a fresh agent.
          started?.sessions.forgetAll();
          if (started === agent && this.live === agent) {
            this.live = undefined;
            this.agent = undefined;
          }
        },
      },
      (error) => error instanceof FileAccessError && error.notFound,
      (child) => (this.startingChild = child),
    );
    this.startingChild = undefined;
    started = Object.assign(process_, {
      sessions: new AgentSessions(process_, {
        ...this.options,
        requestTimeoutMs: this.options.requestTimeoutMs,
        maxIdleSessions: this.options.maxIdleSessions,
        identity: () => this.identity,
        choices: this.options.choices,
        readForSession: async (sessionId, path, line, limit) => (await this.onReadTextFile(sessions(), { sessionId, path, line, limit })).content,
      }),
    });
    this.agentName = process_.info?.title ?? process_.info?.name ?? this.agentName;
    this.acpName = process_.info?.name ?? this.acpName;
    this.options.choices.acpName = this.acpName;
    this.live = started;
    return started;
  }

  private onUpdate(sessions: AgentSessions | undefined, notification: SessionUpdate): void {
    if (!sessions) return;
    const update = notification.update;
    // What the session is, whether or not a turn runs on it.
    if (update.sessionUpdate === 'available_commands_update') {
      const listed = update.availableCommands.map((command) => ({ name: command.name, description: command.description ?? '', hint: command.input?.hint ?? '' }));
      if (this.options.choices.setCommands(listed)) this.options.logger.info(`${this.shortName} lists ${listed.length} command(s): ${oneLine(listed.map((command) => `/${command.name}`).join(' '), 200)}`);
      return;
    }
    if (update.sessionUpdate === 'current_mode_update') sessions.modeChanged(notification.sessionId, update.currentModeId);
    if (update.sessionUpdate === 'config_option_update') sessions.optionsChanged(notification.sessionId, update.configOptions);
    const turn = sessions.turnOf(notification.sessionId, 'an update');
    if (!turn) return;
    applyTurnUpdate(turn, update, (ids) => this.terminals.outputOf(ids));
  }

  private async onReadTextFile(sessions: AgentSessions | undefined, params: unknown): Promise<acp.ReadTextFileResponse> {
    const parsed = readTextFileParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`fs/read_text_file needs an absolute path and, optionally, line and limit of at least 1: ${z.problems(parsed.error)}`);
    const { sessionId, path, line, limit } = parsed.data;
    const turn = sessions?.turnOf(sessionId, 'a file read');
    if (!turn || turn.signal.aborted) throw new FileAccessError(`cannot read ${path}: the session has no turn running`);
    return { content: await this.deciding(turn, () => turn.sink.readFile({ path, line: line ?? undefined, limit: limit ?? undefined }, turn.signal)) };
  }

  private async onWriteTextFile(sessions: AgentSessions | undefined, params: unknown): Promise<acp.WriteTextFileResponse> {
    const parsed = writeTextFileParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`fs/write_text_file needs an absolute path and the content: ${z.problems(parsed.error)}`);
    const { sessionId, path, content } = parsed.data;
    const turn = sessions?.turnOf(sessionId, 'a file write');
    if (!turn || turn.signal.aborted) throw new FileAccessError(`cannot write ${path}: the session has no turn running`);
    await this.deciding(turn, () => turn.sink.writeFile({ path, content }, turn.signal));
    return {};
  }

  /** Something the user may be deciding: the agent's silence meanwhile is not news. */
  private async deciding<T>(turn: ActiveTurn, work: () => Promise<T>): Promise<T> {
    turn.deciding++;
    try {
      return await work();
    } finally {
      turn.deciding--;
      turn.lastWord = Date.now();
    }
  }

  private async onPermission(sessions: AgentSessions | undefined, params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const turn = sessions?.turnOf(params.sessionId, 'a permission request');
    if (!turn || turn.signal.aborted) return { outcome: { outcome: 'cancelled' } };
    turn.asked.add(params.toolCall.toolCallId);
    const parsed = permissionToolCall.safeParse(params.toolCall);
    // Everything the agent said about the call counts: the request may repeat only its id.
    const call = parsed.success ? rememberCall(turn.calls, parsed.data) : (turn.calls.get(params.toolCall.toolCallId) ?? { locations: [], writes: [], diffs: [], terminals: [] });
    // An agent that shows its change only as a patch in its input (Cline's apply_patch) is reviewed by it, and named by its files.
    const cwd = turn.cwd || this.options.cwd || process.cwd();
    const edits = call.diffs.length ? call.diffs : patchEdits(call.input, cwd);
    const tool = patchTitle(call.title ?? turn.tools.get(params.toolCall.toolCallId)?.tool ?? 'tool', edits, cwd);
    const decision = await this.deciding(turn, () =>
      turn.sink.permission(
        {
          tool,
          toolCallId: params.toolCall.toolCallId,
          kind: call.kind ?? 'other',
          title: call.title ? tool : '',
          parameters: flattenParameters(call.input),
          input: call.input,
          locations: call.locations,
          writes: call.writes,
          ...(edits.length ? { edits } : {}),
        },
        turn.signal,
      ),
    );
    if (decision === 'reject') turn.refused.push(`${KIND_WORDS[call.kind ?? ''] ?? 'call'} “${oneLine(tool, 120)}”`);
    else this.terminals.approved(params.sessionId, call.input);
    const option = chooseOption(params.options, decision);
    return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export { chooseOption, flattenParameters } from './acpMessages.js';
export { orDeath, type Launch } from './acpProcess.js';
