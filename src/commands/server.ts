/**
 * `buckley-lsp [--stdio]`: the language server over stdio — the framing guard in front of the
 * reader, logs to the editor (and --log-file), and exit when the editor goes away.
 */
import { createConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node.js';
import type { ConfigInput } from '../config.js';
import type { LogSink, RootLogger } from '../logger.js';
import { startServer } from '../server.js';
import { FramingGuard } from '../transport.js';

export interface StdioServerOptions {
  version: string;
  cliConfig: ConfigInput;
  logger: RootLogger;
  /** Also write log lines here (--log-file). */
  toFile?: LogSink;
}

export function serveStdio({ version, cliConfig, logger, toFile }: StdioServerOptions): void {
  const writer = new StreamMessageWriter(process.stdout);
  // Bad input gets a JSON-RPC error and the server reads on (see transport.ts).
  const answerError = (code: number, message: string, id: number | string | null = null) =>
    void writer.write({ jsonrpc: '2.0', id, error: { code, message } } as never);
  const guard = new FramingGuard(({ code, message, id }) => answerError(code, message, id));
  process.stdin.pipe(guard);
  const reader = new StreamMessageReader(guard);
  // A large body the guard passed unchecked that is not JSON: vscode-jsonrpc skips it; say so.
  reader.onError((error) => answerError(-32700, `Parse error: ${error.message}`));
  const connection = createConnection(reader, writer);
  logger.setSink((level, line) => {
    toFile?.(level, line);
    if (level === 'error') connection.console.error(line);
    else if (level === 'warn') connection.console.warn(line);
    else if (level === 'info') connection.console.info(line);
    else connection.console.log(line);
  });
  const server = startServer(connection, { version, env: process.env, cliConfig, logger });
  // stdin ended: the editor is gone. Exit as LSP says for `exit`: 0 only after shutdown.
  guard.on('end', () => process.exit(server.shutdownReceived() ? 0 : 1));
}
