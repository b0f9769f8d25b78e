/**
 * The ACP driver: spawns an Agent Client Protocol agent (`buckley acp`, `gemini --acp`,
 * codex-acp, …) and talks JSON-RPC over its stdio with @agentclientprotocol/sdk. One ACP
 * session per coordinator session; message chunks become the answer, tool calls and plans
 * become progress, permission requests go to the coordinator to decide. If the agent crashes
 * or exits, the running turn fails with a clear error and the next turn starts it again.
 *
 * A session belongs to one turn at a time, from `session/prompt` until the agent answers it:
 * updates and permission requests reach that turn and no other. A session whose turn has not
 * ended is never lent to another turn; one whose agent ignores `session/cancel` past the grace
 * period is given up for good (closed where the agent can close sessions) and replaced, and
 * whatever it still sends is dropped and logged.
 */
import type { ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type * as acp from '@agentclientprotocol/sdk';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import type { WireToolExecution } from '../../wire/contract.js';
import { withEarlierTurns } from '../../wire/prompt.js';
import { AgentError, type AgentDriver, type AgentTurn, type FileEdit, type PermissionDecision, type TurnResult, type TurnSink } from './driver.js';
import { changeSummary, unifiedDiff } from '../../edits.js';
import { spawnGroup, stopGroup } from './processes.js';
import { takeSessionUpdates } from './updateStream.js';
import { seconds } from '../../text.js';
import { FileAccessError } from '../files.js';
import type { SessionStore } from './sessionStore.js';

export interface AcpDriverOptions {
  command: string[];
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
}

interface Agent {
  child: ChildProcess;
  connection: acp.ClientConnection;
  /** Rejects when the process exits or the connection breaks. */
  died: Promise<never>;
  /** Why it died, once it has. */
  death?: AgentError;
  /** Calls waiting on it that its death must fail (see `orDeath`). */
  readonly deathListeners: Set<(error: AgentError) => void>;
  /** Every ACP session of ours, by id, until its last turn has ended. */
  readonly sessions: Map<string, AcpSession>;
  /** Sessions whose turn has ended, free for the next turn of their coordinator session. */
  readonly idle: Map<string, AcpSession[]>;
  /** The agent offers `session/close`. */
  canClose: boolean;
  /** The agent offers `session/load`: a conversation's session comes back after a restart. */
  canLoad: boolean;
  /** We are stopping it: its exit is expected, not news. */
  stopping?: boolean;
}

interface AcpSession {
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
}

interface ActiveTurn {
  sink: TurnSink;
  readOnly: boolean;
  signal: AbortSignal;
  text: string;
  tools: Map<string, WireToolExecution>;
  /** What the agent said about each tool call so far, for judging its permission request. */
  calls: Map<string, CallFacts>;
}

interface CallFacts {
  title?: string;
  kind?: string;
  input?: unknown;
  locations: string[];
  writes: string[];
  /** The changes it shows (ACP `diff` content), latest per file. */
  diffs: FileEdit[];
}

const STDERR_LINES_KEPT = 50;
const CANCEL_GRACE_MS = 5_000;
/** How long an agent whose first output was not JSON-RPC still has to answer initialize. */
const NOT_ACP_GRACE_MS = 5_000;

/**
 * session/update as this driver reads it, one plain object schema per kind it uses: updates are
 * checked with these at the boundary, before the SDK sees the agent's output (updateStream.ts),
 * since parsing the whole ACP union for every update was most of a chatty agent's cost.
 */
const notificationOf = <Update extends z.core.$ZodShape>(update: Update) => z.object({ sessionId: z.string(), update: z.object(update) });
const toolCallFields = {
  toolCallId: z.string(),
  title: z.nullish(z.string()),
  status: z.nullish(z.string()),
  kind: z.nullish(z.string()),
  rawInput: z.optional(z.unknown()),
  locations: z.nullish(z.array(z.object({ path: z.string() }))),
  content: z.nullish(z.array(z.object({ type: z.string(), path: z.optional(z.string()), oldText: z.nullish(z.string()), newText: z.optional(z.string()) }))),
};
const toolUpdate = notificationOf({
  sessionUpdate: z.enum(['tool_call', 'tool_call_update']),
  ...toolCallFields,
  rawOutput: z.optional(z.unknown()),
});
/** The tool call of a permission request, read the same way (the SDK checked it against ACP). */
const permissionToolCall = z.object(toolCallFields);

/** ACP fs/write_text_file, as far as we read it. */
const writeTextFileParams = z.object({ sessionId: z.string(), path: z.string().check(z.minLength(1)), content: z.string() });

/** JSON-RPC error codes for a read: ACP's "resource not found", and any other failure. */
const RESOURCE_NOT_FOUND = -32002;
const INTERNAL_ERROR = -32603;

/** ACP fs/read_text_file, as far as we read it. */
const readTextFileParams = z.object({
  sessionId: z.string(),
  path: z.string().check(z.minLength(1)),
  line: z.optional(z.nullable(z.int().check(z.minimum(1)))),
  limit: z.optional(z.nullable(z.int().check(z.minimum(1)))),
});
type ToolCallFields = z.infer<typeof permissionToolCall>;
const updateSchemas = {
  agent_message_chunk: notificationOf({ sessionUpdate: z.literal('agent_message_chunk'), content: z.object({ type: z.string(), text: z.optional(z.string()) }) }),
  tool_call: toolUpdate,
  tool_call_update: toolUpdate,
  plan: notificationOf({ sessionUpdate: z.literal('plan'), entries: z.array(z.object({ content: z.string(), status: z.string() })) }),
};
const otherUpdate = z.pipe(z.object({ sessionId: z.string() }), z.transform((notification) => ({ ...notification, update: { sessionUpdate: 'other' as const } })));
type SessionUpdate = z.infer<(typeof updateSchemas)[keyof typeof updateSchemas]> | z.infer<typeof otherUpdate>;

/** What is read of an update, checked; undefined (and ignored) when it is not what ACP says. */
function parseSessionUpdate(params: unknown): SessionUpdate | undefined {
  const kind = (params as { update?: { sessionUpdate?: unknown } } | null)?.update?.sessionUpdate;
  const schema = typeof kind === 'string' && Object.hasOwn(updateSchemas, kind) ? updateSchemas[kind as keyof typeof updateSchemas] : otherUpdate;
  const parsed = schema.safeParse(params);
  return parsed.success ? parsed.data : undefined;
}

/** Idle ACP sessions kept for their conversations' next turns; beyond it the one idle longest is closed. */
export const MAX_IDLE_SESSIONS = 32;

/** The longest line an agent may write (the SDK's own default). */
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

export class AcpDriver implements AgentDriver {
  readonly writesFiles = true;
  readonly description: string;
  readonly shortName: string;
  private agent: Promise<Agent> | undefined;
  private live: Agent | undefined;
  /** The process of the latest start, until it has answered initialize or died. */
  private starting: ChildProcess | undefined;
  private readonly stderrTail: string[] = [];

  constructor(private readonly options: AcpDriverOptions) {
    this.description = `ACP agent \`${options.command.join(' ')}\``;
    this.shortName = shortCommandName(options.command);
  }

  async run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    if (signal.aborted) return { text: '', stopReason: 'cancelled' };
    const agent = await this.ensureAgent();
    const { session, prompt } = await this.acquireSession(agent, turn);
    try {
      return await this.prompt(agent, session, prompt, sink, signal);
    } finally {
      // Lent again only once its turn has ended (the agent answered session/prompt).
      if (!session.abandoned && isAlive(agent) && agent.sessions.has(session.id)) this.keepIdle(agent, session);
    }
  }

  private async prompt(agent: Agent, session: AcpSession, turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const active: ActiveTurn = { sink, readOnly: turn.readOnly, signal, text: '', tools: new Map(), calls: new Map() };
    session.turn = active;
    const onAbort = () => {
      agent.connection.agent.notify('session/cancel', { sessionId: session.id }).catch(() => undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // An agent that ignores session/cancel must not hold the turn forever.
    const gaveUp = abortedAfter(signal, this.options.cancelGraceMs ?? CANCEL_GRACE_MS);
    const answered = orDeath(agent, agent.connection.agent.request('session/prompt', { sessionId: session.id, prompt: [{ type: 'text', text: turn.prompt }] }));
    try {
      const response = await Promise.race([answered, gaveUp.promise]);
      if (response === GAVE_UP) {
        this.abandon(agent, session, answered);
        return { text: active.text, stopReason: 'cancelled' };
      }
      const stopReason = signal.aborted ? 'cancelled' : mapStopReason(response.stopReason);
      return { text: active.text, stopReason };
    } catch (error) {
      if (signal.aborted) return { text: active.text, stopReason: 'cancelled' };
      if (error instanceof AgentError) throw error;
      // A closed connection usually means the process is exiting: report its exit status.
      const death = await orDeath(agent, delay(1_000)).catch((reason: unknown) => reason);
      throw death instanceof AgentError ? death : new AgentError(`${this.description} failed: ${errorText(error)}`);
    } finally {
      gaveUp.dispose();
      signal.removeEventListener('abort', onAbort);
      session.turn = undefined;
    }
  }

  /**
   * Gives up a session whose agent goes on with a cancelled turn: it is never lent again, closed
   * where the agent can close sessions, and forgotten once the agent does end the turn.
   */
  private abandon(agent: Agent, session: AcpSession, answered: Promise<unknown>): void {
    const { logger } = this.options;
    session.abandoned = true;
    logger.warn(
      `${this.description} did not end a cancelled turn within ${seconds(this.options.cancelGraceMs ?? CANCEL_GRACE_MS)}: its ACP session ${session.id} is given up${agent.canClose ? ' and closed' : ''}; what it still sends is dropped`,
    );
    if (agent.canClose) {
      withDeadline(agent.connection.agent.request('session/close', { sessionId: session.id }), this.options.requestTimeoutMs ?? 30_000, 'session/close timed out').catch(
        (error: unknown) => logger.debug(`session/close ${session.id}: ${errorText(error)}`),
      );
    }
    void answered
      .catch(() => undefined)
      .finally(() => {
        agent.sessions.delete(session.id);
        logger.info(`${this.description} ended the abandoned turn of ACP session ${session.id} (${session.dropped} late update(s) dropped)`);
      });
  }

  async check(): Promise<string> {
    const agent = await this.ensureAgent();
    return `${this.description} is running (pid ${agent.child.pid}) and answered ACP initialize`;
  }

  /** Forgets a coordinator session: its idle ACP sessions, its conversations' (`key#conversation`) too. */
  endSession(sessionKey: string): void {
    const agent = this.live;
    if (!agent) return;
    for (const key of [...agent.idle.keys()]) {
      if (key === sessionKey || key.startsWith(`${sessionKey}#`)) this.closeIdle(agent, key);
    }
  }

  private closeIdle(agent: Agent, key: string, only?: AcpSession): void {
    for (const session of agent.idle.get(key) ?? []) {
      if (only && session !== only) continue;
      agent.sessions.delete(session.id);
      if (agent.canClose) agent.connection.agent.request('session/close', { sessionId: session.id }).catch(() => undefined);
    }
    const left = only ? (agent.idle.get(key) ?? []).filter((session) => session !== only) : [];
    if (left.length) agent.idle.set(key, left);
    else agent.idle.delete(key);
  }

  /**
   * Keeps an ended turn's session for the next turn of its conversation; with more than
   * MAX_IDLE_SESSIONS kept, the one idle longest is closed (its conversation starts afresh).
   */
  private keepIdle(agent: Agent, session: AcpSession): void {
    agent.idle.delete(session.key); // re-inserted: the most recently used key comes last
    agent.idle.set(session.key, [...(agent.idle.get(session.key) ?? []), session]);
    let kept = 0;
    for (const sessions of agent.idle.values()) kept += sessions.length;
    for (const [key, sessions] of agent.idle) {
      if (kept <= MAX_IDLE_SESSIONS) break;
      this.options.logger.debug(`closing the ACP session ${sessions[0]!.id} of ${key}: idle longest of ${kept}`);
      this.closeIdle(agent, key, sessions[0]);
      kept--;
    }
  }

  /**
   * Stops the agent and everything it started (its process group: SIGTERM, then SIGKILL after a
   * grace period) — also one still starting, without waiting for its initialize deadline.
   */
  async close(): Promise<void> {
    const agent = this.live;
    const starting = this.starting;
    this.agent = undefined;
    this.live = undefined;
    if (agent) {
      agent.stopping = true;
      agent.connection.close();
      agent.child.stdin?.end();
    }
    await Promise.all([...new Set([agent?.child, starting])].map((child) => child && stopGroup(child)));
  }

  private ensureAgent(): Promise<Agent> {
    if (this.live && !isAlive(this.live)) {
      this.live = undefined;
      this.agent = undefined;
    }
    if (!this.agent) {
      this.agent = this.start();
      // A failed start is not cached: the next turn tries again.
      this.agent.catch(() => {
        this.agent = undefined;
      });
    }
    return this.agent;
  }

  private async start(): Promise<Agent> {
    // The SDK loads with the first agent, not with the coordinator: an idle server stays small.
    const sdk = await import('@agentclientprotocol/sdk');
    const { command, logger } = this.options;
    const [program, ...args] = command as [string, ...string[]];
    logger.info(`starting ${this.description}`);
    // A workspace folder that is gone (or an editor's made-up root) must not read as "no such agent".
    let cwd = this.options.cwd;
    if (cwd !== undefined && !isDirectory(cwd)) {
      logger.warn(`the workspace folder ${cwd} is not a directory here: starting ${this.description} in ${process.cwd()}`);
      cwd = undefined;
    }
    const child = spawnGroup(program, args, {
      cwd,
      env: this.options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.starting = child;
    this.stderrTail.length = 0;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (!line.trim()) continue;
        logger.debug(`agent stderr: ${line}`);
        this.stderrTail.push(line);
        if (this.stderrTail.length > STDERR_LINES_KEPT) this.stderrTail.shift();
      }
    });

    const died = new Promise<never>((_, reject) => {
      child.once('error', (error) => {
        reject(new AgentError(`cannot start ${this.description}: ${error.message}. Check that the command exists and is executable (setting buckley.agent.command or BUCKLEY_AGENT).`));
      });
      child.once('exit', (code, signal) => {
        const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const said = errorLine(this.stderrTail);
        reject(new AgentError(`${this.description} ${why}.${said ? ` Its last output: ${said}` : ''}${notAcp()}`));
      });
    });
    // An agent must speak ACP (JSON-RPC, one message per line) on stdout: anything else first says
    // it is not an ACP agent, or not started as one (a usage text, a banner). Some agents print a
    // banner and then speak ACP after all: they get NOT_ACP_GRACE_MS to answer initialize.
    let firstOutput: string | undefined;
    let notAcpTimer: NodeJS.Timeout | undefined;
    let giveUpNotAcp: (error: AgentError) => void = () => undefined;
    const notSpeakingAcp = new Promise<never>((_, reject) => (giveUpNotAcp = reject));
    notSpeakingAcp.catch(() => undefined);
    const watchOutput = (chunk: Buffer) => {
      const line = chunk.toString('utf8').split('\n').find((text) => text.trim());
      if (line === undefined) return;
      child.stdout?.off('data', watchOutput);
      firstOutput = line.trim();
      if (notAcp()) notAcpTimer = setTimeout(() => giveUpNotAcp(new AgentError(`${this.description} did not answer ACP initialize.${notAcp()}`)), NOT_ACP_GRACE_MS);
    };
    child.stdout?.on('data', watchOutput);
    const notAcp = () =>
      firstOutput !== undefined && !firstOutput.startsWith('{')
        ? ` It is not speaking ACP: it wrote \`${firstOutput.slice(0, 80)}\` where ACP has JSON-RPC — is this an ACP agent, started in its ACP mode (\`gemini --acp\`, \`buckley acp\`)? Check buckley.agent.command (or BUCKLEY_AGENT).`
        : '';

    const sessions = new Map<string, AcpSession>();
    // Updates are read here, with our schema, before the SDK (see updateStream.ts).
    const onUpdate = (params: unknown) => {
      const update = parseSessionUpdate(params);
      if (update) this.onUpdate(sessions, update);
      else logger.debug(`ignored a session/update that is not ACP: ${JSON.stringify(params)?.slice(0, 200)}`);
    };
    const stream = sdk.ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      takeSessionUpdates(Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>, onUpdate, MAX_MESSAGE_BYTES),
      { maxMessageBytes: MAX_MESSAGE_BYTES },
    );
    child.stdin?.on('error', () => undefined); // EPIPE after a crash is reported through `died`
    const connection = sdk
      .client({ name: 'buckley-lsp' })
      .onRequest('session/request_permission', (ctx) => this.onPermission(sessions, ctx.params))
      // A refused or failed read is an error the agent can read: JSON-RPC's, with our words.
      .onRequest('fs/read_text_file', (ctx) =>
        this.onReadTextFile(sessions, ctx.params).catch((error: unknown) => {
          throw new sdk.RequestError(error instanceof FileAccessError && error.notFound ? RESOURCE_NOT_FOUND : INTERNAL_ERROR, errorText(error));
        }),
      )
      .onRequest('fs/write_text_file', (ctx) =>
        this.onWriteTextFile(sessions, ctx.params).catch((error: unknown) => {
          throw new sdk.RequestError(INTERNAL_ERROR, errorText(error));
        }),
      )
      .connect(stream);

    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
    const agent: Agent = { child, connection, died, sessions, idle: new Map(), canClose: false, canLoad: false, deathListeners: new Set() };
    died.catch((error: AgentError) => {
      agent.death = error;
      for (const listener of agent.deathListeners) listener(error);
      if (agent.stopping) logger.debug(error.message);
      else logger.warn(error.message);
      connection.close(error);
      // The next turn starts a fresh agent.
      if (this.live === agent) {
        this.live = undefined;
        this.agent = undefined;
      }
    });
    try {
      const init = await withDeadline(
        Promise.race([
          connection.agent.request('initialize', {
            protocolVersion: sdk.PROTOCOL_VERSION,
            // Reads and writes go through the coordinator: the editor's buffers first, writes approved (../files.ts).
            clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
            clientInfo: { name: 'buckley-lsp', version: this.options.clientVersion },
          }),
          died,
          notSpeakingAcp,
        ]),
        timeoutMs,
        () => `${this.description} did not answer ACP initialize within ${timeoutMs} ms (setting buckley.agent.requestTimeoutMs).${notAcp()}`,
      );
      agent.canClose = Boolean(init.agentCapabilities?.sessionCapabilities?.close);
      agent.canLoad = Boolean(init.agentCapabilities?.loadSession);
      logger.info(`${this.description} speaks ACP v${init.protocolVersion}`);
    } catch (error) {
      if (error instanceof AgentError) {
        void stopGroup(child, 0);
        throw error;
      }
      // The connection closed under us: say why the process went away, if it did.
      const death = await Promise.race([died.catch((reason: unknown) => reason), delay(1_000)]);
      void stopGroup(child, 0);
      throw death instanceof AgentError ? death : new AgentError(`${this.description} failed to start: ${errorText(error)}`);
    } finally {
      clearTimeout(notAcpTimer);
    }
    this.live = agent;
    return agent;
  }

  /**
   * An ACP session for this coordinator session: its idle one, so a conversation keeps its
   * history; a new one when all are busy, because an ACP session runs one prompt at a time
   * and a slow ask must not hold up the next. A conversation followed up with no session of it
   * here (a restart, one closed idle) gets its session back where the agent can load sessions,
   * else a new one, and the prompt carries the earlier turns.
   */
  private async acquireSession(agent: Agent, turn: AgentTurn): Promise<{ session: AcpSession; prompt: AgentTurn }> {
    const idle = agent.idle.get(turn.sessionKey);
    const reused = idle?.pop();
    if (idle?.length === 0) agent.idle.delete(turn.sessionKey);
    if (reused) return { session: reused, prompt: turn };
    const { sessionStore } = this.options;
    const agentName = this.options.command.join(' ');
    const remembered = turn.conversationKey && turn.earlier && agent.canLoad ? sessionStore?.get(agentName, turn.conversationKey) : undefined;
    if (remembered && !agent.sessions.has(remembered)) {
      const loaded = await this.loadSession(agent, turn, remembered);
      if (loaded) return { session: loaded, prompt: turn };
    }
    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
    const response = await withDeadline(
      orDeath(agent, agent.connection.agent.request('session/new', { cwd: turn.cwd || this.options.cwd || process.cwd(), mcpServers: [] })),
      timeoutMs,
      `${this.description} did not answer ACP session/new within ${timeoutMs} ms`,
    );
    if (agent.sessions.has(response.sessionId)) {
      // Updates are told apart by session id alone: two turns must never share one.
      throw new AgentError(`${this.description} answered session/new with the id of a session still in use (${response.sessionId})`);
    }
    const session: AcpSession = { id: response.sessionId, key: turn.sessionKey, dropped: 0 };
    agent.sessions.set(session.id, session);
    if (turn.conversationKey && agent.canLoad) sessionStore?.set(agentName, turn.conversationKey, session.id);
    return { session, prompt: { ...turn, prompt: withEarlierTurns(turn.prompt, turn.earlier) } };
  }

  /** `session/load` of a conversation's remembered session; undefined (logged) where the agent cannot. */
  private async loadSession(agent: Agent, turn: AgentTurn, sessionId: string): Promise<AcpSession | undefined> {
    const session: AcpSession = { id: sessionId, key: turn.sessionKey, dropped: 0, loading: true };
    agent.sessions.set(sessionId, session);
    const timeoutMs = this.options.requestTimeoutMs ?? 30_000;
    try {
      await withDeadline(
        orDeath(agent, agent.connection.agent.request('session/load', { sessionId, cwd: turn.cwd || this.options.cwd || process.cwd(), mcpServers: [] })),
        timeoutMs,
        `${this.description} did not answer ACP session/load within ${timeoutMs} ms`,
      );
      this.options.logger.info(`loaded the ACP session ${sessionId} of a conversation followed up (${session.dropped} update(s) of its history replayed)`);
      session.loading = false;
      session.dropped = 0;
      return session;
    } catch (error) {
      if (error instanceof AgentError && !isAlive(agent)) throw error;
      agent.sessions.delete(sessionId);
      this.options.logger.info(`${this.description} could not load the ACP session ${sessionId} (${errorText(error)}): a new one gets the conversation's earlier turns`);
      return undefined;
    }
  }

  /** The turn an update or request of `sessionId` belongs to; none (and it is logged) when no turn of ours runs there. */
  private turnOf(sessions: Map<string, AcpSession>, sessionId: string, what: string): ActiveTurn | undefined {
    const session = sessions.get(sessionId);
    if (session?.turn) return session.turn;
    if (session) session.dropped++;
    // A session being loaded replays its history: expected, and not a turn's answer.
    if (session?.loading) return undefined;
    if (!session || session.dropped === 1) {
      const why = !session ? 'a session that is not ours (or was given up)' : session.abandoned ? 'a session whose turn was given up' : 'a session whose turn has ended';
      this.options.logger.info(`dropped ${what} from ${why} (ACP session ${sessionId}); later ones from it are counted, not logged`);
    }
    return undefined;
  }

  private onUpdate(sessions: Map<string, AcpSession>, notification: SessionUpdate): void {
    const turn = this.turnOf(sessions, notification.sessionId, 'an update');
    if (!turn) return;
    const update = notification.update;
    switch (update.sessionUpdate) {
      case 'agent_message_chunk':
        if (update.content.type === 'text' && update.content.text) {
          turn.text += update.content.text;
          turn.sink.text(update.content.text);
        }
        break;
      case 'tool_call':
      case 'tool_call_update': {
        const previous = turn.tools.get(update.toolCallId);
        const execution: WireToolExecution = {
          id: update.toolCallId,
          tool: update.title ?? previous?.tool ?? update.kind ?? 'tool',
          status: update.status ?? previous?.status ?? 'pending',
          kind: update.kind ? toolKind(update.kind) : (previous?.kind ?? 'other'),
          input: update.rawInput !== undefined ? describeValue(update.rawInput) : (previous?.input ?? ''),
          output: update.rawOutput !== undefined ? describeValue(update.rawOutput) : (previous?.output ?? ''),
        };
        turn.tools.set(update.toolCallId, execution);
        rememberCall(turn, update);
        turn.sink.tool(execution);
        break;
      }
      case 'plan': {
        const done = update.entries.filter((entry) => entry.status === 'completed').length;
        const current = update.entries.find((entry) => entry.status === 'in_progress')?.content;
        turn.sink.plan(done, update.entries.length, current);
        break;
      }
      default:
        break;
    }
  }

  private async onReadTextFile(sessions: Map<string, AcpSession>, params: unknown): Promise<acp.ReadTextFileResponse> {
    const parsed = readTextFileParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`fs/read_text_file needs an absolute path and, optionally, line and limit of at least 1: ${z.prettifyError(parsed.error)}`);
    const { sessionId, path, line, limit } = parsed.data;
    const turn = this.turnOf(sessions, sessionId, 'a file read');
    if (!turn || turn.signal.aborted) throw new FileAccessError(`cannot read ${path}: the session has no turn running`);
    return { content: await turn.sink.readFile({ path, line: line ?? undefined, limit: limit ?? undefined }, turn.signal) };
  }

  private async onWriteTextFile(sessions: Map<string, AcpSession>, params: unknown): Promise<acp.WriteTextFileResponse> {
    const parsed = writeTextFileParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`fs/write_text_file needs an absolute path and the content: ${z.prettifyError(parsed.error)}`);
    const { sessionId, path, content } = parsed.data;
    const turn = this.turnOf(sessions, sessionId, 'a file write');
    if (!turn || turn.signal.aborted) throw new FileAccessError(`cannot write ${path}: the session has no turn running`);
    await turn.sink.writeFile({ path, content }, turn.signal);
    return {};
  }

  private async onPermission(sessions: Map<string, AcpSession>, params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const turn = this.turnOf(sessions, params.sessionId, 'a permission request');
    if (!turn || turn.signal.aborted) return { outcome: { outcome: 'cancelled' } };
    const parsed = permissionToolCall.safeParse(params.toolCall);
    // Everything the agent said about the call counts: the request may repeat only its id.
    const call = parsed.success ? rememberCall(turn, parsed.data) : (turn.calls.get(params.toolCall.toolCallId) ?? { locations: [], writes: [], diffs: [] });
    const decision = await turn.sink.permission(
      {
        tool: call.title ?? turn.tools.get(params.toolCall.toolCallId)?.tool ?? 'tool',
        kind: call.kind ?? 'other',
        title: call.title ?? '',
        parameters: flattenParameters(call.input),
        input: call.input,
        locations: call.locations,
        writes: call.writes,
        ...(call.diffs.length ? { diff: reviewOf(call.diffs), edits: call.diffs } : {}),
      },
      turn.signal,
    );
    const option = chooseOption(params.options, decision);
    return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : { outcome: { outcome: 'cancelled' } };
  }
}

/** Adds what an update says about a tool call to what the turn knows of it; returns the whole. */
function rememberCall(turn: ActiveTurn, update: ToolCallFields): CallFacts {
  const known = turn.calls.get(update.toolCallId) ?? { locations: [], writes: [], diffs: [] };
  const diffs = (update.content ?? []).flatMap((item) => (item.type === 'diff' && item.path && item.newText !== undefined ? [{ path: item.path, oldText: item.oldText ?? undefined, newText: item.newText }] : []));
  const facts: CallFacts = {
    title: update.title ?? known.title,
    kind: update.kind ?? known.kind,
    input: update.rawInput !== undefined ? update.rawInput : known.input,
    locations: update.locations?.length ? [...new Set([...known.locations, ...update.locations.map((location) => location.path)])] : known.locations,
    writes: update.content?.length ? [...new Set([...known.writes, ...update.content.flatMap((item) => (item.type === 'diff' && item.path ? [item.path] : []))])] : known.writes,
    diffs: diffs.length ? [...known.diffs.filter((known) => !diffs.some((diff) => diff.path === known.path)), ...diffs] : known.diffs,
  };
  turn.calls.set(update.toolCallId, facts);
  return facts;
}

/** The changes of a tool call, as the user reviews them: one unified diff, lines added and removed. */
function reviewOf(edits: FileEdit[]): { text: string; added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const edit of edits) {
    const change = changeSummary(edit.oldText ?? '', edit.newText);
    added += change.added;
    removed += change.removed;
  }
  return { text: edits.map((edit) => unifiedDiff(edit.path, edit.oldText ?? '', edit.newText)).join(''), added, removed };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The line of an agent's stderr that says what went wrong: the error itself (`Error: Cannot find
 * module …`, `ModuleNotFoundError: …`, `panic: …`), not the stack trace below it or the runtime's
 * version after it; else the last line that is not part of a trace.
 */
export function errorLine(lines: readonly string[]): string | undefined {
  const error = /^\s*(?:Uncaught\s+)?(?:[A-Z]\w*(?:Error|Exception)\b(?:\s*\[[\w-]+\])?:|panic:|fatal:|error:|Error:)\s*\S/i;
  const errors = lines.filter((line) => error.test(line));
  if (errors.length) return errors.at(-1)!.trim();
  const noise = /^\s+at\s|^\s*File "|^Node\.js v|^\s*[{}\]^]+\s*$|^\s*\w+: .*,$|^\s*(throw|raise)\b|^node:internal|^Require stack|^- /;
  return lines.filter((line) => line.trim() && !noise.test(line)).at(-1)?.trim();
}

/** The option matching the decision; "always" falls back to "once" when the agent offers only that. */
export function chooseOption(options: acp.PermissionOption[], decision: PermissionDecision): acp.PermissionOption | undefined {
  const byKind = (kind: acp.PermissionOptionKind) => options.find((option) => option.kind === kind);
  switch (decision) {
    case 'allow_always':
      return byKind('allow_always') ?? byKind('allow_once');
    case 'allow_once':
      return byKind('allow_once') ?? byKind('allow_always');
    case 'reject':
      return byKind('reject_once') ?? byKind('reject_always');
  }
}

const INTERPRETERS = new Set(['node', 'nodejs', 'npx', 'bun', 'bunx', 'deno', 'python', 'python3', 'uvx', 'sh', 'bash', 'env']);

/** `node /x/agent.js` → `agent.js`; `/usr/bin/gemini --acp` → `gemini`. */
export function shortCommandName(command: string[]): string {
  const words = command.map((word) => basename(word));
  const program = words.find((word) => !INTERPRETERS.has(word) && !word.startsWith('-'));
  return program ?? words[0] ?? 'agent';
}

function isAlive(agent: Agent): boolean {
  return !agent.connection.signal.aborted && agent.child.exitCode === null && agent.child.signalCode === null;
}

/**
 * `work`, failed by the agent's death should that come first. Unlike a Promise.race with the
 * long-lived `died` promise, this leaves nothing attached to it once the work has settled
 * (a race per turn kept a reaction per turn for the agent's whole life).
 */
export function orDeath<T>(agent: Pick<Agent, 'death' | 'deathListeners'>, work: Promise<T>): Promise<T> {
  if (agent.death) return Promise.reject(agent.death);
  return new Promise<T>((resolve, reject) => {
    agent.deathListeners.add(reject);
    work.then(resolve, reject).finally(() => agent.deathListeners.delete(reject));
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function toolKind(kind: string): string {
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

function mapStopReason(reason: acp.StopReason): TurnResult['stopReason'] {
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

function describeValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? '';
}

/** Tool input as the flat string map the wire carries (`command`, `path`, …). */
export function flattenParameters(input: unknown): Record<string, string> {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) return { input: describeValue(input) };
  return Object.fromEntries(Object.entries(input).map(([key, value]) => [key, describeValue(value)]));
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'message' in error) return String((error as { message: unknown }).message);
  return String(error);
}

function withDeadline<T>(promise: Promise<T>, ms: number, message: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError(typeof message === 'string' ? message : message())), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const GAVE_UP = Symbol('gave up');

/**
 * Resolves `graceMs` after the signal aborts. Disposed when the turn ends, so a finished turn
 * leaves no listener or timer behind (a timer would keep the turn's whole request alive).
 */
function abortedAfter(signal: AbortSignal, graceMs: number): { promise: Promise<typeof GAVE_UP>; dispose(): void } {
  let timer: NodeJS.Timeout | undefined;
  let arm = () => {};
  const promise = new Promise<typeof GAVE_UP>((resolve) => {
    arm = () => {
      timer = setTimeout(() => resolve(GAVE_UP), graceMs);
      timer.unref();
    };
  });
  if (signal.aborted) arm();
  else signal.addEventListener('abort', arm, { once: true });
  return {
    promise,
    dispose: () => {
      signal.removeEventListener('abort', arm);
      clearTimeout(timer);
    },
  };
}
