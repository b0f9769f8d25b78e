/**
 * What an agent reads and writes (ACP `fs/read_text_file`, `fs/write_text_file`).
 *
 * Reads: the editor's buffer when the file is open there — unsaved edits included — else the
 * file on disk. A low-risk read (inside the turn's workspace, no credentials) needs no one's
 * leave; any other is a tool call like any other, decided by the turn's policy (an ask declines
 * it, a task asks the user).
 *
 * Writes: never in an ask. In a task, the user approves the change with it in view (a +/−
 * summary and a unified diff against what they have now: the buffer, else the disk); then an
 * open file changes in the editor's buffer (the bridge makes it there, undoable, and the disk
 * gets it when the user saves), any other on disk — if the disk still holds what was approved.
 */
import { homedir } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { applyHunks, carryOver, changeSummary, describeChange, unifiedDiff } from '../edits.js';
import { FileAccessError, pathTooLong, readText, readTextIfThere, realPath, shortened, writeText } from '../fileAccess.js';
import { assessRisk } from '../risk/assess.js';
import { MAX_READ_BYTES } from '../wire/contract.js';
import type { FileEdit, FileReadRequest, FileWriteRequest, PermissionRequest, PermissionDecision } from './agents/driver.js';
import { shownName } from '../uri.js';

export { FileAccessError } from '../fileAccess.js';

export interface ReadPolicy {
  /** The turn's workspace; none (or `/`, or the home directory) means every read asks. */
  workspaceRoot: string | undefined;
  /** Decides a read outside the workspace. */
  permission(request: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision>;
  /** The editor's buffer of the file, when the caller holds buffers and has it open. */
  fromEditor?(request: FileReadRequest, signal: AbortSignal): Promise<string | undefined>;
}

export interface WritePolicy extends ReadPolicy {
  /** An ask: nothing is written. */
  readOnly: boolean;
  /**
   * Changes the user approved in a tool call of this turn (ACP `diff` content): a write that makes
   * exactly one of them is not asked again. Each counts once.
   */
  approvedEdits?: FileEdit[];
  /**
   * Makes an approved change in the editor's buffer, when the caller holds buffers: `open:
   * false` when the file is not open there (the disk gets it), else whether the buffer has it.
   */
  toEditor?(write: { path: string; base: string; content: string }, signal: AbortSignal): Promise<{ open: boolean; applied: boolean; message: string }>;
  /** The file's text on disk as the turn began, where it was kept (workspaceChanges.ts). */
  diskBefore?(path: string): string | undefined;
  /** A write was made: for the task's review and its undo (`unasked`: no permission named it). */
  changed?(change: { path: string; before: string; after: string; inEditor: boolean; unasked?: boolean }): void;
}

/** The turn's workspace: a working directory of `/` or the home directory is none (nothing would be outside it). */
export function workspaceOf(cwd: string | undefined): string | undefined {
  return cwd && cwd !== '/' && resolve(cwd) !== resolve(homedir()) ? resolve(cwd) : undefined;
}

export function insideWorkspace(path: string, workspaceRoot: string | undefined): boolean {
  if (!workspaceRoot) return false;
  const within = relative(resolve(workspaceRoot), path);
  return within === '' || (!within.startsWith('..') && !isAbsolute(within));
}

/**
 * The path an agent named, absolute, and where it really leads (every link followed, a dangling
 * one too): what is judged, and the only file then touched. Refused at once when it cannot be.
 */
function judgedPath(written: string, verb: 'read' | 'write'): { path: string; real: string } {
  if (!isAbsolute(written)) throw new FileAccessError(`cannot ${verb} ${shortened(written)}: ACP paths are absolute`);
  const tooLong = pathTooLong(written);
  if (tooLong) throw new FileAccessError(`cannot ${verb} ${shortened(written)}: ${tooLong}`);
  const path = resolve(written);
  const real = realPath(path);
  if (!real) throw new FileAccessError(`cannot ${verb} ${shortened(path)}: it leads through more than 40 symbolic links (a loop)`);
  return { path, real };
}

/** The path as the user reads it, and where it leads when that is elsewhere. */
function shownTarget(path: string, real: string, workspaceRoot: string | undefined): string {
  return real === path ? shownPath(path, workspaceRoot) : `${shownPath(path, workspaceRoot)} → ${shownPath(real, workspaceRoot)}`;
}

export async function readForAgent(request: FileReadRequest, policy: ReadPolicy, signal: AbortSignal): Promise<string> {
  const { path, real } = judgedPath(request.path, 'read');
  // Judged as any read tool call is (risk/), as what it leads to: credentials inside the workspace too.
  const call = { tool: `Read ${path}`, kind: 'read', title: `Read ${real === path ? path : `${path} → ${real}`}`, parameters: { path, ...(real !== path && { leadsTo: real }) }, input: { path: real }, locations: [real], writes: [] };
  const { risk, reasons } = assessRisk(call, { workspaceRoot: policy.workspaceRoot });
  if (risk !== 'low' && (await policy.permission(call, signal)) === 'reject') {
    throw new FileAccessError(`reading ${shortened(path)} was refused: ${reasons.join('; ') || 'it is not a read of the workspace'}`);
  }
  const buffer = await policy.fromEditor?.({ ...request, path }, signal);
  if (buffer !== undefined) return buffer;
  if (realPath(path) !== real) throw new FileAccessError(`${shortened(path)} was not read: a link in its path was re-pointed while the read was decided`);
  return readText(real, { line: request.line, limit: request.limit, maxBytes: MAX_READ_BYTES });
}

export async function writeForAgent(request: FileWriteRequest, policy: WritePolicy, signal: AbortSignal): Promise<void> {
  const { path, real } = judgedPath(request.path, 'write');
  if (policy.readOnly) throw new FileAccessError(`writing ${shortened(path)} was refused: an ask is read-only`);
  if (Buffer.byteLength(request.content, 'utf8') > MAX_READ_BYTES) throw new FileAccessError(`cannot write ${shortened(path)}: over ${MAX_READ_BYTES / 1024 / 1024} MB, too big to review and write whole`);
  // What the user has now: the change is shown, approved and made against it.
  const buffer = await policy.fromEditor?.({ path }, signal);
  const disk = await readTextIfThere(real, { maxBytes: MAX_READ_BYTES });
  const base = buffer ?? disk ?? '';
  const content = onBuffer(path, { buffer, disk, diskBefore: policy.diskBefore?.(real) }, request.content);
  if (base === content) return;
  const shown = shownTarget(path, real, policy.workspaceRoot);
  const summary = changeSummary(base, content);
  const approved = takeApproved(policy.approvedEdits, path, base, content);
  const decision = approved ? 'allow_once' : await policy.permission(
    {
      tool: `Write ${shown}`,
      kind: 'edit',
      title: `Write ${shown} (${describeChange(summary)})`,
      parameters: { path, ...(real !== path && { leadsTo: real }), change: `${describeChange(summary)} lines` },
      input: { path: real },
      locations: [real],
      writes: [real],
      diff: { text: unifiedDiff(shownPath(path, policy.workspaceRoot), base, content), ...summary },
    },
    signal,
  );
  if (decision === 'reject') throw new FileAccessError(`writing ${shortened(path)} was not approved (denied, or no answer in time)`);
  const inEditor = await policy.toEditor?.({ path, base, content }, signal);
  if (inEditor?.open) {
    if (!inEditor.applied) throw new FileAccessError(`${shortened(path)} was not changed: ${inEditor.message}`);
    policy.changed?.({ path, before: base, after: content, inEditor: true });
    return;
  }
  // Not open in the editor: on disk, the file judged — unless a link was re-pointed, or the file changed, since.
  if (realPath(path) !== real) throw new FileAccessError(`${shortened(path)} was not changed: a link in its path was re-pointed while the change was decided`);
  if (((await readTextIfThere(real, { maxBytes: MAX_READ_BYTES })) ?? '') !== base) throw new FileAccessError(`${shortened(path)} was not changed: it changed on disk since the change was approved; read it again`);
  await writeText(real, content);
  policy.changed?.({ path, before: base, after: content, inEditor: false });
}

/**
 * The agent's content for a file whose buffer has unsaved edits, made over the buffer. An agent
 * that read the buffer (ACP fs/read_text_file) writes on it; one that read the disk itself and
 * writes through us all the same (opencode) writes on the disk, and its content — closer to the
 * disk than to the buffer — would take the user's unsaved edits away: its change to the disk is
 * carried over to the buffer instead. Where its change and the user's edits touch the same lines,
 * the write is refused, for the agent to read the file again.
 */
function onBuffer(path: string, texts: { buffer?: string; disk?: string; diskBefore?: string }, content: string): string {
  const { buffer, disk, diskBefore } = texts;
  if (buffer === undefined || disk === undefined || buffer === disk) return content;
  const distance = (from: string) => {
    const { added, removed } = changeSummary(from, content);
    return added + removed;
  };
  // Written on disk by the agent itself in this turn, before it writes the same through us: its
  // change is from the disk as the turn began.
  const base = disk === content && diskBefore !== undefined && diskBefore !== disk ? diskBefore : disk;
  // Else content the disk holds already is the agent's word for the whole file (the user undid
  // its change in the buffer, say): it goes to the buffer as it is.
  const fromBase = distance(base);
  if (fromBase === 0 || fromBase >= distance(buffer)) return content;
  const hunks = carryOver(base, content, buffer);
  if (!hunks) throw new FileAccessError(`${shortened(path)} was not changed: the change was made on the file as saved, and the user has unsaved edits on the same lines; read the file again (its buffer) and make the change on that`);
  return applyHunks(buffer, hunks);
}

/**
 * A tool call's changes as the user reviews them: each one to the whole file — real line numbers,
 * context, the path relative to the workspace — against what the user has now (the editor's
 * buffer, else the disk). An agent that shows a snippet replaced (Claude Code's Edit: its
 * old_string and new_string) is shown what that replacement does to the file; one whose snippet is
 * not in the file, the snippet alone.
 */
export async function reviewEdits(edits: FileEdit[], policy: Pick<ReadPolicy, 'workspaceRoot' | 'fromEditor'>, signal: AbortSignal): Promise<{ text: string; added: number; removed: number }> {
  let added = 0;
  let removed = 0;
  const diffs: string[] = [];
  for (const edit of edits) {
    const path = resolve(edit.path);
    let base: string;
    try {
      base = (await policy.fromEditor?.({ path }, signal)) ?? (await readTextIfThere(realPath(path) ?? path, { maxBytes: MAX_READ_BYTES })) ?? '';
    } catch {
      base = edit.oldText ?? '';
    }
    const [before, after] = wholeFile(base, edit);
    const change = changeSummary(before, after);
    added += change.added;
    removed += change.removed;
    diffs.push(unifiedDiff(shownPath(path, policy.workspaceRoot), before, after));
  }
  return { text: diffs.join(''), added, removed };
}

/** The file before and after an edit: the whole file where the edit's snippet is found in it (or it is the whole file). */
function wholeFile(base: string, edit: FileEdit): [string, string] {
  if (edit.oldText === undefined) return [base, edit.newText];
  if (edit.oldText === base) return [base, edit.newText];
  if (edit.oldText && base.includes(edit.oldText)) return [base, base.replace(edit.oldText, edit.newText)];
  return [edit.oldText, edit.newText];
}

/** A path as the user reads it: relative to the workspace inside it, else absolute. */
export function shownPath(path: string, workspaceRoot: string | undefined): string {
  return shownName(path, [workspaceRoot]);
}

/** The approved edit this write makes exactly, taken off the list; undefined when there is none. */
function takeApproved(edits: FileEdit[] | undefined, path: string, base: string, content: string): FileEdit | undefined {
  const makes = (edit: FileEdit) => {
    if (resolve(edit.path) !== path) return false;
    // The whole file (a new one has no old text), or one snippet of it replaced.
    if (content === edit.newText && (edit.oldText === undefined || edit.oldText === base)) return true;
    return Boolean(edit.oldText) && base.includes(edit.oldText!) && content === base.replace(edit.oldText!, edit.newText);
  };
  const index = edits?.findIndex(makes) ?? -1;
  return index < 0 ? undefined : edits!.splice(index, 1)[0];
}
