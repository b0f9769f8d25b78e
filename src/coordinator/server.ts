/**
 * Our coordinator: the buckley.acp.v1.AgentCommunication RPCs the bridge uses, on top of an
 * agent driver. The rest of the service answers UNIMPLEMENTED (grpc-js does that for methods
 * without a handler). It runs standalone (`buckley-lsp coordinator`) or embedded in the bridge
 * on a loopback port; either way the bridge reaches it over real gRPC.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Logger } from '../logger.js';
import { type AgentDriver, type AgentQuestion, type AgentTurn, type FileReadRequest, type PermissionDecision, type PermissionRequest, type TurnSink } from './agents/driver.js';
import { FileAccessError, workspaceOf } from './files.js';
import { afterTurnNote, TurnFiles } from './turnFiles.js';
import { CallerRequests, type TurnCaller } from './callerRequests.js';
import { makeModelEdit, MODEL_EDIT_REPLY, replacementIn, selectionEditOf } from './modelEdits.js';
import { buildPrompt } from '../wire/prompt.js';
import { isLoopbackHost } from '../net.js';
import { EventBatcher } from './batcher.js';
import { controlHandlers } from './controls.js';
import { agentFailure, answerOf, certifiedIdentity, checkIdentity, fail, identityOf, type Caller } from './callers.js';
import { askSink, assessCall, effectiveKind, refusalNote, withNotes } from './turnRules.js';
import { agentCommunicationService } from '../wire/protos.js';
import { TurnQuestions } from './questions.js';
import { FEATURES } from './features.js';
import { AUTHORIZATION_HEADER, QUESTIONS_HEADER, BUFFERS_HEADER, CONVERSATION_HEADER, EARLIER_TURNS_KEY, INTENT_HEADER, SESSION_HEADER, type ContextDelta, type FileContent, type FileWritten, type CreateSessionRequest, type EditorContext, type SendMessageRequest, type TaskStreamRequest, type WireToolExecution, type InlineCompletionRequest, type PlanEntry } from '../wire/contract.js';
import { uriToPath } from '../uri.js';
import { editorStateOf } from './agents/editorState.js';
import { FEATURE } from '../wire/features.js';

export const PROTOCOL_VERSION = '1.0';

/** How long the caller may take to answer a file_request before the disk is read instead. */
export const FILE_REQUEST_TIMEOUT_MS = 10_000;
/** How long the caller may take to make an approved write in the editor (it answers at once). */
export const FILE_WRITE_TIMEOUT_MS = 30_000;

/** A coordinator-side limit, so a task whose approval nobody answers never waits forever. */
export const APPROVAL_TIMEOUT_MS = 15 * 60_000;

interface SessionState {
  agentId: string;
  files: Set<string>;
  metadata: Record<string, string>;
}

export interface CoordinatorOptions {
  /** The agent; undefined when none could be found, and `agentProblem` says why. */
  driver?: AgentDriver;
  agentProblem?: string;
  logger: Logger;
  /** PEM files: serve TLS with `cert` + `key`; require client certificates signed by `clientCa`. */
  tls?: { cert: string; key: string; clientCa?: string };
  /** Serve only callers sending `authorization: Bearer <secret>` (the embedded coordinator's bridge). */
  secret?: string;
}

export interface RunningCoordinator {
  address: string;
  port: number;
  close(): Promise<void>;
}

class CoordinatorService {
  private readonly sessions = new Map<string, SessionState>();
  /** Questions to the caller of a turn, answered by id from the same connection (callerRequests.ts). */
  private readonly approvals = new CallerRequests<PermissionDecision>();
  private readonly fileRequests = new CallerRequests<FileContent>();
  private readonly fileWrites = new CallerRequests<FileWritten>();
  private readonly questions: TurnQuestions;

  constructor(private readonly options: CoordinatorOptions) {
    this.questions = new TurnQuestions(options.logger);
  }

  handlers(): grpc.UntypedServiceImplementation {
    const unary = <Request>(handler: (call: grpc.ServerUnaryCall<Request, unknown>, callback: grpc.sendUnaryData<unknown>) => unknown) =>
      (call: grpc.ServerUnaryCall<Request, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const refused = this.refuse(call);
        return refused ? callback(refused) : handler(call, callback);
      };
    const controls = controlHandlers(() => this.options.driver, () => this.options.agentProblem);
    return {
      GetServerCapabilities: unary(this.getServerCapabilities),
      CreateSession: unary(this.createSession),
      UpdateSessionContext: unary(this.updateSessionContext),
      SendMessage: unary(this.sendMessage),
      StreamTask: (call: grpc.ServerWritableStream<TaskStreamRequest, unknown>) => {
        const refused = this.refuse(call);
        return refused ? call.emit('error', refused) : this.streamTask(call);
      },
      StreamInlineCompletions: (call: grpc.ServerWritableStream<InlineCompletionRequest, unknown>) => {
        const refused = this.refuse(call);
        return refused ? call.emit('error', refused) : this.streamInlineCompletions(call);
      },
      ApproveToolExecution: unary(this.approveToolExecution),
      RejectToolExecution: unary(this.rejectToolExecution),
      ProvideFile: unary(this.provideFile),
      ConfirmFileWrite: unary(this.confirmFileWrite),
      GetAgentControls: unary(controls.GetAgentControls),
      SetAgentModel: unary(controls.SetAgentModel),
      SetAgentMode: unary(controls.SetAgentMode),
      AnswerQuestion: unary(this.questions.answer),
    };
  }

  /**
   * With a secret (the embedded coordinator), only callers that know it are served: it listens
   * on loopback, where any local process could call it otherwise.
   */
  private refuse(call: Caller): grpc.ServiceError | undefined {
    const { secret } = this.options;
    if (!secret) return undefined;
    const given = Buffer.from(call.metadata.get(AUTHORIZATION_HEADER)[0]?.toString() ?? '');
    const expected = Buffer.from(`Bearer ${secret}`);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
    return fail(grpc.status.UNAUTHENTICATED, 'this coordinator serves only the editor that started it');
  }

  private getServerCapabilities = (_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const unsafeAsks = this.options.driver?.unsafeAsks;
    callback(null, {
      protocol_version: PROTOCOL_VERSION,
      // Completions where the agent can make them (a model: fill-in-the-middle; an ACP agent has no
      // such call); asks read-only only where the agent runs in its sandbox.
      features: [...FEATURES.filter((feature) => !(unsafeAsks && feature === FEATURE.readOnlyAsks)), ...(this.options.driver?.complete ? [FEATURE.inlineCompletion] : []), ...(this.options.driver?.controls ? [FEATURE.agentControls] : []), ...(this.options.driver?.chooseMode ? [FEATURE.agentModes] : [])],
      notes: unsafeAsks ? [unsafeAsks] : [],
      max_agents: 1,
      supported_auth: this.options.tls ? [this.options.tls.clientCa ? 'mtls' : 'tls'] : ['insecure_local'],
    });
  };

  private createSession = (call: grpc.ServerUnaryCall<CreateSessionRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const request = call.request;
    if (!request.agent_id) return callback(fail(grpc.status.INVALID_ARGUMENT, 'agent_id is required'));
    const denied = checkIdentity(call, request.agent_id);
    if (denied) return callback(denied);
    const sessionId = randomUUID();
    this.sessions.set(sessionId, { agentId: request.agent_id, files: new Set(), metadata: { ...request.metadata } });
    this.options.logger.info(`session ${sessionId} created for ${request.agent_id}`);
    callback(null, { session_id: sessionId, agent_id: request.agent_id, created_at: timestamp(), metadata: request.metadata });
  };

  private updateSessionContext = (call: grpc.ServerUnaryCall<ContextDelta, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const delta = call.request;
    if (!delta.session_id) return callback(fail(grpc.status.INVALID_ARGUMENT, 'session_id is required'));
    const session = this.sessions.get(delta.session_id);
    if (!session) return callback(fail(grpc.status.NOT_FOUND, `no session ${delta.session_id}`));
    for (const file of delta.added_files) session.files.add(file);
    for (const file of delta.removed_files) session.files.delete(file);
    for (const [key, value] of Object.entries(delta.metadata)) {
      if (value === '') delete session.metadata[key];
      else session.metadata[key] = value;
    }
    callback(null, {});
  };

  private sendMessage = async (call: grpc.ServerUnaryCall<SendMessageRequest, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const request = call.request;
    const content = request.message?.content ?? '';
    if (!content.trim()) return callback(fail(grpc.status.INVALID_ARGUMENT, 'message.content must not be empty'));
    const turn = this.prepareTurn(call, request.agent_id, content, request.context, true);
    if (turn.error) return callback(turn.error);
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    try {
      const sink = askSink({ text() {}, tool() {}, plan() {}, thought() {}, notice() {} }, turn.turn.cwd, this.options.logger);
      const files = new TurnFiles(sink, turn.turn.cwd, { readOnly: true });
      const result = await turn.driver.run(turn.turn, files.sink, controller.signal);
      const refusal = refusalNote(result, controller.signal, turn.driver.shortName, true);
      if (result.stopReason === 'cancelled' && !refusal) return callback(fail(grpc.status.CANCELLED, 'the ask was cancelled'));
      const notes = withNotes(result.text, [refusal, afterTurnNote(turn.driver.shortName, undefined, result.unasked ?? [], workspaceOf(turn.turn.cwd))]);
      callback(null, { response: { role: 'assistant', content: `${result.text}${notes}` } });
    } catch (error) {
      callback(agentFailure(error));
    }
  };

  /**
   * Code at the cursor: the document's text before and after the empty selection in `context`
   * (else `prompt` as the text before it), completed by the model; cancelling the call aborts its
   * HTTP request.
   */
  private streamInlineCompletions = async (call: grpc.ServerWritableStream<InlineCompletionRequest, unknown>) => {
    const request = call.request;
    const denied = request.agent_id ? checkIdentity(call, request.agent_id) : undefined;
    if (denied) return call.emit('error', denied);
    const complete = this.options.driver?.complete?.bind(this.options.driver);
    if (!complete) {
      return call.emit('error', fail(grpc.status.UNIMPLEMENTED, `${this.options.driver?.description ?? 'no agent'} does not complete code inline; a model does (buckley.agent.driver "openai")`));
    }
    const document = request.context?.document;
    const cursor = document?.selection?.start;
    const { prefix, suffix } = document && cursor ? splitAt(document.content, cursor) : { prefix: request.prompt ?? '', suffix: '' };
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    try {
      const completion = await complete({ prefix, suffix, language: document?.language_id }, controller.signal);
      if (controller.signal.aborted) return;
      call.write({ completion_id: randomUUID(), text: completion.text, is_final: true, finish_reason: completion.finishReason, score: 0 });
      call.end();
    } catch (error) {
      if (controller.signal.aborted) return;
      call.emit('error', agentFailure(error));
    }
  };

  private streamTask = async (call: grpc.ServerWritableStream<TaskStreamRequest, unknown>) => {
    const request = call.request;
    if (!request.query?.trim()) return call.emit('error', fail(grpc.status.INVALID_ARGUMENT, 'query must not be empty'));
    const intent = call.metadata.get(INTENT_HEADER)[0]?.toString();
    const readOnly = intent === 'ask';
    const turn = this.prepareTurn(call, request.agent_id, request.query, request.context, readOnly);
    if (turn.error) return call.emit('error', turn.error);
    // An edit of the selection by a model that cannot write files: its answer becomes the change.
    const selection = intent === 'edit' ? selectionEditOf(request.context, (uri) => (uri.startsWith('file://') ? uriToPath(uri) : undefined)) : undefined;
    const modelEdit = turn.driver.writesFiles ? undefined : selection;
    if (modelEdit) turn.turn.prompt += `\n\n${MODEL_EDIT_REPLY}`;
    const taskId = request.task_id || randomUUID();
    const traceparent = call.metadata.get('traceparent')[0]?.toString();
    this.options.logger.debug(`StreamTask ${taskId}${readOnly ? ' (ask)' : ''}${traceparent ? ` traceparent ${traceparent}` : ''}`);
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    const send = (event: Record<string, unknown>) => {
      if (!controller.signal.aborted) call.write({ task_id: taskId, timestamp: timestamp(), ...event });
    };
    send({ status: 'pending', message: `Starting ${turn.driver.shortName}…` });
    const batch = new EventBatcher(send);
    // Whatever is batched goes out before an approval or the final event, in order.
    const sendNow = (event: Record<string, unknown>) => {
      batch.flush();
      send(event);
    };
    const caller = { identity: identityOf(call, request.agent_id), peer: call.getPeer() };
    const answers = call.metadata.get(QUESTIONS_HEADER)[0]?.toString();
    const events = this.turnEvents(batch, sendNow, answers === '1' || answers === '2' ? { ...caller, typed: answers === '2' } : undefined);
    const decides = readOnly
      ? askSink(events, turn.turn.cwd, this.options.logger)
      : this.taskSink(events, { send: sendNow, ...caller, agent: turn.driver.shortName, cwd: turn.turn.cwd });
    // A caller that holds the editor's buffers is asked for the file first.
    const servesBuffers = call.metadata.get(BUFFERS_HEADER)[0]?.toString() === '1';
    const editor = { send: sendNow, ...caller };
    const files = new TurnFiles(decides, turn.turn.cwd, {
      readOnly,
      changed: (change) =>
        sendNow({ status: 'in_progress', file_changed: { path: change.path, before: change.before, after: change.after, in_editor: change.inEditor, unasked: change.unasked ?? false } }),
      ...(servesBuffers
        ? { fromEditor: (read, signal) => this.askEditor(read, signal, editor), toEditor: (write, signal) => this.writeInEditor(write, signal, editor) }
        : {}),
    });
    const sink = files.sink;
    try {
      // An agent that writes the disk itself is watched: what it changed is taken into the editor
      // and the review when its turn ends (an ask in a sandbox cannot change anything).
      if (turn.driver.writesFiles && (!readOnly || turn.driver.unsafeAsks)) files.watch();
      const result = await turn.driver.run(turn.turn, sink, controller.signal);
      if (modelEdit && result.stopReason === 'end_turn') events.text(`\n\n${await makeModelEdit(modelEdit, result.text, sink, controller.signal)}`);
      // An agent that can only end its turn when refused (Codex) was refused, not cancelled.
      const refusal = refusalNote(result, controller.signal, turn.driver.shortName, readOnly);
      const settled = call.cancelled ? undefined : await files.settle(this.options.logger);
      // An agent that answered the edit in text (the lines in a code block) and changed nothing: its answer is the proposal, as a model's is.
      if (selection && !modelEdit && result.stopReason === 'end_turn' && !files.touched(selection.path) && replacementIn(result.text) !== undefined) {
        events.text(`\n\n${await makeModelEdit(selection, result.text, sink, controller.signal)}`);
      }
      const notes = withNotes(result.text, [refusal, afterTurnNote(turn.driver.shortName, settled, result.unasked ?? [], workspaceOf(turn.turn.cwd))]);
      if (notes) events.text(notes);
      batch.flush();
      if (result.stopReason === 'cancelled' && !refusal) {
        if (!call.cancelled) call.write({ task_id: taskId, status: 'cancelled', message: 'Task cancelled', timestamp: timestamp() });
      } else {
        send({ status: 'completed', progress: 100, message: 'Done', ...(result.usage ? { usage: result.usage } : {}) });
      }
      call.end();
    } catch (error) {
      const failure = agentFailure(error);
      // What a failed agent changed on disk is taken in all the same: into the editor, the review.
      if (!call.cancelled) await files.settle(this.options.logger).catch((problem: unknown) => this.options.logger.warn(`the changes of the failed task: ${(problem as Error).message}`));
      batch.flush();
      send({ status: 'failed', message: failure.details });
      call.end();
    }
  };

  /** What a turn's driver tells the caller; the agent's questions only to a caller that answers them (else they are declined). */
  private turnEvents(batch: EventBatcher, sendNow: (event: Record<string, unknown>) => void, asks: (TurnCaller & { typed: boolean }) | undefined) {
    return {
      text: (delta: string) => batch.text(delta),
      tool: (execution: WireToolExecution) => batch.tool(execution),
      plan: (entries: PlanEntry[]) => batch.plan(entries),
      thought: (delta: string) => batch.thought(delta),
      notice: (message: string) => sendNow({ status: 'in_progress', message }),
      ...(asks ? { question: (question: AgentQuestion, signal: AbortSignal) => this.questions.ask(question, signal, { send: sendNow, ...asks }), typedAnswers: asks.typed } : {}),
    };
  }

  /** Validates identity and session and finds the driver; or the error to answer with. */
  private prepareTurn(
    call: Caller,
    agentId: string,
    question: string,
    context: EditorContext | undefined,
    readOnly: boolean,
  ): { error: grpc.ServiceError; driver?: undefined; turn?: undefined } | { error?: undefined; driver: AgentDriver; turn: AgentTurn } {
    const denied = agentId ? checkIdentity(call, agentId) : undefined;
    const metadata = call.metadata;
    if (denied) return { error: denied };
    const driver = this.options.driver;
    if (!driver) {
      return { error: fail(grpc.status.FAILED_PRECONDITION, this.options.agentProblem ?? 'no agent is configured') };
    }
    const sessionId = metadata.get(SESSION_HEADER)[0]?.toString();
    const conversation = metadata.get(CONVERSATION_HEADER)[0]?.toString();
    let cwd: string | undefined;
    if (sessionId) {
      const session = this.sessions.get(sessionId);
      if (!session) return { error: fail(grpc.status.NOT_FOUND, `no session ${sessionId}; create one with CreateSession`) };
      cwd = session.metadata.workspace_root;
    }
    const root = context?.document?.workspace_root || cwd;
    return {
      driver,
      turn: {
        sessionKey: `${sessionId ?? `agent:${identityOf(call, agentId)}`}${conversation ? `#${conversation}` : ''}`,
        prompt: buildPrompt(question, context, readOnly),
        // The same across restarts (the session id is not): how an agent's saved session is found again.
        // The conversation id is a random UUID held by its caller; a certificate's name, which cannot be
        // claimed falsely, binds it further (an agent-id header can, and instance ids change per start).
        ...(conversation ? { conversationKey: `${certifiedIdentity(call) ?? ''}#${conversation}` } : {}),
        ...(conversation && context?.metadata?.[EARLIER_TURNS_KEY] ? { earlier: context.metadata[EARLIER_TURNS_KEY] } : {}),
        // Where the agent works: the editor's workspace, else where this coordinator runs.
        cwd: root ? uriToPath(root) : process.cwd(),
        readOnly,
        // Maybe one of the agent's commands (`/review`): the driver knows which it lists.
        ...(question.trimStart().startsWith('/') ? { command: question.trim() } : {}),
        ...(context ? { editor: editorStateOf(context) } : {}),
      },
    };
  }

  /**
   * In a task every permission request becomes a pending approval, announced to the caller in a
   * TaskEvent and decided by ApproveToolExecution / RejectToolExecution (from the same caller),
   * by cancellation, or by APPROVAL_TIMEOUT_MS.
   */
  private taskSink(
    events: Omit<TurnSink, 'permission' | 'readFile' | 'writeFile'>,
    task: { send: (event: Record<string, unknown>) => void; identity: string; peer: string; agent: string; cwd: string | undefined },
  ): Omit<TurnSink, 'readFile' | 'writeFile'> {
    const logger = this.options.logger;
    return {
      ...events,
      permission: async (request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision> => {
        const { risk, reasons } = assessCall(request, task.cwd);
        let executionId = '';
        const ending = await this.approvals.ask(task, { timeoutMs: APPROVAL_TIMEOUT_MS, signal }, (id) => {
          executionId = id;
          task.send({
            status: 'awaiting_approval',
            message: `Waiting for approval: ${request.tool}`,
            approval: {
              execution_id: id,
              tool: request.tool,
              parameters: request.parameters,
              risk,
              agent_id: task.agent,
              title: request.title,
              reason: reasons.join('; '),
              kind: effectiveKind(request),
              locations: [...new Set([...request.locations, ...request.writes])],
              ...(request.diff ? { diff: request.diff.text, lines_added: request.diff.added, lines_removed: request.diff.removed } : {}),
            },
          });
        });
        const decision = 'answered' in ending ? ending.answered : 'reject';
        const why = 'answered' in ending ? '(decided by the editor)' : 'aborted' in ending ? '(task cancelled)' : `(no decision within ${APPROVAL_TIMEOUT_MS / 60_000} minutes)`;
        logger.info(`approval ${executionId} for ${request.tool} (${risk}): ${decision} ${why}`);
        task.send({ status: 'in_progress', message: `${decision === 'reject' ? 'Denied' : 'Approved'}: ${request.tool}` });
        return decision;
      },
    };
  }

  private approveToolExecution = (call: grpc.ServerUnaryCall<{ execution_id: string; remember: boolean }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    callback(this.decideApproval(call, call.request.execution_id, call.request.remember ? 'allow_always' : 'allow_once'), {});
  };

  private rejectToolExecution = (call: grpc.ServerUnaryCall<{ execution_id: string; reason: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    callback(this.decideApproval(call, call.request.execution_id, 'reject'), {});
  };

  /**
   * Asks the caller for the editor's buffer of a file the agent reads (TaskEvent `file_request`):
   * its text when the file is open there, undefined when it is not, or when no answer comes
   * within FILE_REQUEST_TIMEOUT_MS (the disk is read then).
   */
  private async askEditor(read: FileReadRequest, signal: AbortSignal, turn: TurnCaller & { send: (event: Record<string, unknown>) => void }): Promise<string | undefined> {
    const ending = await this.fileRequests.ask(turn, { timeoutMs: FILE_REQUEST_TIMEOUT_MS, signal }, (id) =>
      turn.send({ status: 'in_progress', file_request: { request_id: id, path: read.path, line: read.line ?? 0, limit: read.limit ?? 0 } }),
    );
    if ('timedOut' in ending) this.options.logger.warn(`the editor did not answer for ${read.path} within ${FILE_REQUEST_TIMEOUT_MS / 1000} s: the agent reads it from disk`);
    if (!('answered' in ending) || !ending.answered.open) return undefined;
    if (ending.answered.error) throw new FileAccessError(ending.answered.error);
    return ending.answered.text;
  }

  /**
   * Has the caller make an approved write in the editor's buffer (TaskEvent `file_write`), where
   * the file is open there; fails when no answer comes within FILE_WRITE_TIMEOUT_MS — the buffer
   * may or may not have the change then, and the disk must not get it behind the editor's back.
   */
  private async writeInEditor(
    write: { path: string; base: string; content: string },
    signal: AbortSignal,
    turn: TurnCaller & { send: (event: Record<string, unknown>) => void },
  ): Promise<{ open: boolean; applied: boolean; message: string }> {
    const ending = await this.fileWrites.ask(turn, { timeoutMs: FILE_WRITE_TIMEOUT_MS, signal }, (id) =>
      turn.send({ status: 'in_progress', message: `Writing ${write.path}`, file_write: { request_id: id, ...write } }),
    );
    if ('answered' in ending) return ending.answered;
    throw new FileAccessError('aborted' in ending ? `${write.path}: the turn ended before the editor made the change` : `${write.path}: the editor did not confirm the change within ${FILE_WRITE_TIMEOUT_MS / 1000} s`);
  }

  private confirmFileWrite = (call: grpc.ServerUnaryCall<FileWritten, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    callback(answerOf(this.fileWrites, call, call.request.request_id, call.request, 'file write', 'only the connection that started the turn can confirm its file writes'), {});
  };

  private provideFile = (call: grpc.ServerUnaryCall<FileContent, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    callback(answerOf(this.fileRequests, call, call.request.request_id, call.request, 'file request', 'only the connection that started the turn can answer its file requests'), {});
  };

  private decideApproval(caller: Caller, executionId: string, decision: PermissionDecision): grpc.ServiceError | null {
    return answerOf(this.approvals, caller, executionId, decision, 'approval', 'only the connection that started the task can decide its approvals');
  }

  endAll(): void {
    for (const id of this.sessions.keys()) this.options.driver?.endSession?.(id);
    this.sessions.clear();
  }
}

/** A document's text before and after a position (LSP: line, UTF-16 character; clamped to the text). */
function splitAt(content: string, position: { line: number; character: number }): { prefix: string; suffix: string } {
  const offset = TextDocument.create('', '', 0, content).offsetAt(position);
  return { prefix: content.slice(0, offset), suffix: content.slice(offset) };
}

function timestamp() {
  const now = Date.now();
  return { seconds: Math.floor(now / 1000), nanos: (now % 1000) * 1_000_000 };
}

/** Starts the coordinator on `listen` (`host:port`; port 0 picks a free one). Plaintext on loopback only. */
export async function startCoordinator(listen: string, options: CoordinatorOptions): Promise<RunningCoordinator> {
  const separator = listen.lastIndexOf(':');
  const host = listen.slice(0, separator);
  if (!options.tls && !isLoopbackHost(host)) {
    throw new Error(
      `refusing to listen on ${listen} without TLS: plaintext is only allowed on loopback addresses (127.0.0.1, ::1, localhost); give --tls-cert, --tls-key and --tls-client-ca`,
    );
  }
  if (options.tls && !options.tls.clientCa && !isLoopbackHost(host)) {
    throw new Error(`refusing to listen on ${listen} without client certificates: like Buckley, a non-loopback listener needs mutual TLS (--tls-client-ca)`);
  }
  const credentials = options.tls
    ? grpc.ServerCredentials.createSsl(
        options.tls.clientCa ? readFileSync(options.tls.clientCa) : null,
        [{ cert_chain: readFileSync(options.tls.cert), private_key: readFileSync(options.tls.key) }],
        options.tls.clientCa !== undefined,
      )
    : grpc.ServerCredentials.createInsecure();
  // What the agent can promise is known before the first caller asks (GetServerCapabilities).
  await options.driver?.prepare?.();
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  const service = new CoordinatorService(options);
  server.addService(agentCommunicationService().service, service.handlers());
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(listen, credentials, (error, boundPort) => (error ? reject(error) : resolve(boundPort))),
  );
  const address = `${host}:${port}`;
  options.logger.info(
    `coordinator listening on ${address}${options.tls ? (options.tls.clientCa ? ' (mutual TLS)' : ' (TLS)') : ''}${options.driver ? ` with ${options.driver.description}` : ' without an agent'}`,
  );
  return {
    address,
    port,
    async close() {
      service.endAll();
      // Calls in flight are cancelled (their turns end); the agents and what they started stop.
      server.forceShutdown();
      await options.driver?.close();
    },
  };
}
