/**
 * `buckley-lsp [--stdio]`: the language server over stdio — the framing guard in front of the
 * reader, a writer that never breaks the connection, logs to the editor (and --log-file), and an
 * orderly end however the editor goes away.
 *
 * The end: when the input ends (after everything read before it was handled, so a `shutdown`
 * sent just before closing the pipe is answered), on SIGTERM, SIGHUP or SIGINT, or when the
 * editor that started us is gone, the server stops its work and its agents (see
 * RunningServer.stop), writes what it still has to write, and exits: 0 after `shutdown`, else 1,
 * as LSP says for `exit`.
 */
import { PassThrough } from 'node:stream';
import { createConnection, Message, StreamMessageReader } from 'vscode-languageserver/node.js';
import type { ConfigInput } from '../config.js';
import type { LogFile } from '../logFile.js';
import { startTracing, stopTracing } from '../tracing.js';
import { serveOnFaults, type RootLogger } from '../logger.js';
import { startServer } from '../bridge/start.js';
import { inert } from '../text.js';
import { EditorWriter, FramingGuard, HeldReader } from '../bridge/transport.js';

export interface StdioServerOptions {
  version: string;
  cliConfig: ConfigInput;
  logger: RootLogger;
  /** Also write log lines here (see logFile.ts). */
  logFile?: LogFile;
  /** Why the log file could not be opened, to say in the editor. */
  logFileProblem?: string;
}

/** The internal message the guard passes on when the input ends. */
const END_OF_INPUT = '$/buckley-lsp/endOfInput';
/** How long what is left to write may take once the server has stopped. */
const DRAIN_DEADLINE_MS = 500;
/** How often to check that the process that started us is still there. */
const PARENT_CHECK_MS = 500;

/** Said on stderr to a person who started the server by hand: it is waiting for an editor. */
export const WAITING_FOR_AN_EDITOR = `buckley-lsp is a language server: it waits for an editor to speak LSP on its stdin.
Start it from your editor (docs/editors.md shows how), or run
  buckley-lsp doctor    to check your settings, coordinator and agent
  buckley-lsp --help    for the settings and options
Ctrl-C ends it.
`;

export function serveStdio({ version, cliConfig, logger, logFile, logFileProblem }: StdioServerOptions): void {
  // The reader holds what comes after `initialize` until the server is loaded — or `initialize` failed.
  let reader: HeldReader | undefined;
  const writer = new EditorWriter(process.stdout, (message) => reader?.answered(message));
  // Bad input gets a JSON-RPC error and the server reads on (see bridge/transport.ts).
  const answerError = (code: number, message: string, id: number | string | null = null) =>
    void writer.write({ jsonrpc: '2.0', id, error: { code, message } } as never);
  // Only this process knows the nonce: an editor cannot end the session with this message. Made
  // when the input ends (Web Crypto's global: node:crypto's import would cost startup ~5 ms).
  let nonce: string | undefined;
  const guard = new FramingGuard(({ code, message, id }) => answerError(code, message, id), {
    endOfInput: () => ({ jsonrpc: '2.0', method: END_OF_INPUT, params: { nonce: (nonce = globalThis.crypto.randomUUID()) } }),
  });
  // The reader's stream never ends: the connection stays open to answer what came before the end.
  const input = new PassThrough();
  process.stdin.pipe(guard).pipe(input, { end: false });
  process.stdin.on('error', () => guard.end());
  reader = new HeldReader(new StreamMessageReader(input), (message, refusal) => {
    logger.warn(`refused the editor's ${refusal.message}`);
    if (Message.isRequest(message)) answerError(refusal.code, refusal.message, message.id);
  });
  // A large body the guard passed unchecked that is not JSON: vscode-jsonrpc skips it; say so.
  reader.onError((error) => answerError(-32700, `Parse error: ${error.message}`));
  const connection = createConnection(reader, writer);
  logger.setSink((level, line) => {
    // The log carries what agents say: shown as written, never interpreted by a terminal.
    const shown = inert(line);
    logFile?.sink(level, shown);
    if (level === 'error') connection.console.error(shown);
    else if (level === 'warn') connection.console.warn(shown);
    else if (level === 'info') connection.console.info(shown);
    else connection.console.log(shown);
  });
  const server = startServer(connection, reader, { version, env: process.env, cliConfig, logger, logFile: logFile?.path, logFileProblem });
  // Only where OTEL_EXPORTER_OTLP_ENDPOINT asks for traces; not awaited: `initialize` does not wait for it.
  void startTracing('buckley-lsp', version, process.env, (message) => logger.warn(message));

  let ending = false;
  const end = async (why: string) => {
    if (ending) return;
    ending = true;
    logger.debug(`ending: ${why}`);
    await server.stop();
    await stopTracing();
    // The answer to a `shutdown` that shared this stop is written in the microtasks after it.
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.race([writer.drained(), new Promise((resolve) => setTimeout(resolve, DRAIN_DEADLINE_MS).unref())]);
    process.exit(server.shutdownReceived() ? 0 : 1);
  };
  connection.onNotification(END_OF_INPUT, (params: { nonce?: unknown } | undefined) => {
    if (nonce !== undefined && params?.nonce === nonce) void end('the editor closed the input');
  });
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => void end(signal));
  // An editor killed outright may leave our stdin open (a wrapper holds it): we are re-parented then.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void end('the editor process is gone'), PARENT_CHECK_MS).unref();
  // A write or handler failure must not turn into a crash: the server lives on and says so.
  serveOnFaults(logger);
  // Last: the person who reads it may press Ctrl-C at once, and it must end the server in order.
  if (process.stdin.isTTY) process.stderr.write(WAITING_FOR_AN_EDITOR);
}
