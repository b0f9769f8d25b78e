/**
 * The rules of a turn in our coordinator: an ask is read-only (low-risk reads allowed, nothing
 * else, without asking); the risk of a tool call judged in the turn's workspace; the kind the
 * editor is told; and the notes added to an answer when the agent stopped at a refusal.
 */
import type { Logger } from '../logger.js';
import { assessRisk, type Assessment } from '../risk/assess.js';
import type { PermissionDecision, PermissionRequest, TurnResult, TurnSink } from './agents/driver.js';
import { workspaceOf } from './files.js';

/** An ask is read-only: low-risk reads are allowed, anything else declined without asking. */
export function askSink(events: Omit<TurnSink, 'permission' | 'readFile' | 'writeFile'>, cwd: string | undefined, logger: Logger): Omit<TurnSink, 'readFile' | 'writeFile'> {
  return {
    ...events,
    permission: async (request: PermissionRequest): Promise<PermissionDecision> => {
      const { risk, reasons } = assessCall(request, cwd);
      const what = `${request.tool} (${request.kind})`;
      if (risk === 'low') {
        logger.info(`allowed ${what}: a low-risk read inside the workspace`);
        return 'allow_once';
      }
      logger.info(`declined ${what} without asking: an ask is read-only, and this ${reasons[0] ?? 'is not a read'} (${risk})`);
      return 'reject';
    },
  };
}

/**
 * The risk of what the call does, in the workspace of the turn. A workspace of `/` or the home
 * directory is no workspace at all: nothing would be outside it.
 */
export function assessCall(request: PermissionRequest, cwd: string | undefined): Assessment {
  return assessRisk({ kind: request.kind, input: request.input, locations: request.locations, writes: request.writes, title: request.title }, { workspaceRoot: workspaceOf(cwd) });
}

/** The kind the editor is told: an edit when the call writes, whatever the agent called it. */
export function effectiveKind(request: PermissionRequest): string {
  return request.writes.length > 0 && ['read', 'search', 'think', 'fetch', ''].includes(request.kind) ? 'edit' : request.kind;
}

/**
 * What to add to the answer of a turn the agent ended after a tool call of it was declined — as
 * cancelled without anyone cancelling it (Codex's only way to take a refusal), or without a word
 * (Claude Code's older adapter): that it stopped, and why. Undefined for any other turn.
 */
export function refusalNote(result: TurnResult, signal: AbortSignal, agent: string, readOnly: boolean): string | undefined {
  if (signal.aborted || !result.refused?.length) return undefined;
  if (result.stopReason !== 'cancelled' && result.text.trim()) return undefined;
  const what = result.refused.map((call) => `its ${call}`).join(', ');
  return `${agent} stopped when ${what} was declined${readOnly ? ': an ask is read-only (it may read the workspace, not change it or run commands); run it as a task to let it act' : ' (not approved)'}.`;
}

/** Notes after an answer, each a paragraph of its own; nothing when there are none. */
export function withNotes(answer: string, notes: (string | undefined)[]): string {
  const given = notes.filter((note): note is string => Boolean(note));
  return given.length ? `${answer.trim() ? '\n\n' : ''}${given.join('\n\n')}` : '';
}
