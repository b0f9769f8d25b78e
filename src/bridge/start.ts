/**
 * The server's first moment: `initialize` is answered with only what its answer needs — the few
 * settings it depends on, and the capabilities they and the editor's payload give — and then the
 * server itself
 * is loaded (server.ts: its flows, stores and coordinator link), which takes every later message.
 * The messages after `initialize` wait for it, in order (transport.ts's HeldReader). So the editor
 * has its answer about as soon as from a bare vscode-languageserver server (`npm run bench`), and
 * nothing it sends meanwhile is lost or answered wrongly.
 */
import { ErrorCodes, LSPErrorCodes, ResponseError, type Connection, type InitializeParams, type InitializeResult } from 'vscode-languageserver';
import type { ConfigInput } from '../config.js';
import { negotiatedSettings, serverSources, type ConfigSource } from '../configSources.js';
import type { RootLogger } from '../logger.js';
import { capabilities, negotiate } from './capabilities.js';
import type { HeldReader } from './transport.js';

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
   * agents, within its deadline. Idempotent: `shutdown`, the end of input and signals share it.
   */
  stop(): Promise<void>;
}

/** What the server is given when it takes over from `initialize`. */
export interface Initialized {
  /** The settings' sources, initializationOptions in (configSources.ts's `serverSources`). */
  sources: ConfigSource[];
  params: InitializeParams;
}

export function startServer(connection: Connection, reader: HeldReader, options: ServerOptions): RunningServer {
  const sources = serverSources(options.env, options.cliConfig);
  let server: RunningServer | undefined;
  /** Why the server could not start (a broken install), said to every request. */
  let broken: string | undefined;
  let answeredInitialize = false;
  connection.onInitialize((params): InitializeResult => {
    if (answeredInitialize) throw new ResponseError(ErrorCodes.InvalidRequest, 'initialize was already answered: a connection is initialized once');
    const { clientCapabilities: _ignored, ...values } = (params.initializationOptions ?? {}) as Record<string, unknown>;
    sources.find((source) => source.name === 'initializationOptions')!.values = values;
    // The settings the answer depends on, read without the schema: the server validates them all.
    const features = negotiate({ initialize: params, config: negotiatedSettings(sources) });
    // Once this answer is written: the server, which registers its handlers, then the messages held for it.
    setImmediate(() => {
      import('./server.js')
        .then(({ BuckleyServer }) => {
          const loaded = new BuckleyServer(connection, options, { sources, params });
          loaded.register();
          server = loaded;
        })
        .catch((error: unknown) => {
          broken = `buckley-lsp could not start its server: ${(error as Error).message} (reinstalling it may help; the log has more)`;
          options.logger.error(`${broken}\n${(error as Error).stack ?? ''}`);
        })
        .finally(() => reader.release());
    });
    const result = { capabilities: capabilities(features), serverInfo: { name: 'buckley-lsp', version: options.version } };
    answeredInitialize = true;
    return result;
  });
  // Methods nobody handles: before `initialize` every request is refused as LSP says; after it, unknown.
  connection.onRequest((method) => {
    if (!answeredInitialize) throw new ResponseError(ErrorCodes.ServerNotInitialized, `${method} before initialize`);
    if (broken) throw new ResponseError(LSPErrorCodes.RequestFailed, broken);
    throw new ResponseError(ErrorCodes.MethodNotFound, `Unhandled method ${method}`);
  });
  connection.listen();
  return {
    shutdownReceived: () => server?.shutdownReceived() ?? false,
    stop: () => server?.stop() ?? Promise.resolve(),
  };
}
