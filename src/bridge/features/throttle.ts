/**
 * Coalescing for chatty producers: `push` keeps only the latest value and sends at most one per
 * interval; `finish` sends the last value at once and stops. So an agent emitting thousands of
 * updates a second produces a bounded number of notifications, and neither the latest nor the
 * final state is ever lost.
 */
export class Coalescer<T> {
  private lastSent = -Infinity;
  private pending: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly send: (value: T) => void,
    private readonly intervalMs: number,
  ) {}

  /**
   * Keeps `value` as the latest, sent at once when the interval since the last send has passed,
   * else at its end. Nothing jumps the interval, a change of status included: the bound holds
   * whatever the producer does (an agent asking 1,000 permissions flips its task's status 2,000 times).
   */
  push(value: T): void {
    if (this.finished) return;
    this.pending = { value };
    const wait = this.lastSent + this.intervalMs - Date.now();
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), wait);
  }

  /** Sends `last` (or whatever is pending) now; later pushes are ignored. */
  finish(last?: T): void {
    if (this.finished) return;
    if (last !== undefined) this.pending = { value: last };
    this.flush();
    this.finished = true;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const { value } = this.pending;
    this.pending = undefined;
    this.lastSent = Date.now();
    this.send(value);
  }
}

/** At most this many notifications a second per task or progress. */
export const UPDATES_PER_SECOND = 10;
export const UPDATE_INTERVAL_MS = 1000 / UPDATES_PER_SECOND;
