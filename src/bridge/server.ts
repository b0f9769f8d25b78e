/**
 * The language server: `register()` binds one named handler per LSP method; the handlers
 * validate what the editor sent and hand it to the features (services.ts), which talk to the
 * editor through an `EditorClient` and to the coordinator through the link. The coordinator
 * client is loaded only after `initialize` has been answered, so startup stays fast.
 */
import { homedir } from 'node:os';
import {
  CancellationToken,
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  ErrorCodes,
  InlineCompletionRequest,
  ResponseError,
  WorkDoneProgressCancelNotification,
  type CodeActionParams,
  type Connection,
  type DidChangeConfigurationParams,
  type ExecuteCommandParams,
  type HoverParams,
  type InlineCompletionParams,
  type CompletionParams,
} from 'vscode-languageserver';
import { stateDirectory } from '../state.js';
import { canonicalUri, pathOfUri } from '../uri.js';
import { workspaceRootsOf } from './workspace.js';
import * as z from '../schema.js';
import { clientIdentity, negotiate, type ClientIdentity, type Features, type InitializeInput } from './capabilities.js';
import { documentEvents } from './documentSync.js';
import { lspEditor, type EditorClient } from './editor/client.js';
import * as releaseMemory from './editor/memory.js';
import * as messages from './editor/messages.js';
import { codeActionsFor } from './flows/codeActions.js';
import { executeCommand as runCommand } from './flows/commands.js';
import { completionsUnavailable } from './flows/completions.js';
import { listConversations } from './flows/conversationList.js';
import { showLog } from './flows/log.js';
import { buildStatus } from './flows/status.js';
import { CoordinatorLink } from './link/link.js';
import { CoordinatorNotices } from './link/notices.js';
import {
  AskRequest,
  askParamsSchema,
  CancelTaskRequest,
  cancelTaskParamsSchema,
  codeActionParamsSchema,
  describeIssues,
  ExecuteTaskRequest,
  executeCommandParamsSchema,
  executeTaskParamsSchema,
  FeaturesNotification,
  StatusRequest,
  textDocumentPositionSchema,
  type AskParams,
  type ExecuteTaskParams,
  type StatusResult,
} from './protocol.js';
import { createServices, endWork, saveState, type Services } from './services.js';
import type { Config } from '../config.js';
import { Settings, type LeftOut } from './settings.js';
import { projectFileName } from './projectSettings.js';
import type { Initialized, RunningServer, ServerOptions } from './start.js';

/** How long the editor may take to answer workspace/configuration. */
const CONFIGURATION_TIMEOUT_MS = 2_000;
/**
 * How long stopping may take before `shutdown` is answered anyway (or the process exits):
 * agents still running then are killed as the process exits.
 */
const STOP_DEADLINE_MS = 900;
/** How long the status waits for a team's coordinator to list its running tasks. */
const TEAM_STATUS_MS = 2_000;
/** How long the server waits for `initialized` (and the editor's settings) before starting the link anyway. */
const INITIALIZED_TIMEOUT_MS = 5_000;

/**
 * Where the server is in LSP's lifecycle: it is made once `initialize` is answered (start.ts) and
 * serves requests (LSP allows them before `initialized` arrives) until `shutdown`.
 */
type Phase = 'serving' | 'shut down';

export class BuckleyServer implements RunningServer {
  private phase: Phase = 'serving';
  private readonly initializeInput: InitializeInput;
  private readonly client: ClientIdentity;
  private readonly workspaceRoots: string[];
  private features: Features;
  private readonly editor: EditorClient;
  private readonly settings: Settings;
  private readonly notices: CoordinatorNotices;
  private readonly link: CoordinatorLink;
  private readonly services: Services;
  private readonly documentSync: ReturnType<typeof documentEvents>;
  /** The editor's own settings are in (or it never sent `initialized`): the first connection may be made. */
  private settingsIn!: () => void;
  private readonly settingsDeadline: NodeJS.Timeout;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly connection: Connection,
    private readonly options: ServerOptions,
    { sources, params }: Initialized,
  ) {
    const { logger, env } = options;
    this.initializeInput = params;
    this.client = clientIdentity(params);
    this.workspaceRoots = workspaceRootsOf(params, { cwd: process.cwd(), home: env.HOME || homedir() });
    if (!params.workspaceFolders?.length && !params.rootUri) logger.info(this.workspaceRoots.length ? `the editor names no workspace: the folder it started in, ${pathOfUri(this.workspaceRoots[0]!)}, is the workspace` : `the editor names no workspace, and it started in ${process.cwd()}: tasks start in an empty folder, with nothing to write (open a project folder)`);
    this.editor = lspEditor(connection);
    this.settings = new Settings(sources, logger, () => this.workspaceRoots.flatMap((root) => pathOfUri(root) ?? []), env.HOME || homedir());
    this.notices = new CoordinatorNotices(this.editor, logger.child('coordinator'), () => this.settings.current);
    this.settings.onProblems((problems) => this.notices.settingsProblemsFound(problems));
    if (this.settings.problems.length > 0) this.notices.settingsProblemsFound(this.settings.problems);
    const leftOut = (left: LeftOut) => messages.warn(this.editor, messages.fit(`ignored ${projectFileName(left.file)}'s `, left.keys.join(', '), ' (see log)'));
    this.settings.onLeftOut(leftOut);
    this.settings.leftOut.forEach(leftOut);
    this.features = negotiate({ initialize: params, config: this.settings.current });
    this.documentSync = documentEvents(connection, logger.child('documents'));
    this.services = createServices({
      editor: this.editor,
      logger,
      stateDir: stateDirectory(env),
      documentEvents: this.documentSync.events,
      flushDocuments: () => this.documentSync.flush(),
      config: () => this.settings.current,
      features: () => this.features,
      workspaceRoots: () => this.workspaceRoots,
      coordinator: () => this.link.get(),
    });
    const initialSettings = new Promise<void>((resolve) => (this.settingsIn = resolve));
    // An editor that never sends `initialized` gets a connection with the settings it gave so far.
    this.settingsDeadline = setTimeout(() => this.settingsIn(), INITIALIZED_TIMEOUT_MS).unref();
    this.link = this.linkToCoordinator(initialSettings);
    const applySettings = (current: Config) => {
      logger.setLevel(current.log.level);
      if (current.answers.directory) this.services.answers.setDirectory(current.answers.directory);
    };
    applySettings(this.settings.current);
    this.settings.onChange((current) => {
      applySettings(current);
      this.link.settingsChanged(current);
      this.renegotiate();
    });
    // However the process ends (the LSP `exit` notification exits at once), the answers are saved.
    process.on('exit', () => saveState(this.services));
    logger.info(`buckley-lsp ${options.version} serving ${this.client.name} ${this.client.version ?? ''}`.trim());
  }

  register(): void {
    const connection = this.connection;
    connection.onInitialized(this.initialized);
    connection.onDidChangeConfiguration(this.didChangeConfiguration);
    connection.onShutdown(this.shutdown);
    connection.onRequest(AskRequest.type, this.request(AskRequest.method, this.ask));
    connection.onRequest(ExecuteTaskRequest.type, this.request(ExecuteTaskRequest.method, this.executeTask));
    connection.onRequest(CancelTaskRequest.type, this.request(CancelTaskRequest.method, this.cancelTask));
    // Declared without params, so vscode-jsonrpc takes it with none; `{}` or `null` are ignored.
    connection.onRequest(StatusRequest.type, () => this.request(StatusRequest.method, this.status)(undefined, CancellationToken.None));
    connection.onCodeAction(this.request('textDocument/codeAction', this.codeAction));
    connection.onExecuteCommand(this.request('workspace/executeCommand', this.executeCommand));
    connection.onRequest(InlineCompletionRequest.type, this.request(InlineCompletionRequest.method, this.inlineCompletion));
    connection.onHover(this.request('textDocument/hover', this.hover));
    connection.onCompletion(this.request('textDocument/completion', this.completion));
    this.services.documents.onDidOpen(({ document }) => this.link.current?.documentOpened(document.uri));
    this.services.documents.onDidClose(({ document }) => {
      this.link.current?.documentClosed(document.uri);
      releaseMemory.documentClosed(document.getText().length);
    });
  }

  shutdownReceived(): boolean {
    return this.phase === 'shut down';
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      endWork(this.services);
      await Promise.race([this.link.close(), new Promise((resolve) => setTimeout(resolve, STOP_DEADLINE_MS).unref())]);
    })();
    return this.stopping;
  }

  // ---- lifecycle ----

  private readonly initialized = async (): Promise<void> => {
    const { answers, trust, progress } = this.services;
    // Registered here, not earlier: vscode-languageserver installs its own handler while
    // initializing, which knows nothing of our progress tokens.
    this.connection.onNotification(WorkDoneProgressCancelNotification.type, ({ token }) => progress.cancel(token));
    if (this.features.configuration) {
      await this.pullWorkspaceConfig();
      if (this.features.configurationChangeRegistration) {
        this.connection.client.register(DidChangeConfigurationNotification.type, { section: 'buckley' }).catch(() => undefined);
      }
    }
    clearTimeout(this.settingsDeadline);
    this.settingsIn();
    answers.load().catch(() => undefined);
    trust.load().then(() => trust.problemSummary && messages.error(this.editor, `${trust.problemSummary} (see log)`));
    if (this.options.logFileProblem) {
      this.options.logger.warn(this.options.logFileProblem);
      messages.warn(this.editor, 'cannot write its log file (the LSP log says why)');
    }
    // A remote coordinator is connected to now; the embedded one waits until it is first needed.
    void this.link.start();
  };

  private readonly didChangeConfiguration = async (change: DidChangeConfigurationParams): Promise<void> => {
    if (this.features.configuration) return this.pullWorkspaceConfig();
    this.settings.setWorkspace((change.settings as { buckley?: unknown } | null)?.buckley);
  };

  private readonly shutdown = async (): Promise<void> => {
    this.phase = 'shut down';
    await this.stop();
  };

  private async pullWorkspaceConfig(): Promise<void> {
    try {
      // An editor that never answers must not hold up the first connection for ever.
      const [section] = await this.editor.request(ConfigurationRequest.type, { items: [{ section: 'buckley' }] }, { timeoutMs: CONFIGURATION_TIMEOUT_MS });
      this.settings.setWorkspace(section ?? undefined);
    } catch (error) {
      this.options.logger.debug(`workspace/configuration failed: ${(error as Error).message}`);
    }
  }

  // ---- requests ----

  private readonly ask = (params: AskParams, token: CancellationToken) => {
    const { question, context, conversation, workDoneToken, partialResultToken } = validate(askParamsSchema, params);
    return this.services.asks.ask(
      { question, conversation, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles },
      { token, workDoneToken, partialResultToken },
    );
  };

  private readonly executeTask = (params: ExecuteTaskParams) => {
    const { task, planId, context } = validate(executeTaskParamsSchema, params);
    return this.services.tasks.start({ task, planId, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles });
  };

  private readonly cancelTask = (params: unknown) => ({ cancelled: this.services.tasks.cancel(validate(cancelTaskParamsSchema, params).taskId) });

  private readonly status = async () => {
    const { tasks, approvals, conversations, controls } = this.services;
    // Asked how the coordinator is: it is started if it is not yet, and says so as it goes.
    this.link.get().catch(() => undefined);
    const agent = await controls.forStatus(this.link.current?.state === 'ready');
    const config = this.settings.current;
    return buildStatus({
      agent,
      team: await this.teamTasks(),
      version: this.options.version,
      logFile: this.options.logFile,
      client: this.client,
      config,
      features: this.features,
      coordinator: this.link.current,
      tasks: tasks.running().map((task) => task.state),
      approvals: approvals.list(),
      conversations: conversations.list(),
      completions: completionsUnavailable(this.features, config),
      usage: this.services.usage,
    });
  };

  /** A team's running tasks, for the status: where the coordinator is a team's. */
  private async teamTasks(): Promise<StatusResult['team']> {
    const coordinator = this.link.current;
    if (coordinator?.state !== 'ready' || !this.features.coordinator.sharedTasks) return undefined;
    const timeoutMs = Math.min(this.settings.current.coordinator.callTimeoutMs, TEAM_STATUS_MS);
    const listed = await coordinator.listTasks({ runningOnly: true, signal: AbortSignal.timeout(timeoutMs), timeoutMs });
    if (listed.status === 'completed') return { tasks: listed.tasks.map((task) => ({ taskId: task.task_id, owner: task.owner, title: task.title, status: task.status, replica: task.replica })) };
    return { error: listed.status === 'failed' ? listed.failure.message : 'not listed in time' };
  }

  private readonly codeAction = (params: CodeActionParams) => {
    const { textDocument, range } = validate(codeActionParamsSchema, params);
    const { documents, tasks, approvals, taskEdits, conversations } = this.services;
    const document = documents.get(canonicalUri(textDocument.uri));
    if (!document) return [];
    const path = pathOfUri(document.uri);
    return codeActionsFor({
      document,
      range,
      literals: this.features.codeActionLiterals,
      tasks: tasks.running(),
      // The agent's open questions (where the editor has no prompts) hold a turn up, as approvals do.
      approvals: [...this.services.questions.commands(), ...approvals.commands()],
      undoable: path ? taskEdits.undoable(path) : [],
      conversation: conversations.ofDocument(document.uri),
      agent: this.services.controls.commands(),
      review: path ? this.services.review.commands(path, range) : [],
    });
  };

  private readonly executeCommand = (params: ExecuteCommandParams) => {
    const { asks, tasks, approvals, edits } = this.services;
    return runCommand(validate(executeCommandParamsSchema, params), {
      asks,
      tasks,
      approvals,
      status: this.status,
      edit: (args) => edits.edit(args),
      conversations: () => listConversations({ editor: this.editor, features: () => this.features, ...this.services }),
      showLog: () => showLog(this.editor, this.features, this.options.logFile),
      chooseModel: (model) => this.services.controls.chooseModel(model),
      chooseMode: (mode) => this.services.controls.chooseMode(mode),
      review: this.services.review,
      questions: this.services.questions,
      watch: this.services.watch,
    });
  };

  /** The agent's `/commands`, after `/` in an answer document; nothing elsewhere. */
  private readonly completion = (params: CompletionParams) => {
    const { textDocument, position } = validate(textDocumentPositionSchema, params);
    const document = this.services.documents.get(canonicalUri(textDocument.uri));
    if (!document || !this.services.conversations.ofDocument(document.uri)) return [];
    return this.services.controls.completions(document, position);
  };

  private readonly inlineCompletion = (params: InlineCompletionParams, token: CancellationToken) => {
    validate(textDocumentPositionSchema, params);
    return this.services.completions.complete(params, token);
  };

  private readonly hover = (params: HoverParams) => {
    const { textDocument, position } = validate(textDocumentPositionSchema, params);
    return this.features.answerHover ? this.services.answers.hover(canonicalUri(textDocument.uri), position, this.features.markdownHover) : null;
  };

  /**
   * Every request handler: refused after `shutdown` (InvalidRequest), as LSP says (start.ts
   * refuses them before `initialize`); one debug line with method, duration and outcome.
   */
  private request<P, R>(method: string, handler: (params: P, token: CancellationToken) => R | Promise<R>) {
    return async (params: P, token: CancellationToken): Promise<R> => {
      const started = performance.now();
      let outcome = 'ok';
      try {
        if (this.phase === 'shut down') throw new ResponseError(ErrorCodes.InvalidRequest, `${method} after shutdown: the server is shutting down`);
        // Changes held for their turn are in before anything reads a document.
        this.documentSync.flush();
        return await handler(params, token);
      } catch (error) {
        outcome = error instanceof ResponseError ? `error ${error.code}: ${error.message}` : `failed: ${(error as Error).message}`;
        throw error;
      } finally {
        this.options.logger.debug(`${method} ${(performance.now() - started).toFixed(1)} ms ${outcome}`);
      }
    };
  }

  // ---- the coordinator ----

  private linkToCoordinator(initialSettings: Promise<void>): CoordinatorLink {
    const { logger, env, version } = this.options;
    const { documents } = this.services;
    return new CoordinatorLink({
      initialSettings: () => initialSettings,
      logger: logger.child('coordinator'),
      env,
      serverVersion: version,
      config: () => this.settings.current,
      clientName: () => this.client.name,
      workspaceRoot: () => this.workspaceRoots[0],
      openDocuments: () => documents.all().map((document) => document.uri),
      onStateChange: (coordinator) => {
        this.renegotiate();
        this.notices.stateChanged(coordinator);
      },
      onPreflight: (problem) => this.notices.preflight(problem),
    });
  }

  /** Negotiates anew; a change after `initialize` (the coordinator's features known) is sent to the editor. */
  private renegotiate(): void {
    const before = JSON.stringify(this.features.coordinator);
    this.features = negotiate({ initialize: this.initializeInput, config: this.settings.current, coordinator: this.link?.current?.knownFeatures });
    if (JSON.stringify(this.features.coordinator) === before) return;
    const { known, unused, ...flags } = this.features.coordinator;
    if (known) {
      const used = Object.entries(flags).filter(([, on]) => on).map(([name]) => name);
      this.options.logger.info(`the coordinator's features are known: the bridge uses ${used.join(', ') || 'none'}${unused.length ? `; not (yet): ${unused.join(', ')}` : ''}`);
    }
    this.editor.notify(FeaturesNotification.type, this.features as unknown as Record<string, unknown>);
  }
}

/** Custom request params, validated: bad ones are InvalidParams saying what is wrong. */
function validate<T>(schema: z.core.$ZodType<T>, params: unknown): T {
  const parsed = z.safeParse(schema, params);
  if (!parsed.success) throw new ResponseError(ErrorCodes.InvalidParams, describeIssues(parsed.error));
  return parsed.data;
}
