/**
 * `buckley-lsp acp`: an ACP agent for ACP clients (Zed's agent panel, JetBrains, CodeCompanion,
 * avante, agent-shell), backed by our coordinator — embedded, or the team's — and whatever agent
 * or model it drives. `register()` binds one handler per ACP method; a prompt's turn is turn.ts,
 * what the client is told and asked goes through its Panel (panel.ts).
 *
 * Sessions start in the mode that asks before each change (the panel's user came to have work
 * done); "Ask" only reads. There is no mode that runs tools unasked: every tool call the agent
 * asks about is judged and, past `approvals.autoApprove`, put to the user.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { PROTOCOL_VERSION, RequestError, type AgentApp, type AuthMethod, type AgentContext, type InitializeRequest, type InitializeResponse, type NewSessionRequest, type NewSessionResponse, type PromptRequest, type PromptResponse, type LoadSessionRequest, type LoadSessionResponse, type ResumeSessionRequest, type SetSessionConfigOptionRequest, type SetSessionConfigOptionResponse, type SetSessionModeRequest } from '@agentclientprotocol/sdk';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { CoordinatorSession } from '../bridge/link/calls.js';
import { panelOf, type Panel } from './panel.js';
import { commandsOf, configOptionsOf, MODEL_OPTION } from './controls.js';
import { faceModeOf, modesOf } from './modes.js';
import type { AgentControls } from '../wire/contract.js';
import { runTurn, type FaceSession } from './turn.js';
import { INVALID_REQUEST, MAX_CLIENT_MESSAGE_BYTES, OVERSIZED_METHOD, oversizedParams, oversizedWords } from '../jsonLines.js';
import * as z from '../schema.js';
import { paramsBy } from '../invalidParams.js';
import type { SessionHistory } from './history.js';

const cancelParams = z.object({ sessionId: z.string() });
const refuseParams = (words: string) => RequestError.invalidParams(undefined, words);

export interface FaceOptions {
  config(): Config;
  logger: Logger;
  version: string;
  /** What answers behind us, in a few words ("Gemini CLI", "the coordinator at host:port"). */
  behind(): string;
  /** The coordinator, connected (the first time: started, for the embedded one). */
  coordinator(): Promise<CoordinatorSession>;
  /** The client said who it is (initialize's clientInfo). */
  clientNamed?(name: string): void;
  /** The first session's workspace: where the embedded coordinator starts its agent. */
  workspaceChosen?(cwd: string): void;
  /** The first session's MCP servers (the client's): the agent's, with every session. */
  mcpServersGiven?(servers: NewSessionRequest['mcpServers']): void;
  /** The sessions kept across restarts. */
  history: SessionHistory;
  /** The ways to give the agent behind its key (ACP authMethods). */
  auth: AuthWay[];
  env: NodeJS.ProcessEnv;
}

/** A way to authenticate, and what is missing for it now (undefined: ready, as far as can be told without starting the agent). */
export interface AuthWay {
  method: AuthMethod;
  missing(env: NodeJS.ProcessEnv): string | undefined;
  /** Only the agent, started, can tell (a login it keeps in its own state). */
  askTheAgent?: boolean;
}

/** How long asking what the agent offers may take (its start included). */
const CONTROLS_TIMEOUT_MS = 60_000;
/** How long a new session waits to offer the agent's own modes (its start): past it, Task and Ask only. */
const MODES_WAIT_MS = 10_000;

/** A message of the client's too large to read (`../jsonLines.ts`), in words: what to send instead. */
export function tooLarge(message: { method: string; bytes: number }): string {
  return `${oversizedWords(message, MAX_CLIENT_MESSAGE_BYTES, 'buckley-lsp acp')} (a prompt carries at most 20 MB of images; attach large files by link)`;
}

/**
 * A session's workspace as the client names it (session/new, load, resume): an absolute path to a
 * folder of this machine, where the client runs us. Anything else would be resolved against our
 * own folder, or leave the agent nothing to work in.
 */
function workspaceOf(cwd: string): string {
  if (!isAbsolute(cwd)) throw RequestError.invalidParams(undefined, `cwd must be an absolute path, not ${cwd}`);
  let folder = false;
  try {
    folder = statSync(cwd).isDirectory();
  } catch {
    // Not there: said below.
  }
  if (!folder) throw RequestError.invalidParams(undefined, `cwd ${cwd} is not a folder on this machine: open the session in a project's folder`);
  return cwd;
}

export class AcpFace {
  private capabilities: InitializeRequest['clientCapabilities'];
  private readonly sessions = new Map<string, FaceSession>();
  private panel: { of: AgentContext; panel: Panel } | undefined;
  /** What the agent offers, as last told. */
  private offered: AgentControls | undefined;

  constructor(private readonly options: FaceOptions) {}

  register(app: AgentApp): AgentApp {
    return app
      .onRequest('initialize', ({ params }) => this.initialize(params))
      .onRequest('authenticate', ({ params }) => this.authenticate(params.methodId))
      .onRequest('session/new', ({ params, client }) => this.newSession(params, this.panelOf(client)))
      .onRequest('session/set_config_option', ({ params }) => this.setConfigOption(params))
      .onRequest('session/list', ({ params }) => ({ sessions: this.options.history.list(params.cwd) }))
      .onRequest('session/load', ({ params, client }) => this.reopen(params, this.panelOf(client), true))
      .onRequest('session/resume', ({ params, client }) => this.reopen(params, this.panelOf(client), false))
      .onRequest('session/close', ({ params }) => this.close(params.sessionId))
      .onRequest('session/set_mode', ({ params, client }) => this.setMode(params, this.panelOf(client)))
      .onRequest('session/prompt', ({ params, client }) => this.prompt(params, this.panelOf(client)))
      .onNotification('session/cancel', ({ params }) => this.cancel(params.sessionId))
      // ACP's cancel is a notification; a client that sends it as a request still means it.
      .onRequest('session/cancel', paramsBy(cancelParams, refuseParams), ({ params }) => {
        this.cancel(params.sessionId);
        return null;
      })
      .onRequest(OVERSIZED_METHOD, paramsBy(oversizedParams, refuseParams), ({ params }) => {
        throw new RequestError(INVALID_REQUEST, tooLarge(params));
      })
      // A notification too large (the log has said it): nothing to answer.
      .onNotification(OVERSIZED_METHOD, paramsBy(oversizedParams, refuseParams), () => undefined);
  }

  /** Cancels every turn running (the client went away). */
  stop(): void {
    for (const session of this.sessions.values()) session.turn?.abort();
  }

  private initialize(params: InitializeRequest): InitializeResponse {
    this.capabilities = params.clientCapabilities;
    if (params.clientInfo?.name) this.options.clientNamed?.(params.clientInfo.name);
    this.options.logger.info(`serving ${params.clientInfo?.name ?? 'an ACP client'}${params.clientInfo?.version ? ` ${params.clientInfo.version}` : ''} (ACP ${params.protocolVersion}); files: ${this.capabilities?.fs?.readTextFile ? 'the client\'s' : 'the disk\'s'}`);
    return {
      protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
      agentInfo: { name: 'buckley-lsp', title: `Buckley: ${this.options.behind()}`, version: this.options.version },
      agentCapabilities: { loadSession: true, sessionCapabilities: { list: {}, resume: {}, close: {} }, promptCapabilities: { embeddedContext: true, image: true, audio: false } },
      authMethods: this.options.auth.map((way) => way.method),
    };
  }

  /** The way chosen, checked: what it lacks in words (which variable, where to set it), or the agent's own refusal. */
  private async authenticate(methodId: string): Promise<Record<string, never>> {
    const way = this.options.auth.find((candidate) => candidate.method.id === methodId);
    if (!way) throw RequestError.invalidParams(undefined, `no way to authenticate called ${methodId}: ${this.options.auth.map((candidate) => candidate.method.id).join(', ') || 'none is needed'}`);
    const missing = way.missing(this.options.env);
    if (missing) throw RequestError.authRequired(undefined, missing);
    if (way.askTheAgent) {
      const outcome = await this.controls({ discover: true });
      if (outcome.status === 'failed') throw RequestError.authRequired(undefined, `${this.options.behind()} did not start: ${outcome.failure.message}`);
    }
    return {};
  }

  /** A session the client is done with: its turn cancelled, nothing more kept running for it (its history stays, for session/load). */
  private close(sessionId: string): Record<string, never> {
    this.sessionOf(sessionId).turn?.abort();
    this.sessions.delete(sessionId);
    return {};
  }

  private async newSession(params: NewSessionRequest, panel: Panel): Promise<NewSessionResponse> {
    const session: FaceSession = { id: `buckley-${randomUUID()}`, cwd: workspaceOf(params.cwd), mode: 'task' };
    if (this.sessions.size === 0) {
      this.options.workspaceChosen?.(session.cwd);
      if (params.mcpServers.length) this.options.mcpServersGiven?.(params.mcpServers);
    }
    this.sessions.set(session.id, session);
    // The agent's own modes are offered once it has said what they are (it starts for that).
    if (!this.offered) await this.controls({ discover: true }, MODES_WAIT_MS);
    // After the answer: its commands, which an agent lists once a session of it has lived.
    setImmediate(() => void this.announceControls(session, panel));
    return { sessionId: session.id, modes: { currentModeId: session.mode, availableModes: modesOf(this.offered) } };
  }

  /**
   * The agent's commands and models, told to the panel when they are new to it: at first (its
   * agent started to ask them), and after each turn (an agent lists its commands once a session
   * of it has lived).
   */
  private async announceControls(session: FaceSession, panel: Panel, discover = true): Promise<void> {
    const outcome = await this.controls({ discover });
    if (outcome.status !== 'completed') {
      if (outcome.status === 'failed') this.options.logger.warn(`what the agent offers is not known: ${outcome.failure.message}`);
      return;
    }
    const commands = commandsOf(outcome.controls);
    const configOptions = configOptionsOf(outcome.controls);
    const told = JSON.stringify({ commands, configOptions });
    if (session.told === told) return;
    session.told = told;
    panel.update(session.id, { sessionUpdate: 'available_commands_update', availableCommands: commands });
    if (configOptions.length) panel.update(session.id, { sessionUpdate: 'config_option_update', configOptions });
  }

  private async setConfigOption(params: SetSessionConfigOptionRequest): Promise<SetSessionConfigOptionResponse> {
    this.sessionOf(params.sessionId);
    if (params.configId !== MODEL_OPTION || typeof params.value !== 'string') throw RequestError.invalidParams(undefined, `no option ${params.configId}: the one option is ${MODEL_OPTION}`);
    const outcome = await this.controls({ discover: false, model: params.value });
    if (outcome.status === 'failed') throw RequestError.invalidParams(undefined, outcome.failure.message);
    if (outcome.status === 'cancelled') throw RequestError.invalidRequest(undefined, 'the model was not chosen: the coordinator did not answer in time');
    return { configOptions: configOptionsOf(outcome.controls) };
  }

  /** What the agent offers (with `model` or `mode`: chosen first), kept as it was told. */
  private async controls(call: { discover: boolean; model?: string; mode?: string }, timeoutMs = CONTROLS_TIMEOUT_MS) {
    const coordinator = await this.options.coordinator();
    const outcome = await coordinator.agentControls({ ...call, signal: AbortSignal.timeout(timeoutMs), timeoutMs });
    if (outcome.status === 'completed') {
      this.offered = outcome.controls;
    }
    return outcome;
  }

  /**
   * A session kept from before (a restart, another window): open again in its workspace and mode;
   * with `replay` (session/load), its turns told to the client first, as ACP asks.
   */
  private async reopen(params: LoadSessionRequest | ResumeSessionRequest, panel: Panel, replay: boolean): Promise<LoadSessionResponse> {
    const cwd = workspaceOf(params.cwd);
    const stored = this.options.history.get(params.sessionId);
    if (!stored) throw RequestError.resourceNotFound(params.sessionId);
    const session: FaceSession = this.sessions.get(stored.sessionId) ?? { id: stored.sessionId, cwd, mode: faceModeOf(stored.mode, this.offered) ?? 'task', reopened: true };
    this.sessions.set(session.id, session);
    if (replay) {
      for (const turn of stored.turns) {
        panel.update(session.id, { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: turn.question } });
        panel.update(session.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: turn.answer } });
      }
      await panel.sent();
    }
    setImmediate(() => void this.announceControls(session, panel));
    return { modes: { currentModeId: session.mode, availableModes: modesOf(this.offered) } };
  }

  private setMode(params: SetSessionModeRequest, panel: Panel): Record<string, never> {
    const session = this.sessionOf(params.sessionId);
    const mode = faceModeOf(params.modeId, this.offered);
    if (!mode) throw RequestError.invalidParams(undefined, `no mode ${params.modeId}: the modes are ${modesOf(this.offered).map((offered) => offered.id).join(', ')}`);
    session.mode = mode;
    panel.update(session.id, { sessionUpdate: 'current_mode_update', currentModeId: session.mode });
    return {};
  }

  private async prompt(params: PromptRequest, panel: Panel): Promise<PromptResponse> {
    const session = this.sessionOf(params.sessionId);
    if (session.turn) throw RequestError.invalidRequest(undefined, 'this session is still answering the last prompt: wait for it, or cancel it');
    const turn = new AbortController();
    session.turn = turn;
    try {
      const coordinator = await this.options.coordinator();
      const config = this.options.config();
      // A session opened again: its earlier turns go along, for an agent that no longer holds it.
      const earlier = session.reopened ? this.options.history.earlier(session.id, Math.floor(config.context.maxBytes / 2)) : undefined;
      const end = await runTurn({ coordinator, panel, config, logger: this.options.logger }, session, params.prompt, turn.signal, earlier);
      if (end.answered) this.options.history.note(session, end.answered.question, end.answered.answer);
      void this.announceControls(session, panel, false);
      return end.response;
    } finally {
      session.turn = undefined;
    }
  }

  private cancel(sessionId: string): void {
    this.sessions.get(sessionId)?.turn?.abort();
  }

  private sessionOf(sessionId: string): FaceSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.resourceNotFound(sessionId);
    return session;
  }

  /** The client's panel (one connection, one client). */
  private panelOf(client: AgentContext): Panel {
    if (this.panel?.of !== client) this.panel = { of: client, panel: panelOf(client, this.capabilities, this.options.logger) };
    return this.panel.panel;
  }
}
