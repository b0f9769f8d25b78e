/**
 * What an agent reads (ACP `fs/read_text_file`): the editor's buffer when the file is open there
 * — unsaved edits included — else the file on disk. Inside the turn's workspace a read needs no
 * one's leave; outside it, it is a tool call like any other, decided by the turn's policy (an ask
 * declines it, a task asks the user).
 */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { selectLines } from '../text.js';
import type { FileReadRequest, PermissionRequest, PermissionDecision } from './agents/driver.js';

/** Bigger files are read in parts (`line` and `limit`): a whole one would flood the agent and us. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** A read refused or failed, said so that the agent (and the user reading its answer) knows why. */
export class FileReadError extends Error {
  override readonly name = 'FileReadError';
  constructor(
    message: string,
    readonly notFound = false,
  ) {
    super(message);
  }
}

export interface ReadPolicy {
  /** The turn's workspace; none (or `/`, or the home directory) means every read asks. */
  workspaceRoot: string | undefined;
  /** Decides a read outside the workspace. */
  permission(request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision>;
  /** The editor's buffer of the file, when the caller holds buffers and has it open. */
  fromEditor?(request: FileReadRequest, signal: AbortSignal): Promise<string | undefined>;
}

export function insideWorkspace(path: string, workspaceRoot: string | undefined): boolean {
  if (!workspaceRoot) return false;
  const within = relative(resolve(workspaceRoot), path);
  return within === '' || (!within.startsWith('..') && !isAbsolute(within));
}

export async function readForAgent(request: FileReadRequest, policy: ReadPolicy, signal: AbortSignal): Promise<string> {
  if (!isAbsolute(request.path)) throw new FileReadError(`cannot read ${request.path}: ACP paths are absolute`);
  const path = resolve(request.path);
  if (!insideWorkspace(path, policy.workspaceRoot)) {
    const title = `Read ${path}`;
    const decision = await policy.permission({ tool: title, kind: 'read', title, parameters: { path }, input: { path }, locations: [path], writes: [] }, signal);
    if (decision === 'reject') {
      throw new FileReadError(`reading ${path} was refused: it is outside the workspace${policy.workspaceRoot ? ` (${policy.workspaceRoot})` : ''}`);
    }
  }
  const buffer = await policy.fromEditor?.({ ...request, path }, signal);
  if (buffer !== undefined) return buffer;
  return readFromDisk({ ...request, path });
}

async function readFromDisk({ path, line, limit }: FileReadRequest): Promise<string> {
  try {
    const { size } = await stat(path);
    if (size > MAX_READ_BYTES && !limit) throw new FileReadError(`${path} is ${Math.round(size / 1024 / 1024)} MB: read it in parts (line and limit)`);
    return selectLines(await readFile(path, 'utf8'), line, limit);
  } catch (error) {
    if (error instanceof FileReadError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new FileReadError(`${path} does not exist`, true);
    if (code === 'EISDIR') throw new FileReadError(`${path} is a directory`);
    throw new FileReadError(`cannot read ${path}: ${(error as Error).message}`);
  }
}
