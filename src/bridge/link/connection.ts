/**
 * The bridge's link to a coordinator: remote (an address is configured) or embedded (our
 * coordinator started in-process on a loopback port and reached over the same real gRPC).
 * Settles the coordinator's features, holds the one session of this editor connection, keeps
 * the session's file list in step with the editor, and runs asks.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { uriToPath } from '../../uri.js';
import type { Config } from '../../config.js';
import { AskFailedError, SetupError } from '../../errors.js';
import { oneLine, seconds, selectLines } from '../../text.js';
import { buildPrompt, withEarlierTurns } from '../../wire/prompt.js';
import { NOT_READ_ONLY } from './readOnly.js';
import type { Logger } from '../../logger.js';
import { CoordinatorClient } from '../../wire/client.js';
import { channelFor } from '../../wire/credentials.js';
import { identityFor, isRefusal, refusalError, type Identity } from './identity.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import {
  BUFFERS_HEADER,
  CONVERSATION_HEADER,
  EARLIER_TURNS_KEY,
  MAX_READ_BYTES,
  tooBigToRead,
  INTENT_HEADER,
  SESSION_HEADER,
  sendMessageResponseSchema,
  serverCapabilitiesSchema,
  sessionSchema,
  taskEventSchema,
  proposeEditsResponseSchema,
  inlineCompletionEventSchema,
  type InlineCompletionRequest,
  type ProposeEditsResponse,
  type EditorContext,
  type FileContent,
  type FileRequest,
  type FileWrite,
  type FileWritten,
  type ServerCapabilities,
  type TaskEvent,
} from '../../wire/contract.js';
import * as z from '../../schema.js';
import type { AskCall, AskOutcome, CoordinatorSession, EditorFiles, StreamCall, StreamOutcome } from './calls.js';

export type { AskCall, AskOutcome, StreamCall, StreamOutcome } from './calls.js';

export type ConnectionState = 'starting' | 'ready' | 'unavailable';

export interface ConnectionOptions {
  config: Config;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  clientName: string;
  serverVersion: string;
  workspaceRoot?: string;
}

const FINAL_STATUSES = new Set(['completed', 'failed', 'cancelled']);

const emptySchema = z.looseObject({});

export class CoordinatorConnection implements CoordinatorSession {
  state: ConnectionState = 'starting';
  /** What is wrong, in full, with how to fix it. */
  error: string | undefined;
  /** The same in a few words, for a one-line message. */
  errorSummary: string | undefined;
  readonly mode: 'embedded' | 'remote';
  address: string | undefined;
  capabilities: ServerCapabilities | undefined;
  sessionId: string | undefined;
  agentDescription: string | undefined;
  /** The embedded coordinator has no agent (none configured or found). */
  agentMissing = false;

  private client: CoordinatorClient | undefined;
  /** The embedded coordinator's secret. */
  private secret: string | undefined;
  private embedded: { close(): Promise<void> } | undefined;
  private readonly settled: Promise<void>;
  private readonly openFiles = new Set<string>();
  private contextSync: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private inFlight = 0;
  private idle: (() => void) | undefined;
  /** A (re-)connection under way, shared by every caller that needs it. */
  private establishing: Promise<void> | undefined;
  /** Circuit breaker: consecutive failed connections, and when the next try is allowed. */
  private failures = 0;
  private retryAt = 0;
  /** The next reconnection attempt in the background, while the coordinator is away. */
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** The agent problem of the embedded coordinator, which no reconnection mends. */
  private agentProblem: string | undefined;
  /** The connection broke since the session was made (see connectionBroke). */
  private sessionStale = false;
  /** Who the bridge is to the coordinator (settled at construction: the settings do not change under a connection). */
  readonly identity: Identity;
  /** A failure no retry mends (the coordinator refused our identity): calls fail at once with it. */
  private finalFailure: SetupError | undefined;

  constructor(private readonly options: ConnectionOptions) {
    this.mode = options.config.coordinator.address ? 'remote' : 'embedded';
    this.address = options.config.coordinator.address;
    this.identity = identityFor(options.config);
    this.settled = this.setUp()
      .then(() => this.reestablish())
      .catch((error: unknown) => this.failed(error));
  }

  /** Called whenever the state changes (ready or unavailable). */
  onStateChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  get features(): string[] {
    return this.capabilities?.features ?? [];
  }

  /** The announced features, or undefined until the coordinator has answered. */
  get knownFeatures(): string[] | undefined {
    return this.capabilities?.features;
  }

  /** It keeps an ask read-only (it says so: `ask_read_only`). Buckley does not: its tools run unasked. */
  get keepsAsksReadOnly(): boolean {
    return this.features.includes('ask_read_only');
  }

  /** What the coordinator says it cannot promise here (ours: why its agent runs without a sandbox). */
  get notes(): string | undefined {
    return this.capabilities?.notes.join('; ') || undefined;
  }

  /**
   * What goes in `message.content` / `query`: the bare question where the coordinator reads the
   * request's `context` (it says so: `editor_context`); else the question with the file (named
   * relative to its workspace), its language, the selection and the related excerpts — within the
   * same byte budget — since the message is all such a coordinator reads.
   */
  private messageFor(question: string, context: EditorContext | undefined, intent: StreamCall['intent']): string {
    if (this.features.includes('editor_context') || !context) return question;
    return buildPrompt(question, context, intent === 'ask');
  }

  private get callTimeoutMs(): number {
    return this.options.config.coordinator.callTimeoutMs;
  }

  /** Once: the embedded coordinator (if any) and the gRPC client. */
  private async setUp(): Promise<void> {
    const { config, logger } = this.options;
    if (this.mode === 'embedded') {
      const { startEmbedded } = await import('./embedded.js');
      // Only this bridge may use it: it listens on loopback, where any local process could call.
      this.secret = randomBytes(32).toString('hex');
      const running = await startEmbedded({
        config,
        env: this.options.env,
        cwd: this.options.workspaceRoot ? uriToPath(this.options.workspaceRoot) : undefined,
        clientVersion: this.options.serverVersion,
        secret: this.secret,
        logger,
      });
      this.agentDescription = running.agentDescription;
      this.embedded = running;
      this.address = running.address;
      if (this.closed) {
        await running.close();
        throw new Error('closed while starting');
      }
      if (running.agentProblem) {
        this.agentMissing = true;
        this.agentProblem = running.agentProblem;
        this.error = running.agentProblem;
        this.errorSummary = 'set buckley.agent.command to an ACP agent';
        logger.warn(running.agentProblem);
      }
    }
    if (this.closed) throw new Error('closed while starting');
    const channel = channelFor(this.address!, config.coordinator.tls);
    this.client = new CoordinatorClient({
      address: this.address!,
      agentId: this.identity.agentId,
      secret: this.secret,
      credentials: channel.credentials,
      channelOptions: channel.options,
    });
    this.client.onDisconnect(() => this.connectionBroke());
  }

  /**
   * The connection broke: whatever comes back on this address may be another coordinator
   * process, which does not know our session. The next call connects anew first.
   */
  private connectionBroke(): void {
    // Whenever a session exists, even one being set up: it may belong to the process that went away.
    if (this.closed || !this.sessionId) return;
    this.sessionStale = true;
    this.options.logger.info(`the connection to the coordinator at ${this.address} broke; the next call starts a new session`);
  }

  /**
   * (Re-)connects: capabilities, a new session, the open files. Shared by concurrent callers;
   * a failure opens the circuit breaker for an exponentially growing, jittered while.
   */
  private reestablish(): Promise<void> {
    this.establishing ??= this.establish()
      .then(() => {
        this.failures = 0;
        this.retryAt = 0;
        this.state = 'ready';
        this.error = this.agentProblem;
        if (!this.agentProblem) this.errorSummary = undefined;
        this.notify();
      })
      .catch((error: unknown) => this.failed(error))
      .finally(() => {
        this.establishing = undefined;
      });
    return this.establishing;
  }

  private failed(error: unknown): void {
    if (this.closed) return;
    if (error instanceof SetupError && error.final) return this.failedForGood(error);
    this.failures++;
    const backoff = Math.min(30_000, 500 * 2 ** (this.failures - 1)) * (0.5 + Math.random());
    this.retryAt = Date.now() + backoff;
    this.state = 'unavailable';
    this.error = error instanceof Error ? error.message : String(error);
    this.errorSummary = error instanceof SetupError ? error.summary : `cannot reach ${this.address ?? 'the coordinator'} (see log)`;
    this.options.logger.error(`${this.error} (next try in ${seconds(backoff)})`);
    this.notify();
    // Keep trying in the background, so the connection is back as soon as the coordinator is.
    if (this.client && !this.closed) {
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => void this.reestablish(), backoff);
      this.retryTimer.unref();
    }
  }

  private throwIfFailedForGood(): void {
    if (this.finalFailure) throw new AskFailedError(this.finalFailure.message, this.finalFailure.summary);
  }

  /** A call refused for who we are: the connection fails for good (see failedForGood). */
  private refused(error: CoordinatorError): AskFailedError {
    const failure = refusalError(this.address!, this.identity, error);
    this.failedForGood(failure);
    return new AskFailedError(failure.message, failure.summary);
  }

  /** A failure no retry mends: said once, no retries; every call fails at once with it. */
  private failedForGood(error: SetupError): void {
    clearTimeout(this.retryTimer);
    this.finalFailure = error;
    this.state = 'unavailable';
    this.error = error.message;
    this.errorSummary = error.summary;
    this.options.logger.error(`${error.message} (no retries: change the settings)`);
    this.notify();
  }

  private async establish(): Promise<void> {
    try {
      await this.establishSession();
    } catch (error) {
      throw isRefusal(error) ? refusalError(this.address!, this.identity, error) : error;
    }
  }

  private async establishSession(): Promise<void> {
    const { logger } = this.options;
    const client = this.client!;
    try {
      this.capabilities = await client.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: this.callTimeoutMs });
    } catch (error) {
      const failure = describeConnectFailure(this.mode, this.address!, error, this.options.config.coordinator.tls !== undefined);
      throw new SetupError(failure.message, failure.summary);
    }
    const session = await client.unary(
      'CreateSession',
      {
        agent_id: this.identity.agentId,
        metadata: { client: this.options.clientName, ...(this.options.workspaceRoot ? { workspace_root: this.options.workspaceRoot } : {}) },
      },
      sessionSchema,
      { timeoutMs: this.callTimeoutMs },
    );
    this.sessionId = session.session_id;
    this.sessionStale = false;
    logger.info(`acting as agent id ${this.identity.agentId} (${this.identity.source})`);
    logger.info(
      `connected to the ${this.mode} coordinator at ${this.address} (protocol ${this.capabilities.protocol_version || '?'}; features ${this.features.join(', ') || 'none'}); session ${this.sessionId}`,
    );
    if (this.openFiles.size > 0) this.syncContext([...this.openFiles], []);
  }

  /**
   * A call failed in a way that means the coordinator went away or forgot us (it restarted):
   * the next call connects anew, at once.
   */
  private lost(error: CoordinatorError): void {
    if (this.state !== 'ready') return;
    this.state = 'unavailable';
    this.error = `the coordinator at ${this.address} went away: ${plainDetails(error.details)}`;
    this.errorSummary = `the coordinator at ${this.address ?? ''} went away`;
    this.retryAt = 0;
    this.options.logger.warn(`${this.error}; reconnecting`);
    this.notify();
    void this.reestablish();
  }

  /**
   * Resolves once the connection is up or has failed — or after `ms`, for a caller that must go on
   * without knowing what the coordinator offers; never rejects.
   */
  whenSettled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
    return Promise.race([this.settled, waited]).finally(() => clearTimeout(timer));
  }

  documentOpened(uri: string): void {
    this.openFiles.add(uri);
    if (this.state === 'ready') this.syncContext([uri], []);
  }

  documentClosed(uri: string): void {
    this.openFiles.delete(uri);
    if (this.state === 'ready') this.syncContext([], [uri]);
  }

  /** UpdateSessionContext calls go out one at a time, in order. */
  private syncContext(added: string[], removed: string[]): void {
    this.contextSync = this.contextSync.then(async () => {
      if (!this.client || !this.sessionId) return;
      try {
        await this.client.unary(
          'UpdateSessionContext',
          { session_id: this.sessionId, added_files: added, removed_files: removed, metadata: {} },
          emptySchema,
          { timeoutMs: this.callTimeoutMs },
        );
      } catch (error) {
        this.options.logger.warn(`could not update the session's files: ${(error as Error).message}`);
      }
    });
  }

  /** Waits (within the signal) for the connection and returns the client, or says why not. */
  private async ready(signal: AbortSignal): Promise<CoordinatorClient> {
    this.throwIfFailedForGood();
    const within = (promise: Promise<unknown>) =>
      Promise.race([promise, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
    if (this.state === 'starting') await within(this.settled);
    this.throwIfFailedForGood();
    if (this.state === 'ready' && this.sessionStale && !signal.aborted) await within(this.reestablish());
    if (this.state === 'unavailable' && this.client && !signal.aborted) {
      // The circuit breaker: while it is open, fail fast instead of piling up.
      const wait = this.retryAt - Date.now();
      if (wait > 0) throw new AskFailedError(`${this.error} (next try in ${seconds(wait)})`, this.errorSummary);
      await within(this.reestablish());
    }
    if (signal.aborted) throw new CoordinatorError('connect', Status.CANCELLED, 'cancelled while connecting');
    if (this.state !== 'ready' || !this.client) {
      throw new AskFailedError(this.error ?? 'the coordinator is not available', this.errorSummary);
    }
    return this.client;
  }

  /**
   * UNAVAILABLE: the coordinator went away (or restarted under us). Not NOT_FOUND: Buckley never
   * says it for a session it does not know (it makes one), and a restart shows as a broken
   * connection first (connectionBroke).
   */
  private isLost(error: unknown): error is CoordinatorError {
    return error instanceof CoordinatorError && error.unavailable;
  }

  /** Counts the call as in flight, so a retired connection closes only once it is idle. */
  private async tracked<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await work();
    } finally {
      if (--this.inFlight === 0) this.idle?.();
    }
  }

  /** Waits for the connection and an agent; or says, as an AskFailedError, why there is none. */
  private async usable(signal: AbortSignal): Promise<CoordinatorClient> {
    const client = await this.ready(signal);
    if (this.error && this.mode === 'embedded' && !this.agentDescription) throw new AskFailedError(this.error, this.errorSummary);
    return client;
  }

  ask(call: AskCall): Promise<AskOutcome> {
    return this.tracked(async () => {
      try {
        const client = await this.usable(call.signal);
        if (call.requireReadOnly && !this.keepsAsksReadOnly) throw new AskFailedError(NOT_READ_ONLY(this.address!, this.notes), 'asks refused: buckley.ask.requireReadOnly');
        // A follow-up's earlier turns: beside the context for a coordinator that keeps conversations
        // (it sends them only where its agent lost the session); in the message for any other.
        const keepsConversations = this.features.includes('conversations');
        const context = call.earlier && keepsConversations ? { ...call.context, metadata: { ...call.context.metadata, [EARLIER_TURNS_KEY]: call.earlier } } : call.context;
        const earlier = keepsConversations ? undefined : call.earlier;
        // Our coordinator streams answers (and progress) through StreamTask; Buckley answers SendMessage.
        if (this.features.includes('answer_stream')) {
          const outcome = await this.runStream({ ...call, context, taskId: randomUUID(), query: withEarlierTurns(call.question, earlier), intent: 'ask', timeoutSetting: 'buckley.ask.timeoutMs' });
          if (outcome.status === 'failed') throw new AskFailedError(outcome.reason, outcome.summary);
          if (outcome.status === 'cancelled') return { kind: 'cancelled' };
          return outcome.answer.trim() || !outcome.report?.length ? { kind: 'answer', answer: outcome.answer } : { kind: 'report', lines: outcome.report };
        }
        const content = withEarlierTurns(this.messageFor(call.question, context, 'ask'), earlier);
        const send = (via: CoordinatorClient) =>
          via.unary(
            'SendMessage',
            { agent_id: this.identity.agentId, message: { role: 'user', content }, context },
            sendMessageResponseSchema,
            { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('ask', call.conversation) },
          );
        const reply = await send(client).catch(async (error: unknown) => {
          // The coordinator restarted or forgot our session: connect anew and ask once more.
          if (!this.isLost(error)) throw error;
          this.lost(error);
          return send(await this.ready(call.signal));
        });
        const text = reply.response?.content ?? '';
        // A reply that repeats the whole request is a receipt ("Plan … executed for request: …"), not an answer.
        if (content.trim() && text.includes(content.trim())) return { kind: 'report', lines: [text.replace(content.trim(), `«${oneLine(call.question, 80)}»`)] };
        return { kind: 'answer', answer: text };
      } catch (error) {
        if (isRefusal(error)) throw this.refused(error);
        if (error instanceof CoordinatorError) {
          if (error.cancelled && call.signal.aborted) return { kind: 'cancelled' };
          if (error.deadlineExceeded) throw new AskFailedError(`no answer within ${seconds(call.timeoutMs)} (setting buckley.ask.timeoutMs)`, `no answer in ${seconds(call.timeoutMs)}: raise buckley.ask.timeoutMs`);
          throw new AskFailedError(plainDetails(error.details));
        }
        throw error;
      }
    });
  }

  /** Runs a task on the coordinator (StreamTask) to its end; never throws for the task's own failures. */
  runTask(call: StreamCall): Promise<StreamOutcome> {
    return this.tracked(() => this.runStream(call));
  }

  /** Session, intent, and a W3C `traceparent` so the coordinator's logs can be joined with ours. */
  private callMetadata(intent: StreamCall['intent'], conversation?: string): Record<string, string> {
    // randomUUID draws from a cached entropy pool; randomBytes is a system call per ask.
    const traceparent = `00-${randomUUID().replaceAll('-', '')}-${randomUUID().slice(19).replace('-', '')}-01`;
    this.options.logger.debug(`${intent} on session ${this.sessionId}: traceparent ${traceparent}`);
    // The intent only where it is honoured: no promise rests on metadata a coordinator ignores.
    return {
      [SESSION_HEADER]: this.sessionId!,
      traceparent,
      // The bridge holds the editor's buffers: an agent's reads ask it first (ProvideFile).
      [BUFFERS_HEADER]: '1',
      ...(intent === 'ask' && (this.keepsAsksReadOnly || this.features.includes('ask_intent')) ? { [INTENT_HEADER]: 'ask' } : {}),
      ...(intent === 'edit' && this.features.includes('edit_selection') ? { [INTENT_HEADER]: 'edit' } : {}),
      ...(conversation && this.features.includes('conversations') ? { [CONVERSATION_HEADER]: conversation } : {}),
    };
  }

  private async runStream(call: StreamCall, retried = false): Promise<StreamOutcome> {
    let answer = '';
    const lines: string[] = [];
    let final: TaskEvent | undefined;
    let received = 0;
    try {
      const client = await this.usable(call.signal);
      const events = client.stream(
        'StreamTask',
        { task_id: call.taskId, agent_id: this.identity.agentId, query: this.messageFor(call.query, call.context, call.intent), context: call.context },
        taskEventSchema,
        { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata(call.intent, call.conversation) },
      );
      for await (const event of events) {
        received++;
        if (event.file_request) {
          this.provideFile(client, event.file_request, call.files);
          continue;
        }
        if (event.file_write) this.makeWrite(client, event.file_write, call.files);
        if (event.answer_delta) {
          answer += event.answer_delta;
          call.onDelta?.(event.answer_delta);
        }
        if (event.message) lines.push(event.message);
        call.onEvent?.(event);
        if (FINAL_STATUSES.has(event.status)) final = event;
      }
    } catch (error) {
      if (call.signal.aborted) return { status: 'cancelled' };
      if (isRefusal(error)) {
        const refused = this.refused(error);
        return { status: 'failed', reason: refused.message, ...(refused.summary ? { summary: refused.summary } : {}) };
      }
      if (this.isLost(error)) {
        this.lost(error);
        // Nothing happened yet: connect anew and start it once more. Otherwise it failed midway.
        if (received === 0 && !retried) return this.runStream(call, true);
        return {
          status: 'failed',
          reason: `the coordinator at ${this.address} went away during the task (${plainDetails(error.details)}); start it again once the coordinator is back`,
          summary: `the coordinator at ${this.address} went away`,
        };
      }
      if (error instanceof AskFailedError) return { status: 'failed', reason: error.message, ...(error.summary ? { summary: error.summary } : {}) };
      if (error instanceof CoordinatorError && error.deadlineExceeded) {
        return { status: 'failed', reason: `timed out after ${seconds(call.timeoutMs)} (setting ${call.timeoutSetting})`, summary: `timed out: raise ${call.timeoutSetting}`, timedOut: true };
      }
      return { status: 'failed', reason: error instanceof CoordinatorError ? plainDetails(error.details) : (error as Error).message };
    }
    if (call.signal.aborted || final?.status === 'cancelled') return { status: 'cancelled' };
    if (final?.status === 'failed') return { status: 'failed', reason: final.message || 'the agent failed' };
    // Buckley ends its stream without a final status and sends status lines only ("Planning task…",
    // "✅ Task completed"): they are its report, not an answer. An answer comes as answer_delta.
    return { status: 'completed', answer, ...(lines.length ? { report: lines } : {}) };
  }

  /**
   * Answers a coordinator's file_request with the editor's buffer (cut to the lines asked for),
   * or `open: false`: the coordinator then reads the disk. Not awaited: the stream reads on.
   */
  private provideFile(client: CoordinatorClient, request: FileRequest, files: EditorFiles | undefined): void {
    const buffer = files?.buffer(request.path);
    const text = buffer ? selectLines(buffer.text, request.line, request.limit) : '';
    // Measured cheaply first: a UTF-16 unit is at most 3 bytes of UTF-8.
    const tooBig = text.length * 3 > MAX_READ_BYTES ? tooBigToRead(request.path, Buffer.byteLength(text, 'utf8'), request.limit) : undefined;
    const answer: FileContent = { request_id: request.request_id, open: buffer !== undefined, text: tooBig ? '' : text, version: buffer?.version ?? 0, ...(tooBig ? { error: tooBig } : {}) };
    this.options.logger.debug(`the agent reads ${request.path}: ${buffer ? `the editor's buffer, version ${buffer.version}` : 'not open, from disk'}`);
    client.unary('ProvideFile', answer, emptySchema, { timeoutMs: this.callTimeoutMs }).catch((error: unknown) => {
      this.options.logger.warn(`could not give the coordinator the buffer of ${request.path}: ${error instanceof CoordinatorError ? plainDetails(error.details) : String(error)}`);
    });
  }

  /** Makes an approved write in the editor and tells the coordinator how it went. Not awaited. */
  private makeWrite(client: CoordinatorClient, write: FileWrite, files: EditorFiles | undefined): void {
    const done = (outcome: { open: boolean; applied: boolean; message: string }) =>
      client.unary('ConfirmFileWrite', { request_id: write.request_id, ...outcome } satisfies FileWritten, emptySchema, { timeoutMs: this.callTimeoutMs });
    (files?.write(write) ?? Promise.resolve({ open: false, applied: false, message: '' }))
      .catch((error: unknown) => ({ open: true, applied: false, message: `the bridge failed to make it: ${(error as Error).message}` }))
      .then(done)
      .catch((error: unknown) => {
        this.options.logger.warn(`could not tell the coordinator what became of the write of ${write.path}: ${error instanceof CoordinatorError ? plainDetails(error.details) : String(error)}`);
      });
  }

  /** Buckley's ProposeEdits: edits for the selection in `context`, proposed, not applied. */
  proposeEdits(call: { instruction: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<ProposeEditsResponse> {
    return this.tracked(async () => {
      const client = await this.usable(call.signal);
      try {
        return await client.unary(
          'ProposeEdits',
          { agent_id: this.identity.agentId, session_id: this.sessionId, instruction: call.instruction, context: call.context, apply: false, max_suggestions: 1 },
          proposeEditsResponseSchema,
          { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('edit') },
        );
      } catch (error) {
        if (isRefusal(error)) throw this.refused(error);
        if (error instanceof CoordinatorError) throw new AskFailedError(plainDetails(error.details));
        throw error;
      }
    });
  }

  /**
   * Completions at the cursor (StreamInlineCompletions): the text of each, streamed pieces joined.
   * Aborting `signal` cancels the call (our coordinator then aborts the model's HTTP request).
   */
  inlineCompletions(call: { prompt: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<string[]> {
    return this.tracked(async () => {
      const client = await this.usable(call.signal);
      const texts = new Map<string, string>();
      try {
        const events = client.stream(
          'StreamInlineCompletions',
          { agent_id: this.identity.agentId, session_id: this.sessionId ?? '', context: call.context, prompt: call.prompt, max_suggestions: 1 } satisfies InlineCompletionRequest,
          inlineCompletionEventSchema,
          // Read-only, as an ask is (a coordinator that keeps asks so is told it is one).
          { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('ask') },
        );
        for await (const event of events) texts.set(event.completion_id, (texts.get(event.completion_id) ?? '') + event.text);
      } catch (error) {
        if (error instanceof CoordinatorError && error.cancelled && call.signal.aborted) return [];
        if (isRefusal(error)) throw this.refused(error);
        if (error instanceof CoordinatorError) throw new AskFailedError(plainDetails(error.details));
        throw error;
      }
      return [...texts.values()].filter((text) => text.length > 0);
    });
  }

  /** Sends the user's decision on a pending approval; NOT_FOUND means it was already decided. */
  async decideApproval(executionId: string, decision: { approved: boolean; remember?: boolean; reason?: string }): Promise<void> {
    const client = await this.ready(AbortSignal.timeout(this.callTimeoutMs));
    const options = { timeoutMs: this.callTimeoutMs };
    if (decision.approved) {
      await client.unary('ApproveToolExecution', { execution_id: executionId, remember: decision.remember ?? false }, emptySchema, options);
    } else {
      await client.unary('RejectToolExecution', { execution_id: executionId, reason: decision.reason ?? '' }, emptySchema, options);
    }
  }

  /** Closes once the asks in flight have ended (the settings changed: a new connection takes over). */
  async closeWhenIdle(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.close();
  }

  /**
   * Closes at once: a connection attempt under way is abandoned (its calls are cancelled with the
   * client), not waited for — `shutdown` must not wait for a coordinator that does not answer.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.client?.close();
    await this.embedded?.close();
  }
}

/** What a failed connection means, in full and in a few words, from what gRPC said. */
export function describeConnectFailure(mode: 'embedded' | 'remote', address: string, error: unknown, secure: boolean): Failure {
  const detail = plainDetails(error instanceof CoordinatorError ? error.details : String(error));
  if (mode === 'embedded') return { message: `the embedded coordinator at ${address} did not answer: ${detail}`, summary: 'the embedded coordinator did not answer' };
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  const setting = 'buckley.coordinator.address or BUCKLEY_COORDINATOR';
  const start = `start it (\`buckley serve\` or \`buckley-lsp coordinator --listen ${address}\`) or unset ${setting} to use the embedded coordinator`;
  const tlsHint =
    "check buckley.coordinator.tls: ca must sign the coordinator's certificate, and cert + key must be a client certificate it accepts (signed by its client CA, not expired)";
  if (error instanceof CoordinatorError && error.deadlineExceeded) {
    return {
      message: `the coordinator at ${address} (from ${setting}) did not answer in time (${detail}): is it ${secure ? 'expecting other TLS settings than buckley.coordinator.tls, or ' : ''}busy or stopped? Otherwise ${start}.`,
      summary: `${address} does not answer (see log)`,
    };
  }
  if (/ENOTFOUND|EAI_AGAIN|name resolution failed|getaddrinfo/i.test(detail)) {
    return { message: `the host ${host} of the coordinator address ${address} does not resolve (${detail}): fix ${setting}`, summary: `${host} does not resolve (buckley.coordinator.address)` };
  }
  if (/certificate|ssl|tls|handshake|alert/i.test(detail)) {
    return { message: `the TLS handshake with the coordinator at ${address} failed: ${detail}. To fix it, ${tlsHint}.`, summary: `TLS with ${address} failed: see buckley.coordinator.tls` };
  }
  if (/ECONNREFUSED|connection refused/i.test(detail)) {
    return { message: `nothing listens at ${address} (from ${setting}): ${start}.`, summary: `nothing listens at ${address}: start the coordinator` };
  }
  return {
    message: `cannot reach the coordinator at ${address} (from ${setting}): ${detail}. ${secure ? `Either it is not running — ${start} — or it refused the TLS handshake: ${tlsHint}.` : `${start[0]!.toUpperCase()}${start.slice(1)}.`}`,
    summary: `cannot reach ${address} (see log)`,
  };
}

export interface Failure {
  message: string;
  /** Key or fix first, for a one-line message. */
  summary: string;
}

/** gRPC's details without its internals ("Resolution note: .", "Last error:"), for people. */
export function plainDetails(details: string): string {
  return details
    // "Deadline exceeded after 5.005s,name resolution: 0.010s,…,Waiting for LB pick"
    .replace(/^Deadline exceeded after ([\d.]+)s\b.*$/is, (_, seconds: string) => `waited ${Number(seconds).toFixed(1)} s`)
    .replace(/\s*Resolution note:[^\n]*$/i, '')
    .replace(/^No connection established\.\s*Last error:\s*/i, '')
    .replace(/^Error:\s*/, '')
    .replace(/\s*\(\d{1,3}(\.\d{1,3}){3}:\d+\)[\s.]*$/, '')
    .replace(/[\s.,]+$/, '')
    .trim() || 'no details';
}
