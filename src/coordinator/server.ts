/**
 * Our coordinator: the buckley.acp.v1.AgentCommunication RPCs the bridge uses, on top of an
 * agent driver. The rest of the service answers UNIMPLEMENTED (grpc-js does that for methods
 * without a handler). It runs standalone (`buckley-lsp coordinator`) or embedded in the bridge
 * on a loopback port; either way the bridge reaches it over real gRPC.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { hostname } from 'node:os';
import { isAbsolute } from 'node:path';
import { PEM_MAX_BYTES, readFileBounded } from '../fileAccess.js';
import * as grpc from '@grpc/grpc-js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Logger } from '../logger.js';
import type { AgentDriver } from './agents/driver.js';
import { workspaceOf } from './files.js';
import { afterTurnNote, TurnFiles } from './turnFiles.js';
import { isLoopbackHost } from '../net.js';
import { controlHandlers } from './controls.js';
import { agentFailure, certifiedIdentity, checkIdentity, fail, identityOf, type Caller } from './callers.js';
import { CallOut } from './callOut.js';
import { CallerSessions, metadataProblem } from './sessions.js';
import { askSink, refusalNote, withNotes } from './turnRules.js';
import { agentCommunicationService } from '../wire/protos.js';
import { FEATURES } from './features.js';
import { AGENT_MODE_KEY, TERMINALS_HEADER, AUTHORIZATION_HEADER, WORKSPACE_KEY, QUESTIONS_HEADER, BUFFERS_HEADER, CONVERSATION_HEADER, EARLIER_TURNS_KEY, INTENT_HEADER, SESSION_HEADER, receivedContext, type ContextDelta, type CreateSessionRequest, type EditorContext, type SendMessageRequest, type TaskStreamRequest, type InlineCompletionRequest } from '../wire/contract.js';
import { uriToPath } from '../uri.js';
import { FEATURE } from '../wire/features.js';
import { memoryEngine } from './tasks/memory.js';
import { TaskRpc, timestamp } from './tasks/rpc.js';
import { TaskRunner } from './tasks/runner.js';
import { outsideRoots, turnOf, type TaskSpec } from './tasks/spec.js';
import type { TaskEngine } from './tasks/store.js';

export const PROTOCOL_VERSION = '1.0';

export { APPROVAL_TIMEOUT_MS, FILE_REQUEST_TIMEOUT_MS, FILE_WRITE_TIMEOUT_MS } from './tasks/runner.js';

/** Tasks run at once by one coordinator, unless told otherwise (more wait in the queue). */
export const MAX_RUNNING = 16;
/** How long a stopping coordinator lets its callers hear why their calls end. */
const STOP_GRACE_MS = 500;

export interface CoordinatorOptions {
  /** The agent; undefined when none could be found, and `agentProblem` says why. */
  driver?: AgentDriver;
  agentProblem?: string;
  logger: Logger;
  /** PEM files: serve TLS with `cert` + `key`; require client certificates signed by `clientCa`. */
  tls?: { cert: string; key: string; clientCa?: string };
  /** Serve only callers sending `authorization: Bearer <secret>` (the embedded coordinator's bridge). */
  secret?: string;
  /** Where tasks live: in memory (the default), or a team's NATS JetStream. */
  engine?: TaskEngine;
  /** This coordinator's name among a team's (default: the host and process). */
  replica?: string;
  /** Tasks it runs at once; more wait in the queue. */
  maxRunning?: number;
  /** How long a detached task's caller may be gone (absence.ts: CALLER_GRACE_MS). */
  callerGraceMs?: number;
  /** The only folders whose workspaces it takes tasks in (`--roots`); unset: any. */
  roots?: string[];
  /** Where it serves Prometheus metrics (`--metrics HOST:PORT`); unset: none, and prom-client is not loaded. */
  metrics?: string;
  /** How often it pings a caller's connection that says nothing (KEEPALIVE_MS). */
  keepaliveMs?: number;
}

/**
 * A caller's connection is pinged after this long without a word, and given as long again to
 * answer: one that does not (its machine asleep, its network gone, no TCP reset) is closed, and
 * its calls end — its tasks are its caller's gone then, not followed for hours by no one.
 */
export const KEEPALIVE_MS = 60_000;

export interface RunningCoordinator {
  address: string;
  port: number;
  close(): Promise<void>;
}

class CoordinatorService {
  private readonly sessions: CallerSessions;
  readonly tasks: TaskRpc;

  constructor(
    private readonly options: CoordinatorOptions,
    private readonly engine: TaskEngine,
  ) {
    this.tasks = new TaskRpc({ engine, logger: options.logger, specOf: (call) => this.specOf(call) });
    this.sessions = new CallerSessions((id) => options.driver?.endSession?.(id));
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
        return refused ? new CallOut(call).fail(refused) : this.tasks.streamTask(call);
      },
      SubscribeTaskEvents: (call: grpc.ServerWritableStream<{ plan_id: string; task_ids: string[]; from_sequence: number }, unknown>) => {
        const refused = this.refuse(call);
        return refused ? new CallOut(call).fail(refused) : this.tasks.subscribe(call);
      },
      StreamInlineCompletions: (call: grpc.ServerWritableStream<InlineCompletionRequest, unknown>) => {
        const refused = this.refuse(call);
        return refused ? new CallOut(call).fail(refused) : this.streamInlineCompletions(call);
      },
      ApproveToolExecution: unary(this.tasks.approve),
      RejectToolExecution: unary(this.tasks.reject),
      ProvideFile: unary(this.tasks.provideFile),
      ConfirmFileWrite: unary(this.tasks.confirmFileWrite),
      GetAgentControls: unary(controls.GetAgentControls),
      SetAgentModel: unary(controls.SetAgentModel),
      SetAgentMode: unary(controls.SetAgentMode),
      AnswerQuestion: unary(this.tasks.answerQuestion),
      AnswerTerminal: unary(this.tasks.answerTerminal),
      CancelTask: unary(this.tasks.cancelTask),
      ListTasks: unary(this.tasks.listTasks),
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
      features: [
        ...FEATURES.filter((feature) => !(unsafeAsks && feature === FEATURE.readOnlyAsks)),
        ...(this.engine.name === 'nats' ? [FEATURE.sharedTasks] : []),
        ...(this.options.driver?.complete ? [FEATURE.inlineCompletion] : []),
        ...(this.options.driver?.controls ? [FEATURE.agentControls] : []),
        ...(this.options.driver?.chooseMode ? [FEATURE.agentModes] : []),
      ],
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
    const problem = metadataProblem(request.metadata);
    if (problem) return callback(fail(grpc.status.INVALID_ARGUMENT, problem));
    const sessionId = this.sessions.create(identityOf(call, ''), request.agent_id, request.metadata);
    this.options.logger.info(`session ${sessionId} created for ${request.agent_id}`);
    callback(null, { session_id: sessionId, agent_id: request.agent_id, created_at: timestamp(), metadata: request.metadata });
  };

  private updateSessionContext = (call: grpc.ServerUnaryCall<ContextDelta, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    const delta = call.request;
    if (!delta.session_id) return callback(fail(grpc.status.INVALID_ARGUMENT, 'session_id is required'));
    const session = this.sessions.use(delta.session_id, identityOf(call, ''));
    if (!session) return callback(fail(grpc.status.NOT_FOUND, noSession(delta.session_id)));
    const problem = metadataProblem(session.metadata, delta.metadata);
    if (problem) return callback(fail(grpc.status.INVALID_ARGUMENT, problem));
    // The files it names are not kept: each request brings the editor's context with it.
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
    const made = this.prepare(call, request.agent_id, content, receivedContext(request.context), 'ask');
    if (made.error) return callback(made.error);
    const driver = this.options.driver;
    if (!driver) return callback(fail(grpc.status.FAILED_PRECONDITION, this.options.agentProblem ?? 'no agent is configured'));
    const turn = turnOf(made.spec);
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    try {
      const sink = askSink({ text() {}, tool() {}, plan() {}, thought() {}, notice() {} }, turn.cwd, this.options.logger);
      const files = new TurnFiles(sink, turn.cwd, { readOnly: true });
      const result = await driver.run(turn, files.sink, controller.signal);
      const refusal = refusalNote(result, controller.signal, driver.shortName, true);
      if (result.stopReason === 'cancelled' && !refusal) return callback(fail(grpc.status.CANCELLED, 'the ask was cancelled'));
      const notes = withNotes(result.text, [refusal, afterTurnNote(driver.shortName, undefined, result.unasked ?? [], workspaceOf(turn.cwd))]);
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
    const out = new CallOut(call);
    const request = call.request;
    const denied = request.agent_id ? checkIdentity(call, request.agent_id) : undefined;
    if (denied) return out.fail(denied);
    const complete = this.options.driver?.complete?.bind(this.options.driver);
    if (!complete) {
      return out.fail(fail(grpc.status.UNIMPLEMENTED, `${this.options.driver?.description ?? 'no agent'} does not complete code inline; a model does (buckley.agent.driver "openai")`));
    }
    const document = receivedContext(request.context)?.document;
    const cursor = document?.selection?.start;
    const { prefix, suffix } = document && cursor ? splitAt(document.content, cursor) : { prefix: request.prompt ?? '', suffix: '' };
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    try {
      const completion = await complete({ prefix, suffix, language: document?.language_id }, controller.signal);
      if (controller.signal.aborted) return;
      out.write({ completion_id: randomUUID(), text: completion.text, is_final: true, finish_reason: completion.finishReason, score: 0 });
      out.end();
    } catch (error) {
      if (controller.signal.aborted) return;
      out.fail(agentFailure(error));
    }
  };

  /** The task a StreamTask asks for (its intent in x-buckley-intent), checked; or the error to answer with. */
  private specOf(call: grpc.ServerWritableStream<TaskStreamRequest, unknown>): { spec: TaskSpec; error?: undefined } | { error: grpc.ServiceError } {
    const request = call.request;
    if (!request.query?.trim()) return { error: fail(grpc.status.INVALID_ARGUMENT, 'query must not be empty') };
    const intent = call.metadata.get(INTENT_HEADER)[0]?.toString();
    const made = this.prepare(call, request.agent_id, request.query, receivedContext(request.context), intent === 'ask' || intent === 'edit' ? intent : 'task');
    if (made.error) return made;
    const answers = call.metadata.get(QUESTIONS_HEADER)[0]?.toString();
    const traceparent = call.metadata.get('traceparent')[0]?.toString();
    return {
      spec: {
        ...made.spec,
        // A caller that holds the editor's buffers is asked for the file first.
        servesBuffers: call.metadata.get(BUFFERS_HEADER)[0]?.toString() === '1',
        // A caller that makes the agent's terminal calls in its client's terminals (an ACP panel).
        ...(call.metadata.get(TERMINALS_HEADER)[0]?.toString() === '1' ? { servesTerminals: true } : {}),
        ...(answers === '1' || answers === '2' ? { questions: answers === '2' ? ('typed' as const) : ('choice' as const) } : {}),
        ...(traceparent ? { traceparent } : {}),
      },
    };
  }

  /** Validates identity and session; the task as asked (its workspace: the editor's, else the session's). */
  private prepare(call: Caller, agentId: string, query: string, context: EditorContext | undefined, intent: TaskSpec['intent']): { spec: TaskSpec; error?: undefined } | { error: grpc.ServiceError } {
    const denied = agentId ? checkIdentity(call, agentId) : undefined;
    if (denied) return { error: denied };
    if (!this.options.driver) return { error: fail(grpc.status.FAILED_PRECONDITION, this.options.agentProblem ?? 'no agent is configured') };
    const metadata = call.metadata;
    const sessionId = metadata.get(SESSION_HEADER)[0]?.toString();
    const conversation = metadata.get(CONVERSATION_HEADER)[0]?.toString();
    let cwd: string | undefined;
    if (sessionId) {
      const session = this.sessions.use(sessionId, identityOf(call, ''));
      if (!session) return { error: fail(grpc.status.NOT_FOUND, noSession(sessionId)) };
      cwd = session.metadata.workspace_root;
    }
    const root = context?.document?.workspace_root || context?.metadata?.[WORKSPACE_KEY] || cwd;
    const workspace = root ? uriToPath(root) : undefined;
    // A relative one would be found from this coordinator's own folder, and made the agent's to write.
    if (root && !isAbsolute(workspace!)) return { error: fail(grpc.status.INVALID_ARGUMENT, `the task's workspace "${root.slice(0, 200)}" is neither a file: URI nor an absolute path: name the folder whole`) };
    const outside = outsideRoots(this.options.roots, workspace);
    if (outside) return { error: fail(grpc.status.FAILED_PRECONDITION, outside) };
    return {
      spec: {
        agentId,
        query,
        ...(context ? { context } : {}),
        intent,
        sessionKey: `${sessionId ?? `agent:${identityOf(call, agentId)}`}${conversation ? `#${conversation}` : ''}`,
        // The same across restarts (the session id is not): how an agent's saved session is found again.
        // The conversation id is a random UUID held by its caller; a certificate's name, which cannot be
        // claimed falsely, binds it further (an agent-id header can, and instance ids change per start).
        ...(conversation ? { conversationKey: `${certifiedIdentity(call) ?? ''}#${conversation}` } : {}),
        ...(conversation && context?.metadata?.[EARLIER_TURNS_KEY] ? { earlier: context.metadata[EARLIER_TURNS_KEY] } : {}),
        ...(intent !== 'ask' && context?.metadata?.[AGENT_MODE_KEY] ? { mode: context.metadata[AGENT_MODE_KEY] } : {}),
        // Where the agent works: the editor's workspace; none named, none writable (it starts in an empty folder).
        ...(workspace ? { cwd: workspace } : {}),
        servesBuffers: false,
      },
    };
  }

  endAll(): void {
    this.sessions.endAll();
  }
}

/** A session the caller named that is not theirs: unknown, another's, or forgotten (the least recently used beyond the bound). */
function noSession(id: string): string {
  return `no session ${id.slice(0, 200)} of yours (unknown, or unused for long and forgotten): create one with CreateSession`;
}

/** A document's text before and after a position (LSP: line, UTF-16 character; clamped to the text). */
function splitAt(content: string, position: { line: number; character: number }): { prefix: string; suffix: string } {
  const offset = TextDocument.create('', '', 0, content).offsetAt(position);
  return { prefix: content.slice(0, offset), suffix: content.slice(offset) };
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
        options.tls.clientCa ? readFileBounded(options.tls.clientCa, PEM_MAX_BYTES) : null,
        [{ cert_chain: readFileBounded(options.tls.cert, PEM_MAX_BYTES), private_key: readFileBounded(options.tls.key, PEM_MAX_BYTES) }],
        options.tls.clientCa !== undefined,
      )
    : grpc.ServerCredentials.createInsecure();
  // What the agent can promise is known before the first caller asks (GetServerCapabilities).
  await options.driver?.prepare?.();
  const stored = options.engine ?? memoryEngine();
  const metrics = options.metrics ? await (await import('./metrics.js')).serveMetrics(options.metrics, stored, options.logger) : undefined;
  const engine = metrics?.engine ?? stored;
  const replica = options.replica ?? `${hostname()}:${process.pid}`;
  const runner = new TaskRunner({ engine, driver: options.driver, agentProblem: options.agentProblem, logger: options.logger, replica, callerGraceMs: options.callerGraceMs, roots: options.roots });
  metrics?.start({ engine, replica, runningHere: () => runner.runningHere });
  // With none to run, it serves the team's callers and leaves running to the others.
  const maxRunning = options.maxRunning ?? MAX_RUNNING;
  const working = maxRunning > 0 ? runner.start(maxRunning) : { stop: async () => undefined };
  const keepalive = options.keepaliveMs ?? KEEPALIVE_MS;
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.keepalive_time_ms': keepalive, 'grpc.keepalive_timeout_ms': keepalive });
  const service = new CoordinatorService(options, engine);
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
      // Its callers told to follow their tasks on another (a team's tasks live on), and given a
      // moment to hear it; then calls still in flight are cancelled, the tasks running here end
      // (failed: another run is the caller's to ask for), and the agents and what they started stop.
      // A store that is away is not waited for: what it has not taken by then is said in the log.
      engine.stopping();
      await service.tasks.stop();
      service.endAll();
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        setTimeout(resolve, STOP_GRACE_MS).unref();
      });
      server.forceShutdown();
      await working.stop();
      await runner.stop();
      await options.driver?.close();
      await metrics?.close();
      await engine.close();
    },
  };
}
