/**
 * A turn's files: what its agent reads and writes through us (files.ts: the editor's buffers
 * first, writes approved), and what it changed on disk by itself (workspaceChanges.ts: taken into
 * the editor and the review when the turn ends). It knows which paths the turn's approvals named,
 * so a change no approval named is told as made without asking.
 */
import { realPath } from '../fileAccess.js';
import { commandsOf, pathsOf } from '../risk/assess.js';
import type { FileEdit, PermissionDecision, PermissionRequest, TurnSink } from './agents/driver.js';
import { readForAgent, reviewEdits, shownPath, workspaceOf, writeForAgent, type WritePolicy } from './files.js';
import { settleChanges, WorkspaceSnapshot, type SettledChanges } from './workspaceChanges.js';
import { codeSpan } from '../text.js';

type Decides = Omit<TurnSink, 'readFile' | 'writeFile'>;

export class TurnFiles {
  /** The sink the driver gets: the caller's, with reads and writes by the turn's policy. */
  readonly sink: TurnSink;
  private readonly policy: WritePolicy;
  private readonly approvedPaths = new Set<string>();
  private readonly writtenThroughUs = new Set<string>();
  private readonly writtenInEditor = new Set<string>();
  private commandApproved = false;
  private snapshot: WorkspaceSnapshot | undefined;

  constructor(decides: Decides, cwd: string | undefined, editor: Pick<WritePolicy, 'readOnly' | 'fromEditor' | 'toEditor' | 'changed'>) {
    const approvedEdits: FileEdit[] = [];
    const workspaceRoot = workspaceOf(cwd);
    // A tool call's changes are reviewed as changes to the whole file; once the user approved them,
    // the agent's write of one of them is not asked again.
    const permission = async (call: PermissionRequest, signal: AbortSignal): Promise<PermissionDecision> => {
      const reviewed = call.edits?.length && !call.diff ? { ...call, diff: await reviewEdits(call.edits, this.policy, signal) } : call;
      const decision = await decides.permission(reviewed, signal);
      if (decision !== 'reject') {
        if (call.edits) approvedEdits.push(...call.edits);
        for (const path of pathsOf(call, { workspaceRoot })) this.approvedPaths.add(path);
        // A command approved may change any file: what changed after it was not done unasked.
        if (call.kind === 'execute' || commandsOf(call).length > 0) this.commandApproved = true;
      }
      return decision;
    };
    this.policy = {
      workspaceRoot,
      permission,
      approvedEdits,
      diskBefore: (path) => this.snapshot?.textBefore(path),
      ...editor,
      changed: (change) => {
        // Under the name the agent gave and where it leads: the snapshot finds the change at the latter.
        const real = realPath(change.path);
        for (const written of change.inEditor ? [this.writtenThroughUs, this.writtenInEditor] : [this.writtenThroughUs]) {
          written.add(change.path);
          if (real) written.add(real);
        }
        editor.changed?.(change);
      },
    };
    this.sink = {
      ...decides,
      permission,
      readFile: (request, signal) => readForAgent(request, this.policy, signal),
      writeFile: (request, signal) => writeForAgent(request, this.policy, signal),
      wroteThroughUs: (path) => this.touched(path),
    };
  }

  /** The turn changed the file, through us or (once settled) on disk by itself. */
  touched(path: string): boolean {
    const real = realPath(path);
    return this.writtenThroughUs.has(path) || (real !== undefined && this.writtenThroughUs.has(real));
  }

  /** Notes the workspace as it is before the agent runs (for agents that write the disk themselves). */
  watch(): void {
    const root = this.policy.workspaceRoot;
    if (root) this.snapshot = WorkspaceSnapshot.take(root);
  }

  /**
   * What the agent changed on disk by itself since `watch`, taken into the editor and the review;
   * undefined when nothing was watched.
   */
  async settle(logger: { info(message: string): void; warn(message: string): void }): Promise<SettledChanges | undefined> {
    if (!this.snapshot) return undefined;
    const { toEditor, changed } = this.policy;
    try {
      return await settleChanges(this.snapshot, {
        writtenThroughUs: this.writtenThroughUs,
        writtenInEditor: this.writtenInEditor,
        approved: (path) => this.commandApproved || this.approvedPaths.has(path),
        // Each change has the editor's own deadline (the caller's, 30 s), not one for them all.
        ...(toEditor ? { toEditor: (write) => toEditor(write, new AbortController().signal) } : {}),
        changed: (change) => changed?.(change),
        logger,
      });
    } finally {
      this.snapshot.release();
    }
  }

  /** The turn is over, however it ended: what its snapshot noted is given back to the shared store. */
  close(): void {
    this.snapshot?.release();
  }
}

/**
 * The line the answer ends with when the agent did something without asking, or a change could
 * not be made in the editor: which files, which commands, what became of them. Undefined otherwise.
 */
export function afterTurnNote(agent: string, settled: SettledChanges | undefined, unaskedCalls: readonly string[], workspaceRoot: string | undefined): string | undefined {
  const shown = (path: string) => codeSpan(shownPath(path, workspaceRoot));
  const parts: string[] = [];
  const files = settled?.unasked.map(shown) ?? [];
  const done = [...(files.length ? [`changed ${files.join(', ')} (listed below, with the undo)`] : []), ...(unaskedCalls.length ? [`ran ${unaskedCalls.map((call) => `“${call}”`).join(', ')}`] : [])];
  if (done.length) parts.push(`Without asking, ${agent} ${done.join(' and ')}.`);
  for (const { path, why } of settled?.refused ?? []) parts.push(`Its change to ${shown(path)} was not made in your editor: ${why}; the disk has its text back (the change is in the log).`);
  if (settled?.notKept.length) parts.push(`No undo for ${settled.notKept.map(shown).join(', ')}: too big or not text, their earlier text was not kept.`);
  return parts.length ? parts.join(' ') : undefined;
}
