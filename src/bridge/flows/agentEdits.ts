/**
 * An agent's approved write to a file open in the editor becomes an edit of its buffer, made by
 * the editor (`workspace/applyEdit`): only the lines that change, so undo works and the cursor and
 * the rest of the buffer stay; the user's unsaved edits made since the approval are kept, and the
 * change is refused where they touch the same lines. The disk gets it when the user saves.
 */
import { mkdir, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type TextEdit, type WorkspaceEdit } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { applyHunks, carryOver, lineHunks, type Hunk } from '../../edits.js';
import { readTextIfThere, realPath, shortened, writeText } from '../../fileAccess.js';
import { isInside } from '../../risk/paths.js';
import { MAX_READ_BYTES } from '../../wire/contract.js';
import type { Logger } from '../../logger.js';
import type { Features } from '../capabilities.js';
import { applyEdit, showDocument, type EditorClient } from '../editor/client.js';

/** How long the editor may take to apply an edit (the coordinator waits 30 s for the outcome). */
const APPLY_EDIT_TIMEOUT_MS = 20_000;
/** How long the editor may take to open the change under review. */
const SHOW_CHANGE_TIMEOUT_MS = 5_000;

/** How many diffs of changes under review stay in the state directory. */
const KEPT_CHANGES = 50;

export interface AgentWrite {
  path: string;
  /** What the user approved the change against, and the file's new text. */
  base: string;
  content: string;
}

/** `open: false`: not open here (or the editor cannot edit it): the disk gets the write. */
export interface WriteOutcome {
  open: boolean;
  applied: boolean;
  message: string;
}

export class AgentEdits {
  constructor(
    private readonly editor: EditorClient,
    private readonly documentAt: (path: string) => TextDocument | undefined,
    private readonly features: () => Features,
    private readonly logger: Logger,
    /** Where the diffs of changes under review are written (the state directory's `changes/`). */
    private readonly changesDirectory: string,
  ) {}

  /**
   * Opens the change under review as a unified diff, where the editor opens documents (Neovim,
   * Helix and Emacs colour it); elsewhere the prompt's +/− summary and the log have it.
   */
  showChange(executionId: string, diff: string): void {
    this.logger.info(`the change under review (${executionId}):\n${diff}`);
    if (!this.features().showDocument) return;
    const path = join(this.changesDirectory, `${executionId}.diff`);
    // A regular file only: a pipe or a link put in its place is refused, not waited on or followed.
    mkdir(this.changesDirectory, { recursive: true, mode: 0o700 })
      .then(() => writeText(join(realPath(this.changesDirectory) ?? this.changesDirectory, `${executionId}.diff`), diff, 0o600))
      .then(() => showDocument(this.editor, { uri: pathToFileURL(path).href, takeFocus: false }, SHOW_CHANGE_TIMEOUT_MS))
      .then(() => this.forgetOldChanges())
      .catch((error: Error) => this.logger.debug(`could not show the change ${executionId}: ${error.message}`));
  }

  /** The diffs shown for review are kept for a while, not for ever: the newest KEPT_CHANGES. */
  private async forgetOldChanges(): Promise<void> {
    const names = (await readdir(this.changesDirectory)).filter((name) => name.endsWith('.diff'));
    if (names.length <= KEPT_CHANGES) return;
    const dated = await Promise.all(names.map(async (name) => ({ name, at: (await stat(join(this.changesDirectory, name))).mtimeMs })));
    dated.sort((a, b) => b.at - a.at);
    await Promise.all(dated.slice(KEPT_CHANGES).map(({ name }) => unlink(join(this.changesDirectory, name)).catch(() => undefined)));
  }

  async apply(write: AgentWrite): Promise<WriteOutcome> {
    const document = this.documentAt(write.path);
    // An editor that cannot apply edits gets it on disk — if the disk holds what the buffer does (the coordinator checks).
    if (!document || !this.features().applyEdit) return { open: false, applied: false, message: '' };
    const current = document.getText();
    const hunks = current === write.base ? lineHunks(write.base, write.content) : carryOver(write.base, write.content, current);
    if (!hunks) {
      return { open: true, applied: false, message: 'the user changed the same lines in the editor since approving it; the buffer was left as the user has it' };
    }
    if (hunks.length === 0) return { open: true, applied: true, message: '' };
    const edits: TextEdit[] = hunks.map((hunk: Hunk) => ({ range: { start: document.positionAt(hunk.start), end: document.positionAt(hunk.end) }, newText: hunk.text }));
    // Versioned where the editor takes it: an edit made for an older buffer is refused, not misplaced.
    const edit: WorkspaceEdit = this.features().documentChanges
      ? { documentChanges: [{ textDocument: { uri: document.uri, version: document.version }, edits }] }
      : { changes: { [document.uri]: edits } };
    const name = write.path.split('/').pop();
    try {
      // Within the coordinator's wait for it (FILE_WRITE_TIMEOUT_MS): a late edit would land after the agent was told it failed.
      const result = await applyEdit(this.editor, { label: `Buckley: the agent's change to ${name}`, edit }, APPLY_EDIT_TIMEOUT_MS);
      if (!result.applied) return { open: true, applied: false, message: `the editor did not apply it${result.failureReason ? `: ${result.failureReason}` : ''}` };
    } catch (error) {
      return { open: true, applied: false, message: `the editor did not apply it: ${(error as Error).message}` };
    }
    this.logger.info(`changed ${write.path} in the editor (${hunks.length} place${hunks.length === 1 ? '' : 's'}); the disk gets it when it is saved`);
    return { open: true, applied: true, message: '' };
  }

  /**
   * Takes an agent's change back: `after` becomes `before` again in the buffer (an undoable edit)
   * or on disk, carried over what the user changed since; refused where they changed the same
   * lines. A file the agent created is removed again, if nobody has it open. On disk, only the file
   * itself, or where a link leads inside the workspace: a link put in its place since that leads
   * out of it (`workspaceRoot`) is not followed.
   */
  async revert(change: { path: string; before: string; after: string }, workspaceRoot: string | undefined): Promise<{ reverted: boolean; message: string }> {
    const document = this.documentAt(change.path);
    if (document && this.features().applyEdit) {
      const outcome = await this.apply({ path: change.path, base: change.after, content: change.before });
      return { reverted: outcome.applied, message: outcome.message.replace('since approving it', 'since') };
    }
    const real = realPath(change.path);
    if (!real || (real !== change.path && !isInside(real, workspaceRoot))) {
      return { reverted: false, message: `it leads through a link to ${real ? shortened(real) : 'a loop of links'}, outside the workspace, now; nothing was written there` };
    }
    try {
      return await this.revertOnDisk(real, change, Boolean(document));
    } catch (error) {
      return { reverted: false, message: (error as Error).message };
    }
  }

  private async revertOnDisk(real: string, change: { before: string; after: string }, open: boolean): Promise<{ reverted: boolean; message: string }> {
    const current = await readTextIfThere(real, { maxBytes: MAX_READ_BYTES });
    if (current === undefined) {
      // Deleted by the task (its text after is none): put back.
      if (change.after !== '' || change.before === '') return { reverted: change.before === '', message: change.before === '' ? '' : 'it is gone from disk' };
      await writeText(real, change.before);
      return { reverted: true, message: '' };
    }
    const hunks = current === change.after ? lineHunks(change.after, change.before) : carryOver(change.after, change.before, current);
    if (!hunks) return { reverted: false, message: 'the same lines were changed since' };
    const restored = applyHunks(current, hunks);
    if (restored === '' && change.before === '' && !open) await unlink(real);
    else await writeText(real, restored);
    return { reverted: true, message: '' };
  }
}
