/**
 * The ACP sessions of one agent process: made (authenticating where the agent asks for it and
 * says how), loaded back for a conversation followed up after a restart, each in the mode of its
 * intent (modes.ts), lent to one turn at a time and kept idle for its conversation's next turn —
 * at most `maxIdleSessions` of them, the one idle longest closed first (with `session/close`
 * where the agent offers it; otherwise it holds it on, and is counted so the driver can restart
 * it). Updates and requests reach the turn running on their session, and no other.
 */
import type * as acp from '@agentclientprotocol/sdk';
import type { Logger } from '../../logger.js';
import type { TurnUsage, WireToolExecution } from '../../wire/contract.js';
import { withEarlierTurns } from '../../wire/prompt.js';
import { errorLine, errorText, inWords, keysOf, knownOf, type AgentIdentity } from './acpErrors.js';
import type { CallFacts } from './acpMessages.js';
import { isAlive, orDeath, withDeadline, type AgentProcess } from './acpProcess.js';
import { AgentError, type AgentTurn, type TurnSink } from './driver.js';
import { modelsOf, modesOf, unaskedSwitchesOf, type SessionModes } from './modes.js';
import type { AgentChoices } from './choices.js';
import { sessionMcpServers, type McpServers } from './mcp.js';
import type { EditorMcpServer, EditorSlot } from './editorMcp.js';
import { EDITOR_MCP_NAME } from './editorMcpNames.js';
import type { EditorState } from './editorState.js';
import type { SessionStore } from './sessionStore.js';

export interface AcpSession {
  id: string;
  /** The coordinator session it belongs to. */
  key: string;
  /** The turn running on it, from `session/prompt` until the agent answers; the only receiver of its updates. */
  turn?: ActiveTurn;
  /** Its agent did not end a cancelled turn in time: never used again. */
  abandoned?: boolean;
  /** Updates and permission requests that arrived with no turn of ours running on it. */
  dropped: number;
  /** Being loaded (`session/load`): the agent replays its history, which is not a turn's answer. */
  loading?: boolean;
  /** Its modes (its mode is set before each turn, for the turn's intent: choices.ts). */
  modes?: SessionModes;
  /** The models it offers (its model is set before each turn: choices.ts). */
  models?: SessionModes;
  /** Its switches that let tools run unasked (Cline's `auto_approve`), each with whether it is on: turned off before each turn. */
  switches?: Map<string, boolean>;
  /** Its place on our editor MCP server, released when the session is forgotten. */
  editorSlot?: EditorSlot;
}

export interface ActiveTurn {
  sink: TurnSink;
  readOnly: boolean;
  /** What the editor showed when the turn began (for the editor MCP server's tools), and the workspace. */
  editor?: EditorState;
  cwd?: string;
  signal: AbortSignal;
  text: string;
  /** A new tool call (or the agent's thinking) came since the last piece of the answer: the next piece starts a paragraph. */
  textInterrupted: boolean;
  tools: Map<string, WireToolExecution>;
  /** What the agent said about each tool call so far, for judging its permission request. */
  calls: Map<string, CallFacts>;
  /** Tool calls declined during the turn, in a few words each. */
  refused: string[];
  /** Tool calls a permission was asked for. */
  asked: Set<string>;
  /** Tool calls that changed or ran something without a permission request, by title. */
  unasked: Map<string, string>;
  /** What the agent says the turn cost (its latest `usage_update`). */
  usage?: TurnUsage;
  /** When the agent last said anything in this turn. */
  lastWord: number;
  /** Permission requests being decided: silence then is the user's, not the agent's. */
  deciding: number;
}

/** What the sessions need of their driver. */
export interface SessionHost {
  command: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  requestTimeoutMs: number;
  maxIdleSessions: number;
  sessionStore?: SessionStore;
  logger: Logger;
  /** The agent as the user knows it, now. */
  identity(): AgentIdentity;
  /** What the agent offers, and the model wanted (shared by its processes). */
  choices: AgentChoices;
  /** MCP servers for every session (buckley.agent.mcpServers). */
  mcpServers?: McpServers;
  /** Our editor MCP server, offered to every session (buckley.agent.editorTools). */
  editorMcp?: EditorMcpServer;
  /** A file read for a session's turn, as its `fs/read_text_file` is read. */
  readForSession?(sessionId: string, path: string, line: number | undefined, limit: number | undefined): Promise<string>;
}

export class AgentSessions {
  /** Every ACP session of ours, by id, until its last turn has ended. */
  readonly byId = new Map<string, AcpSession>();
  /** Sessions whose turn has ended, free for the next turn of their coordinator session. */
  private readonly idle = new Map<string, AcpSession[]>();
  /** Sessions we let go that the agent could not close: it holds them still. */
  heldUnused = 0;
  /** MCP servers left out for a transport the agent does not take (said once each). */
  private readonly mcpSaid = new Set<string>();

  constructor(
    private readonly agent: AgentProcess,
    private readonly host: SessionHost,
  ) {}

  private get name(): string {
    return this.host.identity().title;
  }

  /**
   * An ACP session for this coordinator session: its idle one, so a conversation keeps its
   * history; a new one when all are busy, because an ACP session runs one prompt at a time
   * and a slow ask must not hold up the next. A conversation followed up with no session of it
   * here (a restart, one closed idle) gets its session back where the agent can load sessions,
   * else a new one, and the prompt carries the earlier turns.
   */
  async acquire(turn: AgentTurn): Promise<{ session: AcpSession; prompt: AgentTurn }> {
    const idle = this.idle.get(turn.sessionKey);
    const reused = idle?.pop();
    if (idle?.length === 0) this.idle.delete(turn.sessionKey);
    if (reused) return { session: reused, prompt: turn };
    const { sessionStore } = this.host;
    const agentName = this.host.command.join(' ');
    const keeps = this.agent.canResume || this.agent.canLoad;
    // A task taken up again names its session; a conversation followed up, the one it remembers.
    const remembered = turn.resume && keeps ? turn.resume : turn.conversationKey && turn.earlier && keeps ? sessionStore?.get(agentName, turn.conversationKey) : undefined;
    if (remembered && !this.byId.has(remembered)) {
      const loaded = await this.load(turn, remembered);
      if (loaded) return { session: loaded, prompt: turn };
    }
    const editorSlot = await this.editorSlot();
    let response: acp.NewSessionResponse;
    try {
      response = await this.open(turn.cwd, editorSlot);
    } catch (error) {
      editorSlot?.release();
      throw error;
    }
    if (this.byId.has(response.sessionId)) {
      editorSlot?.release();
      // Updates are told apart by session id alone: two turns must never share one.
      throw new AgentError(`${this.name} answered session/new with the id of a session still in use (${response.sessionId})`);
    }
    const session: AcpSession = { id: response.sessionId, key: turn.sessionKey, dropped: 0, editorSlot };
    this.bindEditor(session);
    this.byId.set(session.id, session);
    await this.settle(session, response, turn.readOnly);
    if (turn.conversationKey && keeps) sessionStore?.set(agentName, turn.conversationKey, session.id);
    return { session, prompt: { ...turn, prompt: withEarlierTurns(turn.prompt, turn.earlier) } };
  }

  /**
   * `session/new`; an agent that answers it needs authentication (ACP `auth_required`) is
   * authenticated with a way it offers whose variables are set (Codex's OPENAI_API_KEY), else the
   * user is told how.
   */
  async open(cwd: string | undefined, editorSlot?: EditorSlot): Promise<acp.NewSessionResponse> {
    const { agent, host } = this;
    const timeoutMs = host.requestTimeoutMs;
    const request = () =>
      withDeadline(
        orDeath(agent, agent.connection.agent.request('session/new', { cwd: cwd || host.cwd || process.cwd(), mcpServers: this.mcpServers(editorSlot) })),
        timeoutMs,
        `${this.name} did not answer ACP session/new within ${timeoutMs} ms`,
      );
    try {
      return await request();
    } catch (error) {
      if (error instanceof AgentError) throw error;
      if (!isAuthRequired(error)) throw new AgentError(this.failedAt('session/new', error));
      const env = host.env ?? process.env;
      const method = agent.authMethods.find((candidate) => candidate.vars?.length && candidate.vars.every((name) => env[name]));
      if (!method) throw new AgentError(this.needsLogin());
      host.logger.info(`${this.name} needs authentication: with "${method.name}" (${method.vars!.join(', ')} is set)`);
      try {
        await withDeadline(orDeath(agent, agent.connection.agent.request('authenticate', { methodId: method.id })), timeoutMs, `${this.name} did not answer ACP authenticate within ${timeoutMs} ms`);
        return await request();
      } catch (retry) {
        if (retry instanceof AgentError) throw retry;
        throw new AgentError(isAuthRequired(retry) ? this.needsLogin() : this.failedAt('session/new', retry));
      }
    }
  }

  private mcpServers(editorSlot: EditorSlot | undefined): acp.McpServer[] {
    const configured = sessionMcpServers(this.host.mcpServers, this.agent.mcpTransports ?? { http: false, sse: false }, this.host.logger, this.mcpSaid);
    return editorSlot ? [...configured, editorSlot.server] : configured;
  }

  /** A place on our editor MCP server for a new session; none where it is off, or a server of the settings has its name. */
  private async editorSlot(): Promise<EditorSlot | undefined> {
    const { editorMcp, mcpServers } = this.host;
    if (!editorMcp || mcpServers?.[EDITOR_MCP_NAME]) return undefined;
    return editorMcp.slot(this.agent.mcpTransports?.http ?? false);
  }

  /** The session's editor tools answer with its running turn (none between turns). */
  private bindEditor(session: AcpSession): void {
    const read = this.host.readForSession;
    session.editorSlot?.bind(() => {
      const turn = session.turn;
      if (!turn || turn.signal.aborted || !read) return undefined;
      turn.lastWord = Date.now();
      return { state: turn.editor, cwd: turn.cwd ?? this.host.cwd ?? process.cwd(), read: (path, line, limit) => read(session.id, path, line, limit) };
    });
  }

  /** Forgets a session: updates from it are no longer a turn's, its editor tools answer no more. */
  forget(sessionId: string): void {
    this.byId.get(sessionId)?.editorSlot?.release();
    this.byId.delete(sessionId);
  }

  /** Forgets every session (the agent process is gone). */
  forgetAll(): void {
    for (const id of [...this.byId.keys()]) this.forget(id);
  }

  /** An agent's failure at a setup request: its reason (the error's data, else its stderr), and what to do. */
  private failedAt(what: string, error: unknown): string {
    const said = errorText(error);
    const stderr = errorLine(this.agent.stderrTail);
    // Claude Code's adapter says only this when the CLI it runs stopped before answering.
    const stopped = /^query closed before response received$/i.test(said.trim()) ? `the process it runs stopped before answering (${said})` : said;
    const generic = /^internal error$/i.test(said.trim()) || stopped !== said;
    return inWords(`${this.name} failed at ${what}`, generic && stderr ? `${stopped} — its last output: ${stderr}` : stopped, this.host.identity());
  }

  private needsLogin(): string {
    const known = knownOf(this.host.identity());
    const keys = keysOf(this.host.identity());
    const ways = this.agent.authMethods.map((method) => (method.vars?.length ? `${method.name} (set ${method.vars.join(' or ')})` : method.name));
    const key = keys.length ? `set ${keys[0]} with buckley.agent.env` : 'give it its key with buckley.agent.env';
    return `${this.name} needs you to log in before it answers: ${key}${known?.login ? `, or ${known.login}` : ''}${ways.length ? ` (the ways it offers: ${ways.join('; ')})` : ''}. \`buckley-lsp doctor\` checks it.`;
  }

  /**
   * A conversation's remembered session back: `session/resume` where the agent offers it (no
   * history replayed), else `session/load`; undefined (logged) where the agent cannot.
   */
  private async load(turn: AgentTurn, sessionId: string): Promise<AcpSession | undefined> {
    const { agent, host } = this;
    const session: AcpSession = { id: sessionId, key: turn.sessionKey, dropped: 0, loading: true, editorSlot: await this.editorSlot() };
    this.bindEditor(session);
    this.byId.set(sessionId, session);
    const method = agent.canResume ? 'session/resume' : 'session/load';
    try {
      const response = await withDeadline(
        orDeath(agent, agent.connection.agent.request<unknown>(method, { sessionId, cwd: turn.cwd || host.cwd || process.cwd(), mcpServers: this.mcpServers(session.editorSlot) })),
        host.requestTimeoutMs,
        `${this.name} did not answer ACP ${method} within ${host.requestTimeoutMs} ms`,
      );
      host.logger.info(`${agent.canResume ? 'resumed' : 'loaded'} the ACP session ${sessionId} of ${turn.resume ? 'a task taken up again' : 'a conversation followed up'} (${session.dropped} update(s) of its history replayed)`);
      session.loading = false;
      session.dropped = 0;
      await this.settle(session, response, turn.readOnly);
      return session;
    } catch (error) {
      if (error instanceof AgentError && !isAlive(agent)) throw error;
      this.forget(sessionId);
      host.logger.info(`${this.name} could not ${agent.canResume ? 'resume' : 'load'} the ACP session ${sessionId} (${errorText(error)}): a new one gets the conversation's earlier turns`);
      return undefined;
    }
  }

  /** A session made or loaded: what it offers is noted, its mode for its intent and the model wanted are set. */
  private async settle(session: AcpSession, response: unknown, readOnly: boolean): Promise<void> {
    const models = modelsOf(response);
    const modes = modesOf(response);
    this.host.choices.offered(models, modes);
    session.models = models;
    session.modes = modes;
    session.switches = unaskedSwitchesOf(response);
    await this.keepMode(session, readOnly);
    await this.keepModel(session);
  }

  /** Sets the model wanted (choices.ts) on the session before its turn, where the agent offers it and it is not set already. */
  async keepModel(session: AcpSession): Promise<void> {
    const models = session.models;
    const model = models && this.host.choices.modelFor(models);
    if (!models || !model || models.current === model.id) return;
    const { agent, host } = this;
    const request = models.configId
      ? agent.connection.agent.request('session/set_config_option', { sessionId: session.id, configId: models.configId, value: model.id } as acp.SetSessionConfigOptionRequest)
      : agent.connection.agent.request('session/set_model', { sessionId: session.id, modelId: model.id });
    try {
      await withDeadline(orDeath(agent, request), host.requestTimeoutMs, `${this.name} did not answer within ${host.requestTimeoutMs} ms`);
      models.current = model.id;
      host.logger.info(`${this.name} uses the model "${model.id}" in its ACP session ${session.id}`);
    } catch (error) {
      if (error instanceof AgentError && !isAlive(agent)) throw error;
      host.logger.warn(`${this.name} did not take the model "${model.id}": ${errorText(error)}`);
    }
  }

  /**
   * Puts the session in the mode for its turn's intent (choices.ts, modes.ts) where it is not in it
   * (a new session; a mode chosen since; the agent left it), or in the one its caller chose for
   * this turn (`forTurn`) where the rules allow it. A choice that changed is logged once.
   */
  async keepMode(session: AcpSession, readOnly: boolean, forTurn?: string): Promise<void> {
    await this.keepSwitchesOff(session, readOnly);
    const modes = session.modes;
    if (!modes) return;
    const { agent, host } = this;
    const intent = readOnly ? 'asks' : 'tasks';
    const { choice, changed } = host.choices.modeFor(modes, readOnly, forTurn);
    if (!choice.mode) {
      if (changed) host.logger.warn(`${this.name}: ${choice.why}; its ${intent} stay in mode ${modes.current ?? '(none said)'} — the sandbox still holds`);
      return;
    }
    if (changed) host.logger.info(`${this.name} runs ${intent} in its mode "${choice.mode.id}" (${choice.why})`);
    const wanted = choice.mode.id;
    if (modes.current === wanted) return;
    const request = modes.configId
      ? agent.connection.agent.request('session/set_config_option', { sessionId: session.id, configId: modes.configId, value: wanted } as acp.SetSessionConfigOptionRequest)
      : agent.connection.agent.request('session/set_mode', { sessionId: session.id, modeId: wanted });
    try {
      await withDeadline(orDeath(agent, request), host.requestTimeoutMs, `${this.name} did not answer within ${host.requestTimeoutMs} ms`);
      modes.current = wanted;
    } catch (error) {
      if (error instanceof AgentError && !isAlive(agent)) throw error;
      host.logger.warn(`${this.name} did not take its mode "${wanted}": ${errorText(error)} — the sandbox still holds`);
    }
  }

  /**
   * Turns off the session's switches that let tools run unasked where they are on — a turn's
   * tools are put to the user (and an ask's are judged) only if the agent asks — unless
   * `buckley.agent.modes.<intent>` is set, the expert's word on what the agent may do.
   */
  private async keepSwitchesOff(session: AcpSession, readOnly: boolean): Promise<void> {
    const on = [...(session.switches ?? [])].filter(([, value]) => value).map(([id]) => id);
    if (!on.length || this.host.choices.modeIsSet(readOnly)) return;
    const { agent, host } = this;
    for (const configId of on) {
      const request = agent.connection.agent.request('session/set_config_option', { sessionId: session.id, configId, type: 'boolean', value: false } as acp.SetSessionConfigOptionRequest);
      try {
        await withDeadline(orDeath(agent, request), host.requestTimeoutMs, `${this.name} did not answer within ${host.requestTimeoutMs} ms`);
        session.switches!.set(configId, false);
        host.logger.info(`${this.name}'s "${configId}" lets its tools run unasked: turned off in its ACP session ${session.id}, so that they are put to you (buckley.agent.modes.${readOnly ? 'ask' : 'task'} leaves it as it is)`);
      } catch (error) {
        if (error instanceof AgentError && !isAlive(agent)) throw error;
        host.logger.warn(`${this.name} did not turn off its "${configId}", which lets its tools run unasked: ${errorText(error)} — the sandbox still holds`);
      }
    }
  }

  /** What the agent says its session's mode now is (`current_mode_update`). */
  modeChanged(sessionId: string, current: string | undefined): void {
    const session = this.byId.get(sessionId);
    if (session?.modes && current) session.modes.current = current;
  }

  /** What the agent says its session's options now are (`config_option_update`): its mode, model and switches. */
  optionsChanged(sessionId: string, configOptions: unknown[]): void {
    const session = this.byId.get(sessionId);
    if (!session) return;
    this.modeChanged(sessionId, modesOf({ configOptions })?.current);
    const model = modelsOf({ configOptions })?.current;
    if (session.models && model) session.models.current = model;
    for (const [id, on] of unaskedSwitchesOf({ configOptions }) ?? []) (session.switches ??= new Map()).set(id, on);
  }

  /** The turn an update or request of `sessionId` belongs to; none (and it is logged) when no turn of ours runs there. */
  turnOf(sessionId: string, what: string): ActiveTurn | undefined {
    const session = this.byId.get(sessionId);
    if (session?.turn) {
      session.turn.lastWord = Date.now();
      return session.turn;
    }
    if (session) session.dropped++;
    // A session being loaded replays its history: expected, and not a turn's answer.
    if (session?.loading) return undefined;
    if (!session || session.dropped === 1) {
      const why = !session ? 'a session that is not ours (or was given up)' : session.abandoned ? 'a session whose turn was given up' : 'a session whose turn has ended';
      this.host.logger.info(`dropped ${what} from ${why} (ACP session ${sessionId}); later ones from it are counted, not logged`);
    }
    return undefined;
  }

  /** Whether a turn runs on any session. */
  get busy(): boolean {
    return [...this.byId.values()].some((session) => session.turn);
  }

  /**
   * A turn's session, its turn ended: kept for the next turn of its conversation (unless given
   * up); with more than maxIdleSessions kept, the one idle longest is closed (its conversation
   * starts afresh, or loads its session back).
   */
  release(session: AcpSession): void {
    if (session.abandoned || !isAlive(this.agent) || !this.byId.has(session.id)) return;
    this.idle.delete(session.key); // re-inserted: the most recently used key comes last
    this.idle.set(session.key, [...(this.idle.get(session.key) ?? []), session]);
    let kept = 0;
    for (const sessions of this.idle.values()) kept += sessions.length;
    for (const [key, sessions] of this.idle) {
      if (kept <= this.host.maxIdleSessions) break;
      this.host.logger.debug(`closing the ACP session ${sessions[0]!.id} of ${key}: idle longest of ${kept}`);
      this.closeIdle(key, sessions[0]);
      kept--;
    }
  }

  /** Forgets a coordinator session: its idle ACP sessions, its conversations' (`key#conversation`) too. */
  end(sessionKey: string): void {
    for (const key of [...this.idle.keys()]) {
      if (key === sessionKey || key.startsWith(`${sessionKey}#`)) this.closeIdle(key);
    }
  }

  private closeIdle(key: string, only?: AcpSession): void {
    for (const session of this.idle.get(key) ?? []) {
      if (only && session !== only) continue;
      this.forget(session.id);
      this.close(session.id);
    }
    const left = only ? (this.idle.get(key) ?? []).filter((session) => session !== only) : [];
    if (left.length) this.idle.set(key, left);
    else this.idle.delete(key);
  }

  /** `session/close` where the agent offers it; else the agent holds the session on (counted). */
  close(sessionId: string): void {
    const { agent, host } = this;
    if (!agent.canClose) {
      this.heldUnused++;
      return;
    }
    withDeadline(agent.connection.agent.request('session/close', { sessionId }), host.requestTimeoutMs, 'session/close timed out').catch((error: unknown) =>
      host.logger.debug(`session/close ${sessionId}: ${errorText(error)}`),
    );
  }
}

/** ACP's `auth_required` (-32000), or an error that says authentication is required. */
function isAuthRequired(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === -32000 || /authenticat(ion|e) (is )?required/i.test(errorText(error));
}
