/**
 * The user's state directory ($XDG_STATE_HOME/buckley-lsp, else ~/.local/state/buckley-lsp) and
 * its files (answers, trust), read and written so that nothing can hang or corrupt them:
 *
 * - reads open the file without blocking (a named pipe in its place would block a read for
 *   ever) and refuse anything that is not a regular file, saying in plain words what it is;
 * - writes are atomic and user-only: a temporary file, then a rename over the old one, so a
 *   reader never sees half a file and concurrent writers never interleave.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { kindOf } from './fileAccess.js';

export { kindOf } from './fileAccess.js';

export function stateDirectory(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'buckley-lsp');
}

/** A state file's JSON, or undefined when it is not JSON (the caller's schema then says what is wrong). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A state file that cannot be used, with what is wrong and how to fix it. */
export class StateFileError extends Error {
  override readonly name = 'StateFileError';
}

/** A state file is small (a list of workspaces, of answers): one bigger than this is not read. */
export const MAX_STATE_FILE_BYTES = 8 * 1024 * 1024;

function tooBig(path: string, size: number): StateFileError {
  return new StateFileError(`${path} is ${Math.round(size / 1024 / 1024)} MB, over the ${MAX_STATE_FILE_BYTES / 1024 / 1024} MB a state file may be; remove it (it is re-created when needed)`);
}

/** Room for a state file of `size` bytes and one more (to see it grow); refused over the bound. */
function bufferFor(path: string, size: number): Buffer {
  if (size > MAX_STATE_FILE_BYTES) throw tooBig(path, size);
  return Buffer.allocUnsafe(size + 1);
}

/** The text read; a file that filled the room grew while it was read (state files are replaced whole, never grown). */
function textOf(path: string, bytes: Buffer, length: number): string {
  if (length === bytes.length) throw new StateFileError(`${path} grew while it was read; something other than buckley-lsp writes it`);
  return bytes.toString('utf8', 0, length);
}

function notAFile(path: string, stats: Stats): StateFileError {
  return new StateFileError(`${path} is ${kindOf(stats)}, not a file; remove it (it is re-created when needed)`);
}

function readProblem(path: string, error: unknown): StateFileError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return new StateFileError(`cannot read ${path}: permission denied; make it yours and readable (chmod u+rw ${path}) or remove it`);
  return new StateFileError(`cannot read ${path}: ${(error as Error).message}`);
}

/** The file's text, or undefined when there is none. Never blocks on a pipe; throws StateFileError. */
export async function readStateFile(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw readProblem(path, error);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notAFile(path, stats);
    const bytes = bufferFor(path, stats.size);
    let length = 0;
    for (let read = 1; read > 0 && length < bytes.length; length += read) read = (await handle.read(bytes, length, bytes.length - length, null)).bytesRead;
    return textOf(path, bytes, length);
  } catch (error) {
    throw error instanceof StateFileError ? error : readProblem(path, error);
  } finally {
    await handle.close();
  }
}

/** As readStateFile, synchronously (for the last save when the process exits). */
export function readStateFileSync(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw readProblem(path, error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw notAFile(path, stats);
    const bytes = bufferFor(path, stats.size);
    let length = 0;
    for (let read = 1; read > 0 && length < bytes.length; length += read) read = readSync(fd, bytes, length, bytes.length - length, null);
    return textOf(path, bytes, length);
  } catch (error) {
    throw error instanceof StateFileError ? error : readProblem(path, error);
  } finally {
    closeSync(fd);
  }
}

/** Refuses to replace something that is not a regular file (a directory, a pipe) — say what it is. */
async function checkReplaceable(path: string): Promise<void> {
  const stats = await lstat(path).catch(() => undefined);
  if (stats && !stats.isFile() && !stats.isSymbolicLink()) throw notAFile(path, stats);
}

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await checkReplaceable(path);
  const temporary = `${path}.${process.pid}.${temporarySuffix()}.tmp`;
  try {
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

export function writeFileAtomicSync(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const stats = (() => {
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  })();
  if (stats && !stats.isFile() && !stats.isSymbolicLink()) throw notAFile(path, stats);
  const temporary = `${path}.${process.pid}.${temporarySuffix()}.tmp`;
  try {
    writeFileSync(temporary, content, { mode: 0o600 });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * A temporary file's random part. Web Crypto's global, not node:crypto's import: that would load
 * the crypto module at startup (about 5 ms) for a write that comes much later.
 */
function temporarySuffix(): string {
  return globalThis.crypto.randomUUID().slice(0, 8);
}
