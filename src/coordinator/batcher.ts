/**
 * Batches a chatty agent's updates into few TaskEvents: within an interval, answer pieces are
 * concatenated, each tool keeps only its latest state, and the latest progress and message win.
 * Nothing is lost — every piece of the answer and the last state of every tool go out — but a
 * flood of 100,000 updates costs hundreds of gRPC messages, not 100,000.
 */
import type { WireToolExecution } from '../wire/contract.js';

export const BATCH_INTERVAL_MS = 50;

export class EventBatcher {
  private answer = '';
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

  step(progress: number, message: string): void {
    this.progress = progress;
    this.message = message;
    this.schedule();
  }

  /** Sends what is pending now (before an approval or the final event, to keep the order). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.answer && this.tools.size === 0 && this.message === undefined) return;
    this.lastSent = Date.now();
    this.send({
      status: 'in_progress',
      ...(this.answer ? { answer_delta: this.answer } : {}),
      ...(this.tools.size ? { tool_executions: [...this.tools.values()] } : {}),
      ...(this.progress !== undefined ? { progress: this.progress } : {}),
      ...(this.message !== undefined ? { message: this.message } : {}),
    });
    this.answer = '';
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
