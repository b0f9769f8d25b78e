/**
 * The `buckley-lsp` command: parses arguments and hands off.
 *
 *   buckley-lsp [--stdio] [--coordinator HOST:PORT] [--agent "CMD ARGS"] [--log-level L]
 *   buckley-lsp coordinator [--listen HOST:PORT] [--log-level L] [--agent CMD [ARGS…]]
 *   buckley-lsp doctor [--coordinator HOST:PORT] [--agent "CMD ARGS"]
 */
import { fileSink, isLogLevel, RootLogger, stderrSink } from './logger.js';
import type { ConfigInput } from './config.js';

declare const __BUCKLEY_VERSION__: string | undefined;
const VERSION = typeof __BUCKLEY_VERSION__ === 'string' ? __BUCKLEY_VERSION__ : '0.0.0-dev';

const USAGE = `buckley-lsp ${VERSION}: an LSP server that asks an AI agent about your code

Usage:
  buckley-lsp [--stdio] [options]      the language server, over stdio
  buckley-lsp coordinator [--listen HOST:PORT] [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]]
                          [--log-level L] [--agent CMD [ARGS...]]
                                       our gRPC coordinator as a standalone process
                                       (default listen address 127.0.0.1:50051; a non-loopback
                                       address needs TLS with client certificates)
  buckley-lsp doctor [options]         check the configuration, coordinator and agent

Options:
  --coordinator HOST:PORT   use a running coordinator (else: embedded)   [BUCKLEY_COORDINATOR]
  --agent "CMD ARGS"        the ACP agent the embedded coordinator runs   [BUCKLEY_AGENT]
  --log-level LEVEL         error, warn, info or debug                    [BUCKLEY_LOG]
  --log-file PATH           also append the log to PATH                   [BUCKLEY_LOG_FILE]
  --version, --help`;

export interface ParsedArgs {
  mode: 'server' | 'coordinator' | 'doctor' | 'help' | 'version';
  config: ConfigInput;
  listen?: string;
  /** Also append the log to this file (user-only permissions). */
  logFile?: string;
  tls?: { cert?: string; key?: string; clientCa?: string };
  error?: string;
}

export function parseArgs(argv: string[]): ParsedArgs {
  const args = [...argv];
  let mode: ParsedArgs['mode'] = 'server';
  if (args[0] === 'coordinator' || args[0] === 'doctor') mode = args.shift() as ParsedArgs['mode'];
  const config: { coordinator?: object; agent?: object; log?: object } = {};
  const result: ParsedArgs = { mode, config: config as ConfigInput };
  while (args.length > 0) {
    const arg = args.shift()!;
    const value = (): string | undefined => {
      const next = args.shift();
      if (next === undefined) result.error = `${arg} needs a value`;
      return next;
    };
    switch (arg) {
      case '--stdio':
        break;
      case '--help':
      case '-h':
        return { ...result, mode: 'help' };
      case '--version':
      case '-v':
        return { ...result, mode: 'version' };
      case '--coordinator':
        config.coordinator = { address: value() };
        break;
      case '--listen':
        result.listen = value();
        break;
      case '--tls-cert':
        result.tls = { ...result.tls, cert: value() };
        break;
      case '--tls-key':
        result.tls = { ...result.tls, key: value() };
        break;
      case '--tls-client-ca':
        result.tls = { ...result.tls, clientCa: value() };
        break;
      case '--log-file':
        result.logFile = value();
        break;
      case '--log-level': {
        const level = value();
        if (!isLogLevel(level)) result.error = `--log-level must be error, warn, info or debug, not ${level}`;
        config.log = { level };
        break;
      }
      case '--agent':
        // The coordinator takes the rest of the line as the agent command; the server one string.
        config.agent = { driver: 'acp', command: mode === 'coordinator' ? args.splice(0) : value() };
        break;
      default:
        result.error = `unknown argument ${arg}`;
    }
    if (result.error) break;
  }
  if (result.tls && (!result.tls.cert || !result.tls.key)) result.error ??= '--tls-cert and --tls-key go together';
  return result;
}

async function main(): Promise<void> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed.error) {
    process.stderr.write(`buckley-lsp: ${parsed.error}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const envLevel = process.env.BUCKLEY_LOG;
  const logger = new RootLogger(isLogLevel(envLevel) ? envLevel : 'info');
  const logFile = parsed.logFile ?? process.env.BUCKLEY_LOG_FILE;
  const toFile = logFile ? fileSink(logFile) : undefined;
  switch (parsed.mode) {
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return;
    case 'server': {
      const { serveStdio } = await import('./commands/server.js');
      serveStdio({ version: VERSION, cliConfig: parsed.config, logger, toFile });
      return;
    }
    case 'coordinator': {
      if (toFile) logger.setSink((level, line) => (toFile(level, line), stderrSink(level, line)));
      const { runCoordinator } = await import('./commands/coordinator.js');
      const tls = parsed.tls?.cert && parsed.tls.key ? { cert: parsed.tls.cert, key: parsed.tls.key, clientCa: parsed.tls.clientCa } : undefined;
      await runCoordinator({ listen: parsed.listen ?? '127.0.0.1:50051', tls, cliConfig: parsed.config, env: process.env, logger, version: VERSION });
      return;
    }
    case 'doctor': {
      const { runDoctor } = await import('./commands/doctor.js');
      process.exitCode = await runDoctor({ cliConfig: parsed.config, env: process.env, version: VERSION, out: (line) => process.stdout.write(`${line}\n`) });
      return;
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`buckley-lsp: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
