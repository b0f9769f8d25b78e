/**
 * How an approval is put to the user: the prompt's text (what will run, how risky, who asks; the
 * change as a diff where the prompt renders markdown), and the one-line messages — what the user
 * must do and the call's key facts first (`run \`npm test\``, `edit package.json`), the agent's own
 * words after them, cut at a word boundary where the line is full.
 */
import { basename } from 'node:path';
import { describeChange } from '../../edits.js';
import { codeBlock, codeSpan, oneLine } from '../../text.js';
import type { ToolApprovalRequest } from '../protocol.js';
import type { WireApproval } from './approvals.js';

/** Parameters that name the file a call touches, as agents spell them. */
const FILE_PARAMETERS = ['path', 'file_path', 'filePath', 'file', 'filename', 'abs_path', 'target_file', 'notebook_path'];
/** Kinds of call as a verb before the file it touches. */
const VERBS: Record<string, string> = { read: 'read', edit: 'edit', delete: 'delete', move: 'move', search: 'search', fetch: 'fetch' };

/**
 * The call in a few words of ours, with its key facts — "run `npm test`", "edit package.json" —
 * or undefined when it shows none (then the agent's name for it says what it is).
 */
export function subjectOf(approval: Pick<WireApproval, 'kind' | 'locations' | 'parameters'>): string | undefined {
  const command = approval.parameters.command;
  if (command) return `run ${codeSpan(oneLine(command, 40))}`;
  const file = approval.locations[0] ?? FILE_PARAMETERS.map((key) => approval.parameters[key]).find((value) => value);
  if (!file) return undefined;
  return `${VERBS[approval.kind] ?? 'use'} ${oneLine(basename(file) || file, 40)}`;
}

/**
 * What a one-line message names: the key facts first, then the agent's words (which a full line
 * cuts) — or the agent's words alone where they begin with those facts ("Edit config.json").
 */
export function named(request: Pick<ToolApprovalRequest, 'tool' | 'subject'>): string {
  const plain = (text: string) => text.replaceAll('`', '').replace(/\s+/g, ' ').toLowerCase();
  if (!request.subject || plain(request.tool).startsWith(plain(request.subject))) return request.tool;
  return `${request.subject}: ${request.tool}`;
}

/** Lines of a diff shown in a prompt; the rest is in the log. */
const PROMPT_DIFF_LINES = 60;

/** A unified diff as a markdown block, cut to PROMPT_DIFF_LINES lines (saying so). */
export function diffBlock(diff: string): string {
  const lines = diff.split('\n').filter((line) => !/^={3,}$/.test(line));
  const shown = lines.slice(0, PROMPT_DIFF_LINES);
  return `${codeBlock(shown.join('\n'), 'diff')}${lines.length > shown.length ? `\n(${lines.length - shown.length} more lines in the log)` : ''}`;
}

/**
 * What will run, how risky it is and who asks, on one line. The command is shown whole (its line
 * breaks as ⏎), so what the user approves is exactly what runs; other parameters are shortened.
 */
export function describeRequest(request: ToolApprovalRequest): string {
  const command = request.parameters.command;
  // A change says how big it is, whoever shows it (a write through us, or a tool call's diff).
  const size = request.change && !/\(\+\d+ −\d+\)/.test(`${request.tool} ${request.title ?? ''}`) ? ` (${describeChange({ added: request.change.linesAdded, removed: request.change.linesRemoved })})` : '';
  const what = typeof command === 'string' && command ? `run ${codeSpan(command.replace(/\r?\n/g, ' ⏎ '))}` : `use ${request.tool}${size}`;
  const parameters = Object.entries(request.parameters)
    .filter(([key]) => key !== 'command')
    .map(([key, value]) => `${key}=${oneLine(String(value), 80)}`)
    .join(', ');
  const position = (request.waiting ?? 1) > 1 ? ` (1 of ${request.waiting!.toLocaleString('en')})` : '';
  return `Buckley${position}: ${request.agent.id} wants to ${what} (risk: ${request.risk}${request.reason ? ` — ${oneLine(request.reason, 120)}` : ''}).${request.title && request.title !== request.tool ? ` ${request.title}.` : ''}${parameters ? ` Parameters: ${parameters}.` : ''}`;
}
