/**
 * Batches a chatty agent's updates into few TaskEvents: within an interval, answer pieces are
 * concatenated (the thinking's apart), each tool keeps only its latest state, the latest plan is
 * sent whole, and the latest progress and message win. Nothing is lost — every piece of the answer
 * and of the thinking, the last state of every tool, the last plan go out — but a flood of 100,000
 * updates costs hundreds of gRPC messages, not 100,000.
 */
import type { PlanEntry, WireToolExecution } from '../wire/contract.js';

export const BATCH_INTERVAL_MS = 50;

export class EventBatcher {
  private answer = '';
  private thinking = '';
  private latestPlan: PlanEntry[] | undefined;
  private readonly tools = new Map<string, WireToolExecution>();
  private progress: number | undefined;
  private message: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastSent = -Infinity;

  constructor(
    private readonly send: (event: Record<string, unknown>) => void,
    private readonly intervalMs = BATCH_INTERVAL_MS,
  ) {}

  text(delta: string): void {
    this.answer += delta;
    this.schedule();
  }

  tool(execution: WireToolExecution): void {
    this.tools.delete(execution.id); // re-insert: the latest change comes last
    this.tools.set(execution.id, execution);
    this.message = `${execution.tool} (${execution.status})`;
    this.schedule();
  }

  thought(delta: string): void {
    this.thinking += delta;
    this.schedule();
  }

  /** The plan, whole: its share of entries completed is the progress, its entry in progress the message. */
  plan(entries: PlanEntry[]): void {
    const done = entries.filter((entry) => entry.status === 'completed').length;
    this.latestPlan = entries;
    this.progress = entries.length ? Math.round((done / entries.length) * 100) : 0;
    this.message = entries.find((entry) => entry.status === 'in_progress')?.content ?? `${done} of ${entries.length} steps done`;
    this.schedule();
  }

  /** Sends what is pending now (before an approval or the final event, to keep the order). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.answer && !this.thinking && this.tools.size === 0 && this.message === undefined) return;
    this.lastSent = Date.now();
    this.send({
      status: 'in_progress',
      ...(this.answer ? { answer_delta: this.answer } : {}),
      ...(this.tools.size ? { tool_executions: [...this.tools.values()] } : {}),
      ...(this.progress !== undefined ? { progress: this.progress } : {}),
      ...(this.message !== undefined ? { message: this.message } : {}),
      ...(this.latestPlan ? { plan: { entries: this.latestPlan } } : {}),
      ...(this.thinking ? { thought_delta: this.thinking } : {}),
    });
    this.answer = '';
    this.thinking = '';
    this.latestPlan = undefined;
    this.tools.clear();
    this.progress = undefined;
    this.message = undefined;
  }

  private schedule(): void {
    const wait = this.lastSent + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }
}
