/**
 * Review per change, in every editor: once a task has ended, each change ("hunk") it made to a
 * file — in the editor's buffer or on disk — is marked with a diagnostic on its lines, with code
 * actions "Buckley: keep this change", "Buckley: undo this change" and, for the whole task, "keep
 * all" / "undo all". What Zed's review multibuffer gives, for Helix, Emacs and Neovim too. An undo
 * is an edit the user can undo in turn (in the buffer; on disk where the file is not open),
 * carried over what they changed since, and refused where they changed the same lines. The marks
 * follow the user's edits; a change the user made the same as before it is no longer marked.
 */
import { readFileBounded } from '../../fileAccess.js';
import { pathToFileURL } from 'node:url';
import { DiagnosticSeverity, type Command, type Diagnostic, type Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { applyHunks, describeChange, lineCount, lineHunks, type Hunk } from '../../edits.js';
import type { Logger } from '../../logger.js';
import { codeSpan, oneLine } from '../../text.js';
import { MAX_READ_BYTES } from '../../wire/contract.js';
import type { DiagnosticsBoard } from '../editor/diagnostics.js';
import { Commands } from '../names.js';
import type { AgentEdits } from './agentEdits.js';
import type { TaskEdits } from './taskEdits.js';

export interface ReviewDependencies {
  edits: TaskEdits;
  agentEdits: AgentEdits;
  diagnostics: DiagnosticsBoard;
  /** The open document of a path, with every change applied. */
  documentAt(path: string): TextDocument | undefined;
  workspaceRoot(): string | undefined;
  logger: Logger;
}

/** A change under review, as its code actions name it: the task, the file, its first line in the agent's text and its lines. */
export interface HunkRef {
  taskId: string;
  path: string;
  /** Absent: every change of the task. */
  line?: number;
  text?: string;
}

/** One change of a file, in the agent's text (`after`) and where it is now in the file. */
interface Marked {
  /** Lines [fromLine, toLine) of the agent's text that it wrote; `text`: what they were before. */
  reverse: Hunk;
  /** Its lines in the file as it is now. */
  range: Range;
  added: number;
  removed: number;
}

export class HunkReview {
  /** Tasks under review, newest last. */
  private readonly reviewed: { taskId: string; title: string }[] = [];
  private publishing: NodeJS.Timeout | undefined;

  constructor(private readonly deps: ReviewDependencies) {}

  /** A task has ended: its changes are marked for review. */
  show(taskId: string, title: string): void {
    if (!this.deps.edits.filesOf(taskId)) return;
    this.reviewed.push({ taskId, title });
    this.publish();
  }

  /** A document changed: its marks move with the user's edits (once the typing pauses). */
  documentChanged(path: string | undefined): void {
    if (!path || !this.reviewed.some(({ taskId }) => this.deps.edits.filesOf(taskId)?.has(path))) return;
    clearTimeout(this.publishing);
    this.publishing = setTimeout(() => this.publish(), 150);
  }

  /** The code actions for the marks a range touches: keep or undo each; keep or undo all of its task. */
  commands(path: string, range: Range): Command[] {
    const commands: Command[] = [];
    for (const { taskId, title } of [...this.reviewed].reverse()) {
      const marks = this.marksOf(taskId, path).filter((mark) => touches(mark.range, range));
      for (const mark of marks) {
        const ref: HunkRef = { taskId, path, line: mark.reverse.fromLine, text: mark.reverse.text };
        const what = `(${describeChange(mark)})`;
        commands.push({ title: `Buckley: keep this change ${what}`, command: Commands.keepChange, arguments: [ref] }, { title: `Buckley: undo this change ${what}`, command: Commands.undoChange, arguments: [ref] });
      }
      if (marks.length) {
        const task = `«${oneLine(title, 40)}»`;
        commands.push({ title: `Buckley: keep all changes of ${task}`, command: Commands.keepChange, arguments: [{ taskId, path }] }, { title: `Buckley: undo all changes of ${task}`, command: Commands.undoChange, arguments: [{ taskId, path }] });
      }
    }
    return commands;
  }

  /** Keeps a change (or all of the task's): it is no longer marked; the text stays as it is. */
  keep(ref: HunkRef): { kept: number } {
    const files = this.deps.edits.filesOf(ref.taskId);
    if (!files) return { kept: 0 };
    let kept = 0;
    for (const [path, edit] of [...files]) {
      if (ref.line !== undefined && path !== ref.path) continue;
      const reverse = lineHunks(edit.after, edit.before);
      const index = ref.line === undefined ? -1 : findHunk(reverse, ref);
      if (ref.line !== undefined && index < 0) continue;
      // Kept: its lines are what the file had before, as far as the review is concerned.
      const before = ref.line === undefined ? edit.after : applyHunks(edit.after, reverse.filter((_, i) => i !== index));
      kept += ref.line === undefined ? reverse.length : 1;
      this.deps.edits.update(ref.taskId, path, { before });
    }
    this.publish();
    return { kept };
  }

  /**
   * Undoes a change (or all of the task's): the file gets back what it had there before, carried
   * over the user's edits since; a change whose lines the user edited too is left, and said why.
   */
  async undo(ref: HunkRef): Promise<{ undone: number; kept: { path: string; why: string }[] }> {
    const files = this.deps.edits.filesOf(ref.taskId);
    const outcome = { undone: 0, kept: [] as { path: string; why: string }[] };
    if (!files) return outcome;
    const told: string[] = [];
    for (const [path, edit] of [...files]) {
      if (ref.line !== undefined && path !== ref.path) continue;
      const reverse = lineHunks(edit.after, edit.before);
      const index = ref.line === undefined ? -1 : findHunk(reverse, ref);
      if (ref.line !== undefined && index < 0) {
        outcome.kept.push({ path, why: 'that change is no longer under review' });
        continue;
      }
      const target = ref.line === undefined ? edit.before : applyHunks(edit.after, [reverse[index]!]);
      const reverted = await this.deps.agentEdits.revert({ path, before: target, after: edit.after }, this.deps.workspaceRoot());
      if (!reverted.reverted) {
        outcome.kept.push({ path, why: this.deps.edits.changedLater(ref.taskId, path) ?? reverted.message });
        continue;
      }
      outcome.undone += ref.line === undefined ? reverse.length : 1;
      const shown = codeSpan(this.deps.edits.shown(path));
      told.push(ref.line === undefined ? `${shown}: all your changes to it, back to what it was before the task` : undoneHunk(shown, reverse[index]!));
      this.deps.edits.update(ref.taskId, path, { after: target });
    }
    this.deps.edits.undone(ref.taskId, told);
    this.deps.logger.info(`undid ${outcome.undone} change(s) of task ${ref.taskId}${outcome.kept.map(({ path, why }) => `; ${path} kept: ${why}`).join('')}`);
    this.publish();
    return outcome;
  }

  /** The marks, as diagnostics on the files as they are now (after an undo of a whole task, too). */
  publish(): void {
    clearTimeout(this.publishing);
    const byUri = new Map<string, Diagnostic[]>();
    for (const { taskId, title } of [...this.reviewed]) {
      const files = this.deps.edits.filesOf(taskId);
      if (!files?.size) {
        this.reviewed.splice(this.reviewed.findIndex((task) => task.taskId === taskId), 1);
        continue;
      }
      for (const path of files.keys()) {
        const uri = pathToFileURL(path).href;
        const diagnostics = byUri.get(uri) ?? [];
        for (const mark of this.marksOf(taskId, path)) {
          diagnostics.push({
            range: mark.range,
            severity: DiagnosticSeverity.Information,
            source: 'buckley',
            message: `changed by «${oneLine(title, 60)}» (${describeChange(mark)}): keep or undo it with the code actions "Buckley: keep this change" / "Buckley: undo this change"`,
          });
        }
        byUri.set(uri, diagnostics);
      }
    }
    this.deps.diagnostics.show('review', byUri);
  }

  /** A task's changes to a file still under review, where they are in the file now. */
  private marksOf(taskId: string, path: string): Marked[] {
    const edit = this.deps.edits.filesOf(taskId)?.get(path);
    if (!edit) return [];
    const now = this.textOf(path);
    // The user's edits since: they move the marks (or are the marks' lines, which then stay where they were).
    const users = now === undefined || now === edit.after ? [] : lineHunks(edit.after, now);
    return lineHunks(edit.after, edit.before).flatMap((reverse) => {
      let shift = 0;
      for (const user of users) {
        if (user.toLine > reverse.fromLine) break;
        shift += lineCount(user.text) - (user.toLine - user.fromLine);
      }
      const from = reverse.fromLine + shift;
      const to = Math.max(from, reverse.toLine + shift - 1);
      const range = { start: { line: from, character: 0 }, end: { line: to, character: reverse.toLine > reverse.fromLine ? lineLength(now ?? edit.after, to) : 0 } };
      return [{ reverse, range, added: reverse.toLine - reverse.fromLine, removed: lineCount(reverse.text) }];
    });
  }

  /** The file's text now: the open buffer, else the disk (bounded); undefined when unreadable. */
  private textOf(path: string): string | undefined {
    const document = this.deps.documentAt(path);
    if (document) return document.getText();
    try {
      return readFileBounded(path, MAX_READ_BYTES).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** An undone change as its agent is told: where, what it was, what the lines read again. */
function undoneHunk(shown: string, hunk: Hunk): string {
  const added = hunk.toLine - hunk.fromLine;
  const where = added > 1 ? `lines ${hunk.fromLine + 1}–${hunk.toLine}` : `line ${hunk.fromLine + 1}`;
  const before = hunk.text.replace(/\n$/, '');
  const change = describeChange({ added, removed: lineCount(hunk.text) });
  return before ? `${shown} ${where} (${change}): back to ${JSON.stringify(oneLine(before, 300))}` : `${shown} ${where} (${change}): the lines you added are gone`;
}

/** The change a code action names, found again by its first line and its lines' old text. */
function findHunk(reverse: Hunk[], ref: HunkRef): number {
  return reverse.findIndex((hunk) => hunk.fromLine === ref.line && hunk.text === ref.text);
}

function touches(mark: Range, range: Range): boolean {
  return mark.start.line <= range.end.line && range.start.line <= mark.end.line;
}

function lineLength(text: string, line: number): number {
  return (text.split('\n')[line] ?? '').length;
}
