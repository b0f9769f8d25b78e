/**
 * What an ACP `session/update` means for the turn running on its session: the agent's words (its
 * successive messages as paragraphs), its tool calls (as the progress shows them; those that acted
 * unasked noted), its plan, its thinking, what the turn cost.
 */
import type { WireToolExecution } from '../../wire/contract.js';
import { oneLine } from '../../text.js';
import { describeValue, rememberCall, toolKind, type SessionUpdate } from './acpMessages.js';
import type { ActiveTurn } from './acpSessions.js';

/** Kinds of tool call that change or run something: done without asking, they are named. */
const ACTS = new Set(['execute', 'edit', 'delete', 'move']);

/** Applies `update` to `turn`; `terminalOutput` is what the agent's terminals (by id) printed. */
export function applyTurnUpdate(turn: ActiveTurn, update: SessionUpdate['update'], terminalOutput: (ids: string[]) => string | undefined): void {
    switch (update.sessionUpdate) {
      case 'agent_message_chunk': {
        if (update.content.type !== 'text' || !update.content.text) break;
        // Successive turns of the agent's text, with tool calls between them, are paragraphs.
        const separator = turn.textInterrupted && turn.text && !turn.text.endsWith('\n\n') ? (turn.text.endsWith('\n') ? '\n' : '\n\n') : '';
        turn.textInterrupted = false;
        turn.text += separator + update.content.text;
        turn.sink.text(separator + update.content.text);
        break;
      }
      case 'tool_call':
      case 'tool_call_update': {
        const previous = turn.tools.get(update.toolCallId);
        // A new tool call ends the agent's message: its next words are a message of their own.
        if (!previous) turn.textInterrupted = true;
        const facts = rememberCall(turn.calls, update);
        const execution: WireToolExecution = {
          id: update.toolCallId,
          tool: update.title ?? previous?.tool ?? update.kind ?? 'tool',
          status: update.status ?? previous?.status ?? 'pending',
          kind: update.kind ? toolKind(update.kind) : (previous?.kind ?? 'other'),
          input: update.rawInput !== undefined ? describeValue(update.rawInput) : (previous?.input ?? ''),
          output: update.rawOutput !== undefined ? describeValue(update.rawOutput) : (terminalOutput(facts.terminals) ?? previous?.output ?? ''),
        };
        turn.tools.set(update.toolCallId, execution);
        // Done without asking: a command run or a file changed is named to the user (server.ts).
        if (execution.status === 'completed' && !turn.asked.has(update.toolCallId) && ACTS.has(facts.kind ?? '')) turn.unasked.set(update.toolCallId, oneLine(execution.tool, 120));
        turn.sink.tool(execution);
        // An agent that keeps its plan as a to-do tool (opencode's and Kilo's todowrite): its list is the plan.
        const todos = update.rawInput !== undefined ? todoPlan(update.rawInput) : undefined;
        if (todos) turn.sink.plan(todos);
        break;
      }
      case 'plan':
        turn.sink.plan(update.entries.map((entry) => ({ content: entry.content, status: entry.status, priority: entry.priority ?? '' })));
        break;
      case 'agent_thought_chunk':
        turn.textInterrupted = true;
        if (update.content.type === 'text' && update.content.text) turn.sink.thought(update.content.text);
        break;
      case 'usage_update':
        // The latest says it all: the context in use now, the turn's cost so far.
        turn.usage = { ...turn.usage, cost: update.cost?.amount ?? 0, currency: update.cost?.currency ?? '', context_used: update.used, context_size: update.size, input_tokens: turn.usage?.input_tokens ?? 0, output_tokens: turn.usage?.output_tokens ?? 0 };
        break;
      default:
        break;
    }
}

const TODO_STATUSES = new Set(['pending', 'in_progress', 'completed']);

/** A to-do tool's input (`{todos: [{content, status, priority}]}`; Gemini CLI's items have a `description`) as the plan; undefined for any other input. */
function todoPlan(input: unknown): { content: string; status: string; priority: string }[] | undefined {
  const todos = (input as { todos?: unknown } | null)?.todos;
  if (!Array.isArray(todos) || todos.length === 0) return undefined;
  const entries = todos.map((todo: { content?: unknown; description?: unknown; status?: unknown; priority?: unknown } | null) => ({ content: todo?.content ?? todo?.description, status: todo?.status, priority: todo?.priority }));
  if (!entries.every((entry) => typeof entry.content === 'string' && typeof entry.status === 'string')) return undefined;
  // One dropped (opencode's `cancelled`) is no step to do.
  return entries.filter((entry) => TODO_STATUSES.has(entry.status as string)).map((entry) => ({ content: entry.content as string, status: entry.status as string, priority: typeof entry.priority === 'string' ? entry.priority : '' }));
}
