/**
 * A turn's tool calls as spans of its trace (tracing.ts): each from the agent's first word of it
 * to its end (completed or failed); those still open when the turn ends end with it.
 */
import { tracer, type Span } from '../../tracing.js';
import type { WireToolExecution } from '../../wire/contract.js';

export function toolSpans(turnTraceparent: string): { note(execution: WireToolExecution): void; close(): void } {
  const open = new Map<string, Span>();
  return {
    note(execution) {
      let span = open.get(execution.id);
      if (!span) {
        span = tracer().start('buckley.tool_call', turnTraceparent, { 'buckley.tool': execution.tool, 'buckley.tool.kind': execution.kind, 'buckley.tool.id': execution.id });
        open.set(execution.id, span);
      }
      if (execution.status !== 'completed' && execution.status !== 'failed') return;
      span.set({ 'buckley.status': execution.status });
      span.end(execution.status === 'failed' ? `${execution.tool} failed` : undefined);
      open.delete(execution.id);
    },
    close() {
      for (const span of open.values()) span.end();
      open.clear();
    },
  };
}
