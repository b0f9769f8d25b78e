/**
 * Review after a task: every file the agent changed, with +/− lines and where the change is (the
 * editor's buffer, not saved yet, or the disk) — the end of the task's answer — and "undo the
 * task's edits", which restores what was there before, carried over what the user changed since
 * and refused, file by file, where they changed the same lines.
 */
import { shownName } from '../../uri.js';
import { changeSummary, describeChange } from '../../edits.js';
import { codeSpan, oneLine } from '../../text.js';
import type { Logger } from '../../logger.js';
import type { FileChanged } from '../../wire/contract.js';
import type { AgentEdits } from './agentEdits.js';

/** Finished tasks whose edits can still be undone; older ones are forgotten. */
const KEPT_TASKS = 20;

interface FileEdit {
  /** Before the task's first write, after its last. */
  before: string;
  after: string;
  inEditor: boolean;
  /** Some change of it was made without a permission naming it. */
  unasked: boolean;
}

interface EditedTask {
  title: string;
  /** The conversation it belongs to: told what the user undid with its next turn. */
  conversation?: string;
  files: Map<string, FileEdit>;
}

export interface UndoOutcome {
  title: string;
  undone: string[];
  /** Files left as they are, and why. */
  kept: { path: string; why: string }[];
}

export class TaskEdits {
  private readonly tasks = new Map<string, EditedTask>();

  constructor(
    private readonly agentEdits: AgentEdits,
    private readonly workspaceRoot: () => string | undefined,
    private readonly logger: Logger,
    /** What the user undid of a conversation's changes (its agent is told with the next turn). */
    private readonly noteUndone: (conversation: string, lines: string[]) => void = () => {},
  ) {}

  /** A write of the task's agent was made. */
  record(taskId: string, title: string, change: FileChanged, conversation?: string): void {
    const task = this.tasks.get(taskId) ?? { title, conversation, files: new Map() };
    this.tasks.delete(taskId); // the newest last
    this.tasks.set(taskId, task);
    const known = task.files.get(change.path);
    task.files.set(change.path, { before: known ? known.before : change.before, after: change.after, inEditor: change.in_editor, unasked: Boolean(known?.unasked) || change.unasked });
    while (this.tasks.size > KEPT_TASKS) this.tasks.delete(this.tasks.keys().next().value!);
  }

  /** The files a task changed (before its first write, after its last), while its edits can be undone. */
  filesOf(taskId: string): ReadonlyMap<string, Readonly<FileEdit>> | undefined {
    return this.tasks.get(taskId)?.files;
  }

  /** A change kept (`before` moves on) or undone (`after` moves back); a file with nothing left to review is forgotten. */
  update(taskId: string, path: string, change: { before?: string; after?: string }): void {
    const task = this.tasks.get(taskId);
    const edit = task?.files.get(path);
    if (!task || !edit) return;
    Object.assign(edit, change);
    if (edit.before === edit.after) task.files.delete(path);
    if (task.files.size === 0) this.tasks.delete(taskId);
  }

  /** What the task changed, as the end of its answer (markdown); undefined when it changed nothing. */
  review(taskId: string): string | undefined {
    const task = this.tasks.get(taskId);
    if (!task || task.files.size === 0) return undefined;
    const lines = [...task.files].map(([path, edit]) => {
      const where = edit.inEditor ? 'in the editor, not saved yet' : 'on disk';
      return `- ${codeSpan(this.shown(path))} ${describeChange(changeSummary(edit.before, edit.after))}, ${where}${edit.unasked ? ', changed without asking' : ''}`;
    });
    return `**Files it changed** — each change is marked in its file: keep or undo it there with the code actions "Buckley: keep this change" / "Buckley: undo this change"; undo them all with "Buckley: undo the task's edits" or the command \`buckley.undoTaskEdits\`:\n\n${lines.join('\n')}`;
  }

  /** Tasks whose edits can be undone, newest first; with a path, those that changed it. */
  undoable(path?: string): { id: string; title: string }[] {
    return [...this.tasks]
      .filter(([, task]) => path === undefined || task.files.has(path))
      .map(([id, task]) => ({ id, title: task.title }))
      .reverse();
  }

  /** Restores what the task's files held before it; undefined when there is no such task. */
  async undo(taskId: string | undefined): Promise<UndoOutcome | undefined> {
    const id = taskId ?? this.undoable()[0]?.id;
    const task = id === undefined ? undefined : this.tasks.get(id);
    if (!task) return undefined;
    const outcome: UndoOutcome = { title: task.title, undone: [], kept: [] };
    for (const [path, edit] of task.files) {
      const reverted = await this.agentEdits.revert({ path, before: edit.before, after: edit.after }, this.workspaceRoot());
      if (reverted.reverted) {
        outcome.undone.push(path);
        task.files.delete(path);
      } else {
        outcome.kept.push({ path, why: this.changedLater(id!, path) ?? reverted.message });
      }
    }
    if (task.files.size === 0) this.tasks.delete(id!);
    this.undone(id!, outcome.undone.map((path) => `${codeSpan(this.shown(path))}: all your changes to it, back to what it was before «${oneLine(task.title, 60)}»`), task);
    this.logger.info(`undo of «${task.title}»: ${outcome.undone.length} file(s) restored${outcome.kept.map(({ path, why }) => `; ${path} kept: ${why}`).join('')}`);
    return outcome;
  }

  /**
   * Why a change of a task could not be undone where a task that wrote after it changed the file
   * too (and its change is still there): most likely, that change stands in the way.
   */
  changedLater(taskId: string, path: string): string | undefined {
    const ids = [...this.tasks.keys()];
    const later = ids.slice(ids.indexOf(taskId) + 1).map((id) => this.tasks.get(id)!).find((task) => task.files.has(path));
    return later && `the same lines were changed since, by the task «${oneLine(later.title, 40)}» too: undo its change there first`;
  }

  /** Changes of a task the user undid (`lines`: what became of each, for its agent). */
  undone(taskId: string, lines: string[], task = this.tasks.get(taskId)): void {
    if (task?.conversation && lines.length) this.noteUndone(task.conversation, lines);
  }

  /** A path as the agent sees it: from the workspace. */
  shown(path: string): string {
    return shownName(path, [this.workspaceRoot()]);
  }
}
