/**
 * The rules of a turn in our coordinator: an ask is read-only (low-risk reads allowed, nothing
 * else, without asking); the risk of a tool call judged in the turn's workspace; the kind the
 * editor is told; and the notes added to an answer when the agent stopped at a refusal.
 */
import type { Logger } from '../logger.js';
import { assessRisk, type Assessment } from '../risk/assess.js';
import type { PermissionDecision, PermissionRequest, TurnResult, TurnSink } from './agents/driver.js';
import { workspaceOf } from './files.js';
import { EDITOR_MCP_NAME } from './agents/editorMcpNames.js';
import { EDITOR_TOOLS } from './agents/editorTools.js';

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
  // Our editor tools only read, and what read_file reads is judged where it is read, as the
  // agent's fs/read_text_file is (outside the workspace or a secret: refused in an ask). Agents
  // name them their own way: mcp__buckley-editor__read_file, "read_file (buckley-editor MCP Server)", …
  if (isEditorToolCall(request)) return { risk: 'low', reasons: [] };
  return assessRisk({ kind: request.kind, input: request.input, locations: request.locations, writes: request.writes, title: request.title }, { workspaceRoot: workspaceOf(cwd) });
}

const EDITOR_SERVER = new RegExp(`(^|[^a-z0-9])${EDITOR_MCP_NAME.replace('-', '[-_]')}([^a-z0-9]|$)`, 'i');
const EDITOR_TOOL = new RegExp(`(^|[^a-z0-9])(${EDITOR_TOOLS.map((tool) => tool.name).join('|')})([^a-z0-9]|$)`);
/** Only what our tools take: a call with more in it is judged as the agent says it is. */
const EDITOR_TOOL_INPUT = new Set(['path', 'line', 'limit']);

function isEditorToolCall(request: PermissionRequest): boolean {
  const input = request.input && typeof request.input === 'object' ? Object.keys(request.input) : [];
  const named = `${request.tool} ${request.title}`;
  return request.writes.length === 0 && input.every((key) => EDITOR_TOOL_INPUT.has(key)) && EDITOR_SERVER.test(named) && EDITOR_TOOL.test(named.replace(EDITOR_SERVER, ' '));
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
