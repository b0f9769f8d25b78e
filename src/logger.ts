/**
 * One leveled logger. Lines go to a sink: stderr until the LSP connection exists, then
 * `window/logMessage`. stdout is never written: it carries JSON-RPC only.
 */
import type { LogLevel } from './config.js';

const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };
/** The longest line the log takes. */
export const MAX_LINE_CHARS = 256 * 1024;

export type LogSink = (level: LogLevel, line: string) => void;

export const stderrSink: LogSink = (level, line) => {
  process.stderr.write(`[${level}] ${line}\n`);
};

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  enabled(level: LogLevel): boolean;
  /** A logger whose lines start with `[prefix]`, sharing this one's level and sink. */
  child(prefix: string): Logger;
}

export class RootLogger implements Logger {
  constructor(
    private level: LogLevel,
    private sink: LogSink = stderrSink,
  ) {}

  setLevel(level: LogLevel): void {
    this.level = level;
  }

  setSink(sink: LogSink): void {
    this.sink = sink;
  }

  enabled(level: LogLevel): boolean {
    return order[level] <= order[this.level];
  }

  write(level: LogLevel, message: string): void {
    if (!this.enabled(level)) return;
    // Bounded whatever an agent sends: a line is cut, saying how much was left out.
    this.sink(level, message.length <= MAX_LINE_CHARS ? message : `${message.slice(0, MAX_LINE_CHARS).toWellFormed()}… (${message.length - MAX_LINE_CHARS} more characters)`);
  }

  error(message: string): void {
    this.write('error', message);
  }
  warn(message: string): void {
    this.write('warn', message);
  }
  info(message: string): void {
    this.write('info', message);
  }
  debug(message: string): void {
    this.write('debug', message);
  }

  child(prefix: string): Logger {
    return new PrefixedLogger(this, `[${prefix}] `);
  }
}

class PrefixedLogger implements Logger {
  constructor(
    private readonly root: RootLogger,
    private readonly prefix: string,
  ) {}
  enabled(level: LogLevel): boolean {
    return this.root.enabled(level);
  }
  error(message: string): void {
    this.root.write('error', this.prefix + message);
  }
  warn(message: string): void {
    this.root.write('warn', this.prefix + message);
  }
  info(message: string): void {
    this.root.write('info', this.prefix + message);
  }
  debug(message: string): void {
    this.root.write('debug', this.prefix + message);
  }
  child(prefix: string): Logger {
    return new PrefixedLogger(this.root, `${this.prefix}[${prefix}] `);
  }
}

export function isLogLevel(value: string | undefined): value is LogLevel {
  return value !== undefined && value in order;
}

/**
 * What goes wrong unforeseen in a process that serves others — the language server, the ACP
 * agent, a coordinator, the embedded one's thread — is said in its log, and it serves on: one
 * fault (a write to a closed pipe, a rejection nobody awaited) must not end everyone's session.
 */
export function serveOnFaults(logger: Logger, where = ''): void {
  const at = where ? ` in ${where}` : '';
  process.on('uncaughtException', (error) => logger.error(`unexpected error${at}: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (reason) => logger.error(`unexpected rejection${at}: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
}
