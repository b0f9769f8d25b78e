/**
 * Wires the features to the LSP connection, one line per method where possible. Behaviour
 * lives in the feature modules (features/*) and the coordinator modules; the coordinator
 * client is loaded only after `initialize` has been answered, so startup stays fast.
 */
import {
  CodeActionKind,
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  ErrorCodes,
  ResponseError,
  TextDocuments,
  TextDocumentSyncKind,
  InlineCompletionRequest,
  WorkDoneProgressCancelNotification,
  CancellationToken,
  type Connection,
  type ExecuteCommandParams,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { clientIdentity, negotiate, type ClientIdentity, type Features, type InitializeInput } from './capabilities.js';
import type { ConfigInput, ConfigProblem } from '../config.js';
import { AskFailedError } from '../errors.js';
import { CoordinatorLink } from './link.js';
import type { CoordinatorConnection } from './connection.js';
import { ASKS_NOT_READ_ONLY } from './readOnly.js';
import { Settings } from './settings.js';
import { AgentEdits } from './features/agentEdits.js';
import { Answers } from './features/answers.js';
import { AskService } from './features/ask.js';
import { conversationListing, Conversations } from './features/conversations.js';
import { documentEvents } from './documentSync.js';
import { completionsUnavailable, InlineCompletions } from './features/completions.js';
import { codeActionsFor } from './features/codeActions.js';
import { ALL_COMMANDS, executeCommand } from './features/commands.js';
import * as messages from './features/messages.js';
import { ProgressFactory } from './features/progress.js';
import { requestWithin } from './features/editorRequests.js';
import { buildStatus } from './features/status.js';
import { showLog } from './features/log.js';
import * as releaseMemory from './features/memory.js';
import { Limiter } from './features/limits.js';
import { Targets } from './features/target.js';
import { TaskService } from './features/tasks.js';
import { TaskEdits } from './features/taskEdits.js';
import { Proposals } from './features/proposals.js';
import { ApprovalService } from './features/approvals.js';
import { TrustStore } from './features/trust.js';
import type { RootLogger } from '../logger.js';
import {
  AskRequest,
  askParamsSchema,
  CancelTaskRequest,
  cancelTaskParamsSchema,
  codeActionParamsSchema,
  textDocumentPositionSchema,
  describeIssues,
  ExecuteTaskRequest,
  executeTaskParamsSchema,
  FeaturesNotification,
  PROTOCOL_VERSION,
  StatusRequest,
  type EditCommandArgs,
} from './protocol.js';
import { stateDirectory } from '../state.js';
import { canonicalUri, pathOfUri, uriToPath } from '../uri.js';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as z from '../schema.js';

/** How long the editor may take to answer workspace/configuration. */
const CONFIGURATION_TIMEOUT_MS = 2_000;
/**
 * How long stopping may take before `shutdown` is answered anyway (or the process exits):
 * agents still running then are killed as the process exits.
 */
const STOP_DEADLINE_MS = 900;
/** How long buckley.edit waits to learn whether the coordinator proposes edits itself. */
const EDIT_ROUTE_WAIT_MS = 10_000;
/** How long after starting the server waits for `initialized` before connecting anyway. */
const INITIALIZED_TIMEOUT_MS = 5_000;

export interface ServerOptions {
  version: string;
  env: NodeJS.ProcessEnv;
  /** Settings from CLI flags. */
  cliConfig: ConfigInput;
  logger: RootLogger;
  /** The log file the server writes (logFile.ts), for `buckley.showLog` and the status. */
  logFile?: string;
  /** Why there is no log file although one was asked for. */
  logFileProblem?: string;
}

export interface RunningServer {
  shutdownReceived(): boolean;
  /**
   * Ends the work (asks, tasks, approvals), saves the answers and stops the coordinator and its
   * agents, within STOP_DEADLINE_MS. Idempotent: `shutdown`, the end of input and signals share it.
   */
  stop(): Promise<void>;
}

export function startServer(connection: Connection, options: ServerOptions): RunningServer {
  let shutdownReceived = false;
  const { logger, env } = options;
  const stateDir = stateDirectory(env);
  const answers = new Answers(connection, stateDir, logger.child('answers'), join(stateDir, 'answers'), () => workspaceRoots, (uri) => openDocument(uri));
  const conversations = new Conversations(stateDir, logger.child('conversations'));
  const documents = new TextDocuments({
    create: TextDocument.create,
    update(document, changes, version) {
      answers.documentChanged(document.uri, changes);
      return TextDocument.update(document, changes, version);
    },
  });
  const progress = new ProgressFactory(connection, logger.child('progress'));
  const documentSync = documentEvents(connection, logger.child('documents'));
  /** The open document at a URI, with every change the editor sent applied. */
  function openDocument(uri: string): TextDocument | undefined {
    documentSync.flush();
    return documents.get(canonicalUri(uri));
  }
  /** The open document of a file, by its absolute path. */
  const documentAt = (path: string) => openDocument(pathToFileURL(path).href);
  const agentEdits = new AgentEdits(connection, documentAt, () => features, logger.child('edits'), join(stateDir, 'changes'));

  let initialize: InitializeInput = { capabilities: {} };
  let client: ClientIdentity = { name: 'unknown' };
  let workspaceRoots: string[] = [];
  /** The settings problems last reported: they explain a missing agent better than "set it". */
  let settingsProblems: ConfigProblem[] = [];
  const settings = new Settings(env, options.cliConfig, logger, (problems) => {
    settingsProblems = problems;
    messages.error(connection, messages.problems(problems));
  });
  const config = () => settings.current;
  let settingsIn!: () => void;
  const initialSettings = new Promise<void>((resolve) => (settingsIn = resolve));
  // An editor that never sends `initialized` gets a connection with the settings it gave so far.
  const settingsDeadline = setTimeout(() => settingsIn(), INITIALIZED_TIMEOUT_MS);
  settingsDeadline.unref();
  /** What the editor was last told of the coordinator's state. */
  let lastState: string | undefined;
  const warnedNotReadOnly = new WeakSet<CoordinatorConnection>();
  const link = new CoordinatorLink({
    initialSettings: () => initialSettings,
    logger: logger.child('coordinator'),
    env,
    serverVersion: options.version,
    config,
    clientName: () => client.name,
    workspaceRoot: () => workspaceRoots[0],
    openDocuments: () => documents.all().map((document) => document.uri),
    buffer: (path) => {
      const document = documentAt(path);
      return document && { text: document.getText(), version: document.version };
    },
    write: (write) => agentEdits.apply(write),
    onStateChange: (coordinator) => {
      renegotiate();
      // Before the first ask: a coordinator that does not keep asks read-only is named once.
      if (coordinator.state === 'ready' && !coordinator.keepsAsksReadOnly && !warnedNotReadOnly.has(coordinator)) {
        warnedNotReadOnly.add(coordinator);
        logger.warn(ASKS_NOT_READ_ONLY(coordinator.address ?? 'the configured address', coordinator.notes));
        messages.warn(connection, config().ask.requireReadOnly ? 'asks refused here: buckley.ask.requireReadOnly' : 'asks may edit files here: see buckley.ask.requireReadOnly');
      }
      // Said once per change, not at every retry; and a bad agent setting is not covered by "set it".
      const summary = coordinator.error ? (coordinator.errorSummary ?? coordinator.error) : undefined;
      if (summary === lastState) return;
      lastState = summary;
      if (!summary) return;
      const agentSetting = settingsProblems.find((problem) => problem.key.startsWith('buckley.agent.'));
      if (coordinator.agentMissing && agentSetting) messages.error(connection, messages.problems([agentSetting]));
      else messages.warn(connection, /see log/.test(summary) ? summary : `${summary} (see log)`);
    },
  });
  let features: Features = negotiate({ initialize, config: config() });
  /** Negotiates anew; a change after `initialize` (the coordinator's features known) is sent to the editor. */
  const renegotiate = () => {
    const before = JSON.stringify(features.coordinator);
    features = negotiate({ initialize, config: config(), coordinator: link.current?.knownFeatures });
    if (!initialized || JSON.stringify(features.coordinator) === before) return;
    const { known, unused, ...flags } = features.coordinator;
    if (known) {
      const used = Object.entries(flags).filter(([, on]) => on).map(([name]) => name);
      logger.info(`the coordinator's features are known: the bridge uses ${used.join(', ') || 'none'}${unused.length ? `; not (yet): ${unused.join(', ')}` : ''}`);
    }
    void connection.sendNotification(FeaturesNotification.type, features as unknown as Record<string, unknown>);
  };
  settings.onChange((current) => {
    logger.setLevel(current.log.level);
    if (current.answers.directory) answers.setDirectory(current.answers.directory);
    link.settingsChanged(current);
    renegotiate();
  });
  const coordinator = () => link.get();

  const targets = new Targets(documents, () => workspaceRoots, logger.child('context'));
  const limiter = new Limiter(() => config().limits.maxConcurrent);
  const asks = new AskService({
    connection,
    targets,
    answers,
    progress,
    logger: logger.child('ask'),
    config,
    features: () => features,
    coordinator,
    limiter,
    conversations,
    openText: (uri) => documents.get(canonicalUri(uri))?.getText(),
  });
  const trust = new TrustStore(join(stateDir, 'trust.json'), logger.child('trust'));
  const approvals = new ApprovalService({
    connection,
    documents,
    trust,
    logger: logger.child('approvals'),
    config,
    features: () => features,
    workspaceRoot: () => pathOfUri(workspaceRoots[0]),
    showChange: (executionId, diff) => agentEdits.showChange(executionId, diff),
  });
  const taskEdits = new TaskEdits(agentEdits, () => pathOfUri(workspaceRoots[0]), logger.child('edits'));
  const tasks = new TaskService({
    edits: taskEdits,
    connection,
    approvals,
    targets,
    answers,
    progress,
    logger: logger.child('task'),
    config,
    features: () => features,
    coordinator,
    limiter,
  });
  const status = () =>
    buildStatus({
      version: options.version,
      logFile: options.logFile,
      client,
      config: config(),
      features,
      coordinator: link.current,
      tasks: tasks.running().map((task) => task.state),
      approvals: approvals.list(),
      conversations: conversations.list(),
      completions: completionsUnavailable(features, config()),
    });
  /** buckley.conversations: the list, opened as a document where the editor opens documents, else in the log. */
  const listConversations = async () => {
    const list = conversations.list();
    const listing = conversationListing(list, uriToPath);
    connection.console.info(listing);
    if (features.showDocument) await answers.showListing('conversations.md', listing);
    else messages.info(connection, `${list.length} conversation(s): listed in the log`);
    return { conversations: list };
  };

  let initialized = false;
  connection.onInitialize((params: InitializeParams): InitializeResult => {
    initialized = true;
    initialize = params;
    client = clientIdentity(params);
    workspaceRoots = workspaceRootsOf(params);
    const { clientCapabilities: _ignored, ...values } = (params.initializationOptions ?? {}) as Record<string, unknown>;
    settings.setInitializationOptions(values);
    renegotiate();
    logger.info(`buckley-lsp ${options.version} serving ${client.name} ${client.version ?? ''}`.trim());
    return {
      capabilities: {
        positionEncoding: 'utf-16',
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.Empty], resolveProvider: false },
        executeCommandProvider: { commands: ALL_COMMANDS },
        // Only for editors that ask (LSP 3.18); whether the coordinator can is known later (buckley/status says).
        ...(features.inlineCompletion ? { inlineCompletionProvider: {} } : {}),
        experimental: { buckley: { protocolVersion: PROTOCOL_VERSION, features } },
      },
      serverInfo: { name: 'buckley-lsp', version: options.version },
    };
  });

  connection.onInitialized(async () => {
    // Registered here, not earlier: vscode-languageserver installs its own handler while
    // initializing, which knows nothing of our progress tokens.
    connection.onNotification(WorkDoneProgressCancelNotification.type, ({ token }) => progress.cancel(token));
    if (features.configuration) {
      await pullWorkspaceConfig();
      if (features.configurationChangeRegistration) {
        connection.client.register(DidChangeConfigurationNotification.type, { section: 'buckley' }).catch(() => undefined);
      }
    }
    clearTimeout(settingsDeadline);
    settingsIn();
    answers.load().catch(() => undefined);
    trust.load().then(() => trust.problemSummary && messages.error(connection, `${trust.problemSummary} (see log)`));
    if (options.logFileProblem) {
      logger.warn(options.logFileProblem);
      messages.warn(connection, 'cannot write its log file (the LSP log says why)');
    }
    void link.get();
  });

  const pullWorkspaceConfig = async () => {
    try {
      // An editor that never answers must not hold up the first connection for ever.
      const [section] = await requestWithin(connection, ConfigurationRequest.type, { items: [{ section: 'buckley' }] }, CONFIGURATION_TIMEOUT_MS);
      settings.setWorkspace(section ?? undefined);
    } catch (error) {
      logger.debug(`workspace/configuration failed: ${(error as Error).message}`);
    }
  };

  connection.onDidChangeConfiguration(async (change) => {
    if (features.configuration) return pullWorkspaceConfig();
    settings.setWorkspace((change.settings as { buckley?: unknown } | null)?.buckley);
  });

  const saveAnswers = () => {
    try {
      answers.saveSync();
      conversations.saveSync();
    } catch (error) {
      logger.warn(`could not save the answers: ${(error as Error).message}`);
    }
  };
  // However the process ends (the LSP `exit` notification exits at once), the answers are saved.
  process.on('exit', saveAnswers);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      asks.cancelAll();
      tasks.cancelAll();
      completions.cancelAll();
      saveAnswers();
      await Promise.race([link.close(), new Promise((resolve) => setTimeout(resolve, STOP_DEADLINE_MS).unref())]);
    })());

  connection.onShutdown(async () => {
    shutdownReceived = true;
    await stop();
  });

  documents.onDidOpen(({ document }) => link.current?.documentOpened(document.uri));
  documents.onDidClose(({ document }) => {
    link.current?.documentClosed(document.uri);
    releaseMemory.documentClosed(document.getText().length);
  });

  /**
   * Every request handler: refused before `initialize` (ServerNotInitialized) and after
   * `shutdown` (InvalidRequest), as LSP says; one debug line with method, duration and outcome.
   */
  const timed =
    <P, R>(method: string, handler: (params: P, token: CancellationToken) => R | Promise<R>) =>
    async (params: P, token: CancellationToken): Promise<R> => {
      const started = performance.now();
      let outcome = 'ok';
      try {
        if (!initialized) throw new ResponseError(ErrorCodes.ServerNotInitialized, `${method} before initialize`);
        if (shutdownReceived) throw new ResponseError(ErrorCodes.InvalidRequest, `${method} after shutdown: the server is shutting down`);
        // Changes held for their turn are in before anything reads a document.
        documentSync.flush();
        return await handler(params, token);
      } catch (error) {
        outcome = error instanceof ResponseError ? `error ${error.code}: ${error.message}` : `failed: ${(error as Error).message}`;
        throw error;
      } finally {
        logger.debug(`${method} ${(performance.now() - started).toFixed(1)} ms ${outcome}`);
      }
    };

  connection.onRequest(AskRequest.type, timed(AskRequest.method, (params, token) => {
    const { question, context, conversation, workDoneToken, partialResultToken } = validate(askParamsSchema, params);
    return asks.ask(
      { question, conversation, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles },
      { token, workDoneToken, partialResultToken },
    );
  }));
  connection.onRequest(ExecuteTaskRequest.type, timed(ExecuteTaskRequest.method, (params) => {
    const { task, planId, context } = validate(executeTaskParamsSchema, params);
    return tasks.start({ task, planId, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles });
  }));
  connection.onRequest(CancelTaskRequest.type, timed(CancelTaskRequest.method, (params) => ({ cancelled: tasks.cancel(validate(cancelTaskParamsSchema, params).taskId) })));
  // Declared without params, so vscode-jsonrpc takes it with none; `{}` or `null` are ignored.
  const timedStatus = timed(StatusRequest.method, status);
  connection.onRequest(StatusRequest.type, () => timedStatus(undefined, CancellationToken.None));
  connection.onCodeAction(timed('textDocument/codeAction', (params) => {
    const { textDocument, range } = validate(codeActionParamsSchema, params);
    const document = documents.get(canonicalUri(textDocument.uri));
    const path = pathOfUri(document?.uri);
    if (!document) return [];
    return codeActionsFor(document, range, features.codeActionLiterals, tasks.running(), approvals.commands(), path ? taskEdits.undoable(path) : [], conversations.ofDocument(document.uri));
  }));
  const proposals = new Proposals({ connection, approvals, agentEdits, targets, logger: logger.child('edit'), config, documentAt: (uri) => openDocument(uri) });
  /** buckley.edit: Buckley proposes edits itself (`propose_edits`); ours edits through its agent's reviewed writes. */
  const edit = async (args: EditCommandArgs) => {
    const coordinator = await link.get();
    // Which way depends on what the coordinator offers: known once it has answered (a coordinator
    // still silent after EDIT_ROUTE_WAIT_MS gets the task, which has deadlines of its own).
    await coordinator.whenSettled(EDIT_ROUTE_WAIT_MS);
    const offered = coordinator.features;
    if (!offered.includes('propose_edits') || offered.includes('edit_selection')) return tasks.edit(args);
    try {
      return await proposals.propose(coordinator, args);
    } catch (error) {
      messages.error(connection, `edit failed: ${error instanceof AskFailedError && error.summary ? error.summary : (error as Error).message}`);
      throw error;
    }
  };
  connection.onExecuteCommand(timed('workspace/executeCommand', (params: ExecuteCommandParams) => executeCommand(params, { asks, tasks, approvals, status, edit, conversations: listConversations, showLog: () => showLog(connection, features, options.logFile) })));
  const completions = new InlineCompletions({ documents, config, features: () => features, coordinator, logger: logger.child('completions') });
  connection.onRequest(InlineCompletionRequest.type, timed(InlineCompletionRequest.method, (params, token) => {
    validate(textDocumentPositionSchema, params);
    return completions.complete(params, token);
  }));
  connection.onHover(timed('textDocument/hover', (params) => {
    const { textDocument, position } = validate(textDocumentPositionSchema, params);
    return features.answerHover ? answers.hover(canonicalUri(textDocument.uri), position, features.markdownHover) : null;
  }));
  documents.listen(documentSync.events);
  connection.listen();
  return { shutdownReceived: () => shutdownReceived, stop };
}


function workspaceRootsOf(params: InitializeParams): string[] {
  if (params.workspaceFolders?.length) return params.workspaceFolders.map((folder) => canonicalUri(folder.uri));
  return params.rootUri ? [canonicalUri(params.rootUri)] : [];
}

/** The connection as the document store sees it: every document URI canonical (see uri.ts). */
/** Custom request params, validated: bad ones are InvalidParams saying what is wrong. */
function validate<T>(schema: z.core.$ZodType<T>, params: unknown): T {
  const parsed = z.safeParse(schema, params);
  if (!parsed.success) throw new ResponseError(ErrorCodes.InvalidParams, describeIssues(parsed.error));
  return parsed.data;
}
