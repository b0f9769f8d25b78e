/**
 * What changed in a workspace during a turn, whoever changed it: agents that write the disk
 * themselves (Codex's apply_patch, Claude Code's Edit and Write, any shell command) never go
 * through `fs/write_text_file`, so the coordinator looks. Before the turn, every file's size, time
 * and identity is noted, and the text of the smaller ones kept (what an undo needs); after it,
 * what differs is the turn's change: its text before (where it was kept) and after.
 *
 * Bounded: at most `maxFiles` files are looked at (dependency folders and version control are
 * skipped: what an install writes there is not the user's text), texts are kept up to `maxFileBytes`
 * each and `maxKeptBytes` in all; a change to a file whose text was not kept is reported without it.
 * And together: the snapshots of turns running at once share what they can — a file seen the same
 * by several is one record, its text one copy — within TOTAL_LIMITS for all of them (SharedFiles).
 */
import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { rm } from 'node:fs/promises';
import { unifiedDiff } from '../edits.js';
import { readBytesSync, readTextIfThere, realPath, writeText } from '../fileAccess.js';
import { isInside } from '../risk/paths.js';
import { join } from 'node:path';

const SKIPPED = new Set(['node_modules', '.git', '.hg', '.svn', '.jj']);

interface Seen {
  size: number;
  mtimeMs: number;
  /** The inode's change time: unlike the modification time, no agent can set it back. */
  ctimeMs: number;
  ino: number;
  /** Its text before the turn, where it was kept. */
  text?: string;
}

export interface WorkspaceChange {
  path: string;
  /** Its text before the turn; undefined for a new file, or one whose text was not kept (`known: false`). */
  before?: string;
  /** Its text now; undefined once deleted, or when it is not text. */
  after?: string;
  /** Whether `before` is what the file held (false: it was too big, or too many files, to keep). */
  known: boolean;
  deleted: boolean;
}

export interface SnapshotLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxKeptBytes: number;
}

export const SNAPSHOT_LIMITS: SnapshotLimits = { maxFiles: 50_000, maxFileBytes: 256 * 1024, maxKeptBytes: 16 * 1024 * 1024 };
/** What all the snapshots of a process keep at once: files noted, and their texts' bytes. */
export const TOTAL_LIMITS = { maxFiles: 200_000, maxKeptBytes: 64 * 1024 * 1024 };

/** A file as noted, shared by the snapshots that saw it the same, until the last is released. */
interface SharedSeen extends Seen {
  users: number;
  key: string;
}

/**
 * What the snapshots taken in this process keep, together: each file seen the same (size, times,
 * identity) by several is one record and one copy of its text; and all of them keep at most
 * `total` — a snapshot taken beyond it notes fewer files, keeps fewer texts (its changes to those
 * are then reported without an undo, or not at all, and it says it is incomplete).
 */
export class SharedFiles {
  private readonly seen = new Map<string, SharedSeen>();
  /** Files noted by the snapshots not yet released, and the bytes of the texts they keep. */
  files = 0;
  keptBytes = 0;

  constructor(private readonly total = TOTAL_LIMITS) {}

  /** Files one more snapshot may note now. */
  roomForFiles(wanted: number): number {
    return Math.max(0, Math.min(wanted, this.total.maxFiles - this.files));
  }

  /** The record of `path` as `stat` says it is: one shared where another snapshot saw it the same, else new (its text kept while there is room). */
  note(path: string, stat: Seen, keep: { maxFileBytes: number; roomLeft: number }): SharedSeen {
    const key = `${path}\0${stat.size}\0${stat.mtimeMs}\0${stat.ctimeMs}\0${stat.ino}`;
    const shared = this.seen.get(key);
    if (shared) {
      shared.users++;
      return shared;
    }
    const made: SharedSeen = { ...stat, users: 1, key };
    if (stat.size <= keep.maxFileBytes && stat.size <= keep.roomLeft && this.keptBytes + stat.size <= this.total.maxKeptBytes) {
      const text = textOf(path, keep.maxFileBytes);
      if (text !== undefined) {
        made.text = text;
        this.keptBytes += stat.size;
      }
    }
    this.seen.set(key, made);
    return made;
  }

  /** A snapshot's records given back: those no other snapshot holds are forgotten. */
  release(records: Iterable<SharedSeen>): void {
    for (const record of records) {
      this.files--;
      if (--record.users > 0) continue;
      this.seen.delete(record.key);
      if (record.text !== undefined) this.keptBytes -= record.size;
    }
  }
}

/** The process's snapshots' shared records (one coordinator a process). */
export const sharedFiles = new SharedFiles();

export class WorkspaceSnapshot {
  private released = false;

  private constructor(
    readonly root: string,
    private readonly files: Map<string, SharedSeen>,
    private readonly limits: SnapshotLimits,
    /** Whether every file was looked at. */
    readonly complete: boolean,
    private readonly shared: SharedFiles,
  ) {}

  static take(root: string, limits: SnapshotLimits = SNAPSHOT_LIMITS, shared: SharedFiles = sharedFiles): WorkspaceSnapshot {
    const files = new Map<string, SharedSeen>();
    let kept = 0;
    // The room left when it is taken, for every walk of it (its changes are looked for among the same files).
    const maxFiles = shared.roomForFiles(limits.maxFiles);
    const complete = walk(root, maxFiles, (path, stat) => {
      const seen = shared.note(path, stat, { maxFileBytes: limits.maxFileBytes, roomLeft: limits.maxKeptBytes - kept });
      if (seen.text !== undefined) kept += seen.size;
      files.set(path, seen);
    });
    shared.files += files.size;
    return new WorkspaceSnapshot(root, files, { ...limits, maxFiles }, complete, shared);
  }

  /** Gives its records back (the turn is over): once. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.shared.release(this.files.values());
  }

  /** A file's text when the snapshot was taken, where it was kept. */
  textBefore(path: string): string | undefined {
    return this.files.get(path)?.text;
  }

  /** What differs now from when the snapshot was taken. */
  changes(): WorkspaceChange[] {
    const changes: WorkspaceChange[] = [];
    const present = new Set<string>();
    walk(this.root, this.limits.maxFiles, (path, now) => {
      present.add(path);
      const before = this.files.get(path);
      if (before && before.size === now.size && before.mtimeMs === now.mtimeMs && before.ctimeMs === now.ctimeMs && before.ino === now.ino) return;
      const after = textOf(path, MAX_CHANGED_BYTES);
      if (before?.text !== undefined && after === before.text) return; // touched, not changed
      changes.push({ path, before: before?.text, after, known: !before || before.text !== undefined, deleted: false });
    });
    for (const [path, before] of this.files) {
      if (!present.has(path)) changes.push({ path, before: before.text, known: before.text !== undefined, deleted: true });
    }
    return changes.sort((a, b) => a.path.localeCompare(b.path));
  }
}

/** A changed file's text is read up to this size (what the wire carries). */
const MAX_CHANGED_BYTES = 16 * 1024 * 1024;

/**
 * Calls `found` for each regular file under `root` (not following links), breadth first; false
 * when `maxFiles` cut it short. Synchronous: thousands of `stat`s take milliseconds so, and
 * seconds awaited one by one.
 */
function walk(root: string, maxFiles: number, found: (path: string, seen: Seen) => void): boolean {
  const queue = [root];
  let count = 0;
  while (queue.length > 0) {
    const directory = queue.shift()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) queue.push(path);
        continue;
      }
      if (!entry.isFile()) continue;
      if (++count > maxFiles) return false;
      try {
        const stats = lstatSync(path);
        // Only regular files are read: a FIFO or device put there meanwhile would block the read.
        if (stats.isFile()) found(path, { size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino });
      } catch {
        // gone meanwhile
      }
    }
  }
  return true;
}

/**
 * The file's text, or undefined when it is not UTF-8 text (a NUL byte, or invalid UTF-8), is over
 * `maxBytes`, or is no longer a regular file (a pipe put in its place is not waited on).
 */
function textOf(path: string, maxBytes: number): string | undefined {
  const bytes = readBytesSync(path, maxBytes);
  if (!bytes || bytes.includes(0)) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.byteLength(text, 'utf8') === bytes.length ? text : undefined;
}

/** What a turn's changes are taken into: the editor (open files), the review, the user's notice. */
export interface ChangeSink {
  /** Paths the turn wrote through us (fs/write_text_file): already reviewed. */
  writtenThroughUs: ReadonlySet<string>;
  /** Of those, the ones whose change was made in the editor's buffer: the disk is not theirs to change. */
  writtenInEditor?: ReadonlySet<string>;
  /** Whether a permission the user (or the policy) gave in this turn named the path. */
  approved(path: string): boolean;
  /** Makes a change in the editor's buffer where the file is open there (agentEdits): `open: false` otherwise. */
  toEditor?(write: { path: string; base: string; content: string }): Promise<{ open: boolean; applied: boolean; message: string }>;
  /** A change for the task's review and its undo. */
  changed(change: { path: string; before: string; after: string; inEditor: boolean; unasked: boolean }): void;
  logger: { info(message: string): void; warn(message: string): void };
}

export interface SettledChanges {
  /** Files changed without a permission naming them (shown to the user in one line). */
  unasked: string[];
  /** Changes the editor would not take (the user changed the same lines): taken back from disk, said why. */
  refused: { path: string; why: string }[];
  /** Changes with no undo: their text before was not kept. */
  notKept: string[];
}

/**
 * Takes what changed on disk during a turn into the editor and the review. A change to a file
 * open in the editor is made in its buffer, carried over the user's unsaved edits (as an agent's
 * write through us is), and the disk gets its text back: the editor never finds its file changed
 * behind its back, and nothing overwrites an unsaved edit. Where the user changed the same lines,
 * their text wins and the disk gets its text back too (the change is in the log). Any other change
 * stays on disk. Every change is listed for the review, with its undo where its text before was kept.
 */
export async function settleChanges(snapshot: WorkspaceSnapshot, sink: ChangeSink): Promise<SettledChanges> {
  const settled: SettledChanges = { unasked: [], refused: [], notKept: [] };
  // An editor that missed one deadline is not waited on for every other change.
  let editorSilent = false;
  for (const change of snapshot.changes()) {
    if (sink.writtenThroughUs.has(change.path)) {
      // Changed in the buffer through us, and on disk by the agent itself as well (opencode does
      // both): the editor has it already, the disk gets its text back.
      if (sink.writtenInEditor?.has(change.path) && change.known && change.before !== undefined && change.after !== undefined) await restore(snapshot.root, change.path, change.before, change.after, sink);
      continue;
    }
    const unasked = !sink.approved(change.path);
    if (unasked) settled.unasked.push(change.path);
    if (!change.known || (change.after === undefined && !change.deleted)) {
      settled.notKept.push(change.path);
      continue;
    }
    const before = change.before ?? '';
    const after = change.after ?? '';
    const inEditor = change.deleted || editorSilent ? undefined : await inEditorOf(change.path, before, after, sink);
    if (inEditor === null) editorSilent = true;
    if (inEditor?.open) {
      // A file the turn made has no text to get back: it goes (the editor has it, to save or drop).
      await restore(snapshot.root, change.path, change.before, after, sink);
      if (!inEditor.applied) {
        settled.refused.push({ path: change.path, why: inEditor.message });
        sink.logger.warn(`the change to ${change.path} made on disk was not taken into the editor (${inEditor.message}), and the disk has its text back; it was:\n${unifiedDiff(change.path, before, after)}`);
        continue;
      }
    }
    sink.changed({ path: change.path, before, after, inEditor: Boolean(inEditor?.open), unasked });
  }
  return settled;
}

/**
 * The change made in the editor; null when the editor did not answer in time — it may or may not
 * have the change, so the disk keeps it.
 */
async function inEditorOf(path: string, before: string, after: string, sink: ChangeSink): Promise<{ open: boolean; applied: boolean; message: string } | undefined | null> {
  try {
    return await sink.toEditor?.({ path, base: before, content: after });
  } catch (error) {
    sink.logger.warn(`the change to ${path} stays on disk: ${(error as Error).message}`);
    return null;
  }
}

/**
 * Puts a file's text back where the disk still holds the change (the user may have saved since),
 * or removes a file the turn made (`before` undefined): that file only — not what a link put in
 * its place leads to.
 */
async function restore(root: string, path: string, before: string | undefined, after: string, sink: ChangeSink): Promise<void> {
  try {
    const real = realPath(path);
    if (!real || !isInside(real, root)) throw new Error(`a link now leads it out of the workspace, to ${real ?? 'a loop of links'}`);
    if ((await readTextIfThere(real, { maxBytes: MAX_CHANGED_BYTES })) !== after) return;
    if (before === undefined) await rm(real, { force: true });
    else await writeText(real, before);
  } catch (error) {
    sink.logger.warn(`cannot put ${path} back as the editor has it: ${(error as Error).message}`);
  }
}
