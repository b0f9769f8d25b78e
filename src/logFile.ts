/**
 * The server's own log file, `$XDG_STATE_HOME/buckley-lsp/buckley-lsp.log` unless --log-file or
 * BUCKLEY_LOG_FILE names another (`off`: none). Editors keep the server's log in different
 * places, some only when started verbose (Helix: `hx -v`) or only from warnings up (Neovim's
 * lsp.log): this file has it all, at the configured level, whichever editor started the server.
 *
 * Several servers (one per editor) append to the same file, each line with the time and the
 * process id. It is opened without blocking and refused when it is not a regular file (a pipe
 * in its place would hang a write for ever); the default path must not be a symbolic link (it
 * could point appends at another file). Past ROTATE_BYTES it is moved to `.1`, once.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LogSink } from './logger.js';
import { kindOf, stateDirectory } from './state.js';

export const ROTATE_BYTES = 2 * 1024 * 1024;

export function defaultLogFile(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'buckley-lsp.log');
}

/**
 * The log file asked for (`off` or empty: none), else the default one when there is one (the
 * server has it, the standalone coordinator logs to stderr); a file that cannot be written is a
 * problem to report, not a reason not to start.
 */
export function chooseLogFile(asked: string | undefined, env: NodeJS.ProcessEnv, byDefault: boolean): { logFile?: LogFile; problem?: string } {
  if (asked === 'off' || asked === '' || (asked === undefined && !byDefault)) return {};
  try {
    return { logFile: openLogFile(asked ?? defaultLogFile(env), { refuseLinks: asked === undefined }) };
  } catch (error) {
    return { problem: (error as Error).message };
  }
}

export interface LogFile {
  path: string;
  sink: LogSink;
}

/** Opens the log file for appending; throws an Error saying what is wrong and what to do. */
export function openLogFile(path: string, { refuseLinks }: { refuseLinks: boolean }): LogFile {
  const flags = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK | (refuseLinks ? constants.O_NOFOLLOW : 0);
  const open = (): { fd: number; size: number } => {
    let fd: number;
    try {
      if (refuseLinks) mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      fd = openSync(path, flags, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new Error(`cannot write the log file ${path}: it is a symbolic link; remove it (set --log-file or BUCKLEY_LOG_FILE for another place)`);
      if (code === 'ENXIO') throw new Error(`cannot write the log file ${path}: it is a named pipe (FIFO); remove it`);
      if (code === 'EISDIR') throw new Error(`cannot write the log file ${path}: it is a directory; remove it`);
      throw new Error(`cannot write the log file ${path}: ${(error as Error).message} (set --log-file or BUCKLEY_LOG_FILE for another place, or off)`);
    }
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      closeSync(fd);
      throw new Error(`cannot write the log file ${path}: it is ${kindOf(stats)}, not a file; remove it`);
    }
    return { fd, size: stats.size };
  };
  let { fd, size } = open();
  const rotate = () => {
    closeSync(fd);
    try {
      renameSync(path, `${path}.1`);
    } catch {
      // Another server rotated it first.
    }
    ({ fd, size } = open());
  };
  if (size > ROTATE_BYTES) rotate();
  let broken = false;
  const sink: LogSink = (level, line) => {
    if (broken) return;
    const bytes = Buffer.from(`${new Date().toISOString()} ${process.pid} [${level}] ${line}\n`, 'utf8');
    try {
      // Synchronous: a line is in the file before the process can exit (a crash is when it matters).
      writeSync(fd, bytes);
      size += bytes.length;
      if (size > ROTATE_BYTES) rotate();
    } catch (error) {
      broken = true;
      process.stderr.write(`buckley-lsp: stopped writing the log file ${path}: ${(error as Error).message}\n`);
    }
  };
  return { path, sink };
}
