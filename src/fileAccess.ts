/**
 * Files read and written on an agent's behalf (and undone), safe against a hostile workspace:
 *
 * - a path is resolved through every symbolic link — a dangling one too: its target is where a
 *   write would land — in one pass over its components; a path longer than the system allows is
 *   refused before anything looks at it, and a loop of links is refused;
 * - what is opened is what was judged: the real path (no links left), opened without following a
 *   final link and without blocking, then checked to be that very file (Linux names every open
 *   file in /proc/self/fd) and a regular file — a pipe, socket, device or directory is refused at
 *   once — before a byte moves; a new file is created in the directory judged, opened first, so
 *   no link re-pointed meanwhile can send it elsewhere;
 * - every read is bounded in bytes, whatever the file claims its size to be.
 */
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, type Stats } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Linux's PATH_MAX (with its NUL) and NAME_MAX, in bytes. */
export const PATH_MAX_BYTES = 4096;
export const NAME_MAX_BYTES = 255;
/** How many links one path may pass through (Linux's own limit). */
const MAX_LINKS = 40;
/** A read of lines looks this far into a file at most. */
export const MAX_SCAN_BYTES = 256 * 1024 * 1024;
/** Far more than a certificate, a key or a credentials file holds: a file past it is not one. */
export const PEM_MAX_BYTES = 1024 * 1024;

const { O_RDONLY, O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;

/** A read or write refused or failed, in words the agent (and the user reading its answer) can act on. */
export class FileAccessError extends Error {
  override readonly name = 'FileAccessError';
  constructor(
    message: string,
    readonly notFound = false,
  ) {
    super(message);
  }
}

/** A path as a message may show it: its start and end when it is long. */
export function shortened(path: string, max = 160): string {
  return path.length <= max ? path : `${path.slice(0, max / 2)}…${path.slice(-max / 2 + 1)} (${path.length} characters)`;
}

/** Why a path is longer than the system allows (the whole, or one name in it); undefined when it is not. */
export function pathTooLong(path: string): string | undefined {
  // Characters bound bytes from below and by 3× from above: the exact count only near the limit.
  if (path.length >= PATH_MAX_BYTES || Buffer.byteLength(path, 'utf8') >= PATH_MAX_BYTES) {
    return `the path is ${Buffer.byteLength(path, 'utf8')} bytes long, over the system's limit of ${PATH_MAX_BYTES - 1}`;
  }
  for (const name of path.split('/')) {
    if (Buffer.byteLength(name, 'utf8') > NAME_MAX_BYTES) return `a name in the path is ${Buffer.byteLength(name, 'utf8')} bytes long, over the system's limit of ${NAME_MAX_BYTES}`;
  }
  return undefined;
}

/** "a directory", "a named pipe (FIFO)", …: what stands where a regular file should. */
export function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a named pipe (FIFO)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/**
 * Where an absolute path really leads: every link followed, a dangling one to its target, `..`
 * taken after the link before it (as the system does); the part past the first name that does not
 * exist is taken as written. Undefined for a path too long or a loop of links.
 */
export function realPath(path: string): string | undefined {
  if (!path.startsWith('/') || pathTooLong(path)) return undefined;
  const pending = path.split('/').reverse();
  let current = '';
  let links = 0;
  let exists = true;
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = current.slice(0, current.lastIndexOf('/'));
      continue;
    }
    const next = `${current}/${name}`;
    const stats = exists ? lstatIfThere(next) : undefined;
    if (!stats?.isSymbolicLink()) {
      // Not there (or not to be looked into): what follows is taken as written.
      if (!stats) exists = false;
      current = next;
      continue;
    }
    if (++links > MAX_LINKS) return undefined;
    const target = readlinkSync(next);
    if (target.startsWith('/')) current = '';
    pending.push(...target.split('/').reverse());
    if (pending.length > PATH_MAX_BYTES) return undefined;
  }
  return current || '/';
}

/** The path's own facts (a link not followed); undefined when it is not there or cannot be looked at. */
function lstatIfThere(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The path of the file an open descriptor is (Linux), or undefined where the system does not say. */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

const procFds = existsSync('/proc/self/fd');

/** Throws unless `fd` is the file at `path` (no link, nothing re-pointed since it was judged). */
function checkOpened(fd: number, path: string, done: string): void {
  const opened = procFds ? openedPath(fd) : realpathSync.native(path);
  if (opened !== path) throw new FileAccessError(`${shortened(path)} changed while it was being decided (a link in its path now leads to ${shortened(opened ?? 'another file')}); nothing was ${done}`);
  if (!procFds) {
    const now = fstatSync(fd);
    const there = lstatSync(path);
    if (now.ino !== there.ino || now.dev !== there.dev) throw new FileAccessError(`${shortened(path)} changed while it was being decided; nothing was ${done}`);
  }
}

function refusal(path: string, error: unknown, verb: string): FileAccessError {
  if (error instanceof FileAccessError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const shown = shortened(path);
  if (code === 'ENOENT') return new FileAccessError(`${shown} does not exist`, true);
  if (code === 'ELOOP' || code === 'ENOTDIR') {
    const link = firstLink(path);
    if (link) return new FileAccessError(`${shortened(link)} is a symbolic link (it was not when ${shown} was decided); nothing was ${verb}`);
  }
  if (code === 'ENXIO') return new FileAccessError(`${shown} is a named pipe or socket with no one at the other end, not a file`);
  if (code === 'EISDIR') return new FileAccessError(`${shown} is a directory`);
  if (code === 'ENOTDIR') return new FileAccessError(`${shown}: a part of its path is not a directory`);
  if (code === 'EACCES' || code === 'EPERM') return new FileAccessError(`${shown}: permission denied`);
  if (code === 'ENAMETOOLONG') return new FileAccessError(`${shown}: the path is longer than the system allows`);
  return new FileAccessError(`cannot ${verb === 'read' ? 'read' : 'write'} ${shown}: ${(error as Error).message}`);
}

/** The first part of a real path that is a link now (one was put there since it was resolved). */
function firstLink(path: string): string | undefined {
  for (let end = path.indexOf('/', 1); ; end = path.indexOf('/', end + 1)) {
    const part = end < 0 ? path : path.slice(0, end);
    if (lstatIfThere(part)?.isSymbolicLink()) return part;
    if (end < 0) return undefined;
  }
}

/** Refuses what is not a regular file before opening it (opening a device can do things). */
function checkRegular(path: string, stats: Stats | undefined): void {
  if (stats && !stats.isFile()) throw new FileAccessError(`${shortened(path)} is ${kindOf(stats)}, not a file`);
}

/** The open file at the real path `path`, checked; throws FileAccessError (notFound when there is none). */
async function openRegular(path: string, flags: number, verb: string): Promise<FileHandle> {
  let handle: FileHandle | undefined;
  try {
    checkRegular(path, lstatIfThere(path));
    handle = await open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    checkRegular(path, await handle.stat());
    checkOpened(handle.fd, path, verb);
    return handle;
  } catch (error) {
    await handle?.close();
    throw refusal(path, error, verb);
  }
}

export interface ReadOptions {
  /** 1-based first line, and how many lines (ACP's `line` and `limit`); absent: the whole file. */
  line?: number;
  limit?: number;
  /** The most bytes returned (a whole file bigger than this is refused, with how to read it in parts). */
  maxBytes: number;
}

/**
 * The text of the regular file at the real path `path`, or of its lines `line` to `line + limit - 1`
 * (with their ends). At most `maxBytes` come back, and a read of lines looks at most MAX_SCAN_BYTES
 * into the file; only what is returned is kept.
 */
export async function readText(path: string, options: ReadOptions): Promise<string> {
  const handle = await openRegular(path, O_RDONLY, 'read');
  try {
    const whole = (options.line ?? 0) <= 1 && (options.limit ?? 0) <= 0;
    const { size } = await handle.stat();
    if (whole && size > options.maxBytes) throw new FileAccessError(`${shortened(path)} is ${megabytes(size)}, over ${megabytes(options.maxBytes)}: read it in parts (line and limit)`);
    return (await selectedBytes(handle, options, whole)).toString('utf8');
  } catch (error) {
    throw refusal(path, error, 'read');
  } finally {
    await handle.close();
  }
}

/** As readText, when there may be no file: undefined then. */
export async function readTextIfThere(path: string, options: ReadOptions): Promise<string | undefined> {
  try {
    return await readText(path, options);
  } catch (error) {
    if (error instanceof FileAccessError && error.notFound) return undefined;
    throw error;
  }
}

const CHUNK_BYTES = 64 * 1024;

async function selectedBytes(handle: FileHandle, { line = 0, limit = 0, maxBytes }: ReadOptions, whole: boolean): Promise<Buffer> {
  const first = Math.max(line, 1);
  const last = limit > 0 ? first + limit - 1 : Infinity;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let lineNumber = 1;
  let scanned = 0;
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  while (lineNumber <= last) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
    if (bytesRead === 0) break;
    scanned += bytesRead;
    if (!whole && scanned > MAX_SCAN_BYTES) throw new FileAccessError(`reads look at most ${megabytes(MAX_SCAN_BYTES)} into a file, and line ${first} is not within them`);
    for (let from = 0; from < bytesRead && lineNumber <= last; ) {
      const newline = chunk.indexOf(10, from);
      const ends = newline >= 0 && newline < bytesRead;
      const end = ends ? newline + 1 : bytesRead;
      if (lineNumber >= first) {
        keptBytes += end - from;
        if (keptBytes > maxBytes) throw new FileAccessError(whole ? `it grew over ${megabytes(maxBytes)} while read: read it in parts (line and limit)` : `lines ${first}–${Number.isFinite(last) ? last : 'end'} are over ${megabytes(maxBytes)}: ask for fewer (limit)`);
        kept.push(Buffer.from(chunk.subarray(from, end)));
      }
      if (ends) lineNumber++;
      from = end;
    }
  }
  return Buffer.concat(kept, keptBytes);
}

/**
 * Writes `content` to the real path `path`: an existing regular file is changed in place (its
 * mode and links kept); a new one (with `mode`) is created in its directory as judged (the
 * missing directories too), never through a link.
 */
export async function writeText(path: string, content: string, mode = 0o666): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    const stats = lstatIfThere(path);
    checkRegular(path, stats);
    if (stats) handle = await openRegular(path, O_WRONLY, 'written');
    else handle = await createIn(path, mode);
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } catch (error) {
    throw refusal(path, error, 'written');
  } finally {
    await handle?.close();
  }
}

/** Creates (or opens, if it appeared meanwhile) the file at `path` inside its directory's open descriptor. */
async function createIn(path: string, mode: number): Promise<FileHandle> {
  if (!procFds) {
    await mkdir(dirname(path), { recursive: true });
    const handle = await open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode);
    checkOpened(handle.fd, path, 'written');
    return handle;
  }
  const directory = await openDirectory(dirname(path), true);
  try {
    const handle = await open(join(`/proc/self/fd/${directory.fd}`, basename(path)), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, mode);
    try {
      checkRegular(path, await handle.stat());
      checkOpened(handle.fd, path, 'written');
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  } finally {
    await directory.close();
  }
}

/** The directory at the real path `path`, open and checked; its missing parts created (each inside the one before) when `create`. */
async function openDirectory(path: string, create: boolean): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create || dirname(path) === path) throw error;
    const parent = await openDirectory(dirname(path), create);
    try {
      const inside = join(`/proc/self/fd/${parent.fd}`, basename(path));
      await mkdir(inside).catch((made: NodeJS.ErrnoException) => {
        if (made.code !== 'EEXIST') throw made;
      });
      handle = await open(inside, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } finally {
      await parent.close();
    }
  }
  try {
    checkOpened(handle.fd, path, 'written');
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The bytes of the regular file at `path`, up to `maxBytes`, synchronously and without blocking
 * (a pipe put in a file's place is refused); undefined when it is not there, not a regular file,
 * or bigger. A link at its end is not followed (an agent's file).
 */
export function readBytesSync(path: string, maxBytes: number): Buffer | undefined {
  try {
    return boundedRead(path, maxBytes, O_NOFOLLOW);
  } catch {
    return undefined;
  }
}

/**
 * A file the user named (settings, a certificate or key, credentials) or one of the workspace's
 * that the server reads itself: its bytes, at most `maxBytes`, links followed — never waiting on
 * a named pipe put in its place, never reading a device without end. Throws, in words, what
 * stands there instead (or the system's error, with its code).
 */
export function readFileBounded(path: string, maxBytes: number): Buffer {
  return boundedRead(path, maxBytes, 0);
}

/** What stands where a file was read, said of the path (`message`) or of "it" (`reason`). */
export class NotReadable extends Error {
  constructor(
    path: string,
    readonly reason: string,
  ) {
    super(`${shortened(path)} ${reason}`);
  }
}

/** Why a file could not be read, in a few words of "it" (its path said before them). */
export function unreadableWhy(error: unknown): string {
  if (error instanceof NotReadable) return `it ${error.reason}`;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return (error as Error).message;
}

function boundedRead(path: string, maxBytes: number, flags: number): Buffer {
  const fd = openSync(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | flags);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotReadable(path, `is ${kindOf(stats)}, not a file`);
    if (stats.size > maxBytes) throw new NotReadable(path, `is ${megabytes(stats.size)}, over the ${megabytes(maxBytes)} read of it`);
    // Room for what it says it holds, and one byte more to see it grew.
    const bytes = Buffer.allocUnsafe(stats.size + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, bytes, length, bytes.length - length, null);
      if (read === 0) break;
      length += read;
      if (length === bytes.length) throw new NotReadable(path, 'grew while it was read');
    }
    return bytes.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

function megabytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1024 / 1024)} MB` : `${Math.round(bytes / 1024)} KB`;
}
