/**
 * What a task's events are in an ACP client's panel: `session/update` notifications — the answer
 * and the thinking in chunks, the plan whole, each tool call once and then its updates, what a
 * file became (a diff), what the turn used — and an approval in words (its risk, and why).
 * Pure: the face (face.ts) sends what these give.
 */
import type { SessionUpdate, ToolCallContent, ToolKind, ToolCallStatus, RequestPermissionRequest, PermissionOption } from '@agentclientprotocol/sdk';
import type { TaskEvent, WireToolExecution } from '../wire/contract.js';
import { codeBlock } from '../text.js';

const KINDS: ReadonlySet<string> = new Set(['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other']);
const STATUSES: ReadonlySet<string> = new Set(['pending', 'in_progress', 'completed', 'failed']);

const kindOf = (kind: string): ToolKind => (KINDS.has(kind) ? (kind as ToolKind) : 'other');
const statusOf = (status: string): ToolCallStatus => (STATUSES.has(status) ? (status as ToolCallStatus) : 'in_progress');
const text = (words: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text: words } });

/**
 * The tool calls a turn has shown, and how each was last shown: a call is announced once, then
 * updated; and the last status line shown (the same line is not shown twice running).
 */
export class ShownTools {
  private readonly shown = new Map<string, string>();
  private lastStatus = '';

  /**
   * A line of the coordinator's about the turn — queued and how many ahead, the agent silent and
   * why, taken up again on another replica, what was left out of the prompt — as a line of the
   * agent's thinking: ACP has no status line, and it must not read as the answer.
   */
  statusLine(message: string): SessionUpdate[] {
    const line = message.trim();
    if (!line || line === this.lastStatus) return [];
    this.lastStatus = line;
    return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: `${line}\n` } }];
  }

  /** The updates that show `execution` as it is now (none where nothing changed). */
  updates(execution: WireToolExecution): SessionUpdate[] {
    const now = `${execution.status}\u0000${execution.output}`;
    const before = this.shown.get(execution.id);
    if (before === now) return [];
    this.shown.set(execution.id, now);
    const output = execution.output ? [text(execution.output)] : [];
    if (before === undefined) {
      return [{ sessionUpdate: 'tool_call', toolCallId: execution.id, title: execution.tool || 'tool', kind: kindOf(execution.kind), status: statusOf(execution.status), ...(execution.input ? { rawInput: inputOf(execution.input) } : {}), ...(output.length ? { content: output } : {}) }];
    }
    return [{ sessionUpdate: 'tool_call_update', toolCallId: execution.id, status: statusOf(execution.status), ...(output.length ? { content: output } : {}) }];
  }
}

/** A call's input as the agent gave it: the wire carries it as JSON text, shown to the client as the value it was. */
function inputOf(text: string): unknown {
  if (!/^\s*[[{]/.test(text)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The updates an event of the task makes (its approval and requests are the face's to handle; its status line, statusLineOf). */
export function updatesOf(event: TaskEvent, tools: ShownTools): SessionUpdate[] {
  const updates: SessionUpdate[] = [];
  if (event.thought_delta) updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: event.thought_delta } });
  for (const execution of event.tool_executions) updates.push(...tools.updates(execution));
  if (event.plan) {
    updates.push({
      sessionUpdate: 'plan',
      entries: event.plan.entries.map((entry) => ({ content: entry.content, status: entry.status === 'completed' || entry.status === 'in_progress' ? entry.status : 'pending', priority: entry.priority === 'high' || entry.priority === 'low' ? entry.priority : 'medium' })),
    });
  }
  if (event.file_changed) {
    const change = event.file_changed;
    // What a file became, as a finished edit with its diff: the client shows it (Zed: in its review).
    updates.push({
      sessionUpdate: 'tool_call',
      toolCallId: `change-${event.sequence || Date.now()}-${change.path}`,
      title: `${change.unasked ? 'Changed without asking' : 'Changed'} ${change.path}`,
      kind: 'edit',
      status: 'completed',
      locations: [{ path: change.path }],
      content: [{ type: 'diff', path: change.path, oldText: change.before || null, newText: change.after }],
    });
  }
  if (event.usage && (event.usage.context_size || event.usage.cost)) {
    updates.push({ sessionUpdate: 'usage_update', used: event.usage.context_used, size: event.usage.context_size, ...(event.usage.cost ? { cost: { amount: event.usage.cost, currency: event.usage.currency || 'USD' } } : {}) });
  }
  return updates;
}

/** The line of an event that only says where the task is, while it runs (statusLine shows it); the others' messages are shown by what they carry. */
export function statusLineOf(event: TaskEvent): string | undefined {
  return saysOnlyStatus(event) ? event.message : undefined;
}

function saysOnlyStatus(event: TaskEvent): boolean {
  const running = event.status === 'pending' || event.status === 'in_progress';
  return running && Boolean(event.message) && !event.tool_executions.length && !event.approval && !event.file_request && !event.file_write && !event.file_changed && !event.question && !event.terminal && !event.plan && !event.thought_delta && !event.answer_delta;
}

/** The choices an approval offers: once, for the rest of the task where the coordinator batches them, or no. */
export const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject', name: 'Deny', kind: 'reject_once' },
];

/** An approval the coordinator waits for, as the client's permission request: our risk and its reasons, in words. */
export function permissionOf(sessionId: string, approval: NonNullable<TaskEvent['approval']>): RequestPermissionRequest {
  const risk = approval.risk || 'unknown risk';
  const why = approval.reason ? `${risk} — ${approval.reason}` : risk;
  const content: ToolCallContent[] = [text(why)];
  if (approval.diff) content.push(text(codeBlock(approval.diff, 'diff')));
  return {
    sessionId,
    toolCall: {
      // On the call it is about, where the agent named it (shown as a tool call already).
      toolCallId: approval.tool_call_id || approval.execution_id,
      title: `${approval.title || approval.tool} (${risk})`,
      kind: kindOf(approval.kind),
      status: 'pending',
      content,
      locations: approval.locations.map((path) => ({ path })),
      rawInput: approval.parameters,
    },
    options: PERMISSION_OPTIONS,
  };
}
