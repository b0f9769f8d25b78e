/**
 * Wires the features to the LSP connection, one line per method where possible. Behaviour
 * lives in the feature modules (features/*) and the coordinator modules; the coordinator
 * client is loaded only after `initialize` has been answered, so startup stays fast.
 */
import {
  CodeActionKind,
  DidChangeConfigurationNotification,
  ErrorCodes,
  ResponseError,
  TextDocuments,
  TextDocumentSyncKind,
  WorkDoneProgressCancelNotification,
  type Connection,
  type InitializeParams,
  type InitializeResult,
} from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { clientIdentity, negotiate, type ClientIdentity, type Features, type InitializeInput } from './capabilities.js';
import { configFromEnv, defaultConfig, describeProblems, resolveConfig, type Config, type ConfigInput, type ConfigSource } from './config.js';
import type { CoordinatorConnection } from './coordinator/connection.js';
import { Answers } from './features/answers.js';
import { AskService } from './features/ask.js';
import { codeActionsFor } from './features/codeActions.js';
import { ALL_COMMANDS, executeCommand } from './features/commands.js';
import * as messages from './features/messages.js';
import { ProgressFactory } from './features/progress.js';
import { buildStatus } from './features/status.js';
import { Targets } from './features/target.js';
import { TaskService } from './features/tasks.js';
import { ApprovalService } from './features/approvals.js';
import { TrustStore } from './features/trust.js';
import type { RootLogger } from './logger.js';
import {
  AskRequest,
  askParamsSchema,
  CancelTaskRequest,
  cancelTaskParamsSchema,
  describeIssues,
  ExecuteTaskRequest,
  executeTaskParamsSchema,
  PROTOCOL_VERSION,
  StatusRequest,
} from './protocol.js';
import { stateDirectory } from './state.js';
import { join } from 'node:path';
import type { z } from 'zod';

export interface ServerOptions {
  version: string;
  env: NodeJS.ProcessEnv;
  /** Settings from CLI flags. */
  cliConfig: ConfigInput;
  logger: RootLogger;
}

export function startServer(connection: Connection, options: ServerOptions): void {
  const { logger, env } = options;
  const stateDir = stateDirectory(env);
  const answers = new Answers(connection, stateDir, logger.child('answers'), join(stateDir, 'answers'));
  const documents = new TextDocuments({
    create: TextDocument.create,
    update(document, changes, version) {
      answers.documentChanged(document.uri, changes);
      return TextDocument.update(document, changes, version);
    },
  });
  const progress = new ProgressFactory(connection, logger.child('progress'));

  let initialize: InitializeInput = { capabilities: {} };
  let client: ClientIdentity = { name: 'unknown' };
  let workspaceRoots: string[] = [];
  let config: Config = defaultConfig;
  let features: Features = negotiate({ initialize, config });
  let coordinator: CoordinatorConnection | undefined;
  let coordinatorReady: Promise<CoordinatorConnection> | undefined;
  const sources: { env: ConfigSource; cli: ConfigSource; init: ConfigSource; workspace: ConfigSource } = {
    env: { name: 'environment', values: configFromEnv(env) },
    cli: { name: 'command line', values: options.cliConfig },
    init: { name: 'initializationOptions', values: undefined },
    workspace: { name: 'workspace/configuration', values: undefined },
  };

  let haveGoodConfig = false;
  /**
   * Re-reads every source. A bad value is reported naming its key; the last good configuration
   * stays, or at startup the configuration of the sources that are valid.
   */
  const applyConfig = (): void => {
    const all = [sources.env, sources.cli, sources.init, sources.workspace];
    let result = resolveConfig(all);
    if (!result.ok) {
      const problems = result.problems;
      logger.error(`invalid settings, ${haveGoodConfig ? 'keeping the last good ones' : 'ignoring them'}: ${describeProblems(problems)}`);
      const keys = [...new Set(problems.map((problem) => problem.key))].join(', ');
      messages.error(connection, `Buckley: invalid ${keys} (see log)`);
      if (haveGoodConfig) return;
      const bad = new Set(problems.map((problem) => problem.source));
      result = resolveConfig(all.filter((source) => !bad.has(source.name)));
      if (!result.ok) return;
    }
    haveGoodConfig = true;
    config = result.config;
    reconnectIfNeeded();
    logger.setLevel(config.log.level);
    if (config.answers.directory) answers.setDirectory(config.answers.directory);
    features = negotiate({ initialize, config, coordinator: coordinator?.features });
  };

  /** The settings the coordinator connection was made with: a change means a new connection. */
  const connectionSettings = () => JSON.stringify([config.coordinator, config.agent]);
  let connectedWith: string | undefined;
  const reconnectIfNeeded = () => {
    if (!coordinatorReady || connectedWith === connectionSettings()) return;
    logger.info('coordinator or agent settings changed: connecting anew (asks in flight finish on the old connection)');
    const old = coordinatorReady;
    coordinator = undefined;
    coordinatorReady = undefined;
    void old.then((connection) => connection.closeWhenIdle());
    void coordinatorConnection();
  };

  const coordinatorConnection = (): Promise<CoordinatorConnection> => {
    coordinatorReady ??= import('./coordinator/connection.js').then(({ CoordinatorConnection }) => {
      connectedWith = connectionSettings();
      const created = new CoordinatorConnection({
        config,
        logger: logger.child('coordinator'),
        env,
        clientName: client.name,
        serverVersion: options.version,
        workspaceRoot: workspaceRoots[0],
      });
      coordinator = created;
      for (const document of documents.all()) created.documentOpened(document.uri);
      created.onStateChange(() => {
        if (coordinator !== created) return;
        features = negotiate({ initialize, config, coordinator: created.features });
        if (created.error) messages.warn(connection, `Buckley: ${created.errorSummary ?? created.error} (see log)`);
      });
      return created;
    });
    return coordinatorReady;
  };

  const targets = new Targets(documents, () => workspaceRoots, logger.child('context'));
  const asks = new AskService({
    connection,
    targets,
    answers,
    progress,
    logger: logger.child('ask'),
    config: () => config,
    features: () => features,
    coordinator: coordinatorConnection,
  });
  const trust = new TrustStore(join(stateDir, 'trust.json'), logger.child('trust'));
  const approvals = new ApprovalService({ connection, documents, trust, logger: logger.child('approvals'), config: () => config, features: () => features });
  const tasks = new TaskService({
    connection,
    approvals,
    targets,
    answers,
    progress,
    logger: logger.child('task'),
    config: () => config,
    features: () => features,
    coordinator: coordinatorConnection,
  });
  const status = () =>
    buildStatus({
      version: options.version,
      client,
      config,
      features,
      coordinator,
      tasks: tasks.running().map((task) => task.state),
      approvals: approvals.list(),
    });

  connection.onInitialize((params: InitializeParams): InitializeResult => {
    initialize = params;
    client = clientIdentity(params);
    workspaceRoots = workspaceRootsOf(params);
    const { clientCapabilities: _ignored, ...settings } = (params.initializationOptions ?? {}) as Record<string, unknown>;
    sources.init.values = settings;
    applyConfig();
    logger.info(`buckley-lsp ${options.version} serving ${client.name} ${client.version ?? ''}`.trim());
    return {
      capabilities: {
        positionEncoding: 'utf-16',
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        hoverProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.Empty], resolveProvider: false },
        executeCommandProvider: { commands: ALL_COMMANDS },
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
      connection.client.register(DidChangeConfigurationNotification.type, { section: 'buckley' }).catch(() => undefined);
    }
    answers.load().catch(() => undefined);
    trust.load().then(() => trust.problem && messages.error(connection, 'Buckley: the trust file is corrupt (see log)'));
    void coordinatorConnection();
  });

  const pullWorkspaceConfig = async () => {
    try {
      const [section] = await connection.workspace.getConfiguration([{ section: 'buckley' }]);
      sources.workspace.values = section ?? undefined;
      applyConfig();
    } catch (error) {
      logger.debug(`workspace/configuration failed: ${(error as Error).message}`);
    }
  };

  connection.onDidChangeConfiguration(async (change) => {
    if (features.configuration) return pullWorkspaceConfig();
    sources.workspace.values = (change.settings as { buckley?: unknown } | null)?.buckley;
    applyConfig();
  });

  connection.onShutdown(async () => {
    asks.cancelAll();
    tasks.cancelAll();
    await answers.save().catch((error: Error) => logger.warn(`could not save state: ${error.message}`));
    await coordinator?.close();
  });

  documents.onDidOpen(({ document }) => coordinator?.documentOpened(document.uri));
  documents.onDidClose(({ document }) => coordinator?.documentClosed(document.uri));

  connection.onRequest(AskRequest.type, (params, token) => {
    const { question, context, workDoneToken, partialResultToken } = validate(askParamsSchema, params);
    return asks.ask(
      { question, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles },
      { token, workDoneToken, partialResultToken },
    );
  });
  connection.onRequest(ExecuteTaskRequest.type, (params) => {
    const { task, planId, context } = validate(executeTaskParamsSchema, params);
    return tasks.start({ task, planId, uri: context?.activeFile, range: context?.selection, openFiles: context?.openFiles });
  });
  connection.onRequest(CancelTaskRequest.type, (params) => ({ cancelled: tasks.cancel(validate(cancelTaskParamsSchema, params).taskId) }));
  connection.onRequest(StatusRequest.type, status);
  connection.onCodeAction(({ textDocument, range }) => {
    const document = documents.get(textDocument.uri);
    return document ? codeActionsFor(document, range, features.codeActionLiterals, tasks.running(), approvals.commands()) : [];
  });
  connection.onExecuteCommand((params) => executeCommand(params, { asks, tasks, approvals, status }));
  connection.onHover(({ textDocument, position }) =>
    features.answerHover ? answers.hover(textDocument.uri, position, features.markdownHover) : null,
  );
  documents.listen(connection);
  connection.listen();
}

function workspaceRootsOf(params: InitializeParams): string[] {
  if (params.workspaceFolders?.length) return params.workspaceFolders.map((folder) => folder.uri);
  return params.rootUri ? [params.rootUri] : [];
}

/** Custom request params, validated: bad ones are InvalidParams saying what is wrong. */
function validate<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw new ResponseError(ErrorCodes.InvalidParams, describeIssues(parsed.error));
  return parsed.data;
}
