/**
 * Coalescing for chatty producers: `push` keeps only the latest value and sends at most one per
 * interval; `finish` sends the last value at once and stops. So an agent emitting thousands of
 * updates a second produces a bounded number of notifications, and neither the latest nor the
 * final state is ever lost. The bound is exact: in any one second (its ends included), at most
 * `1000 / intervalMs` sends — one of them kept for the final value, which therefore never waits —
 * counting sends made around the coalescer (`counted`: a progress's begin), whatever the load.
 */
export class Coalescer<T> {
  private lastSent = -Infinity;
  /** When the sends of the last second went out: never more than `1000 / intervalMs` of them. */
  private readonly sentTimes: number[] = [];
  private pending: { value: T } | undefined;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(
    private readonly send: (value: T) => void,
    private readonly intervalMs: number,
  ) {}

  /**
   * Keeps `value` as the latest, sent once `intervalMs` have passed since the last send. `urgent`
   * (a change the user must see at once: waiting for approval, the answer's first words) goes out
   * at once if fewer than `1000 / intervalMs` went out in the last second; so a producer flipping
   * its status thousands of times a second still gets no more than that many a second.
   */
  push(value: T, urgent = false): void {
    if (this.finished) return;
    this.pending = { value };
    const now = Date.now();
    const roomIn = this.roomIn(now);
    const wait = urgent ? roomIn : Math.max(this.lastSent + this.intervalMs - now, roomIn);
    if (wait <= 0) this.flush();
    else this.timer ??= setTimeout(() => this.due(), wait);
  }

  /** Sends `last` (or whatever is pending) now, in the slot kept for it; later pushes are ignored. */
  finish(last?: T): void {
    if (this.finished) return;
    if (last !== undefined) this.pending = { value: last };
    this.flush();
    this.finished = true;
  }

  /** A send made around the coalescer (a progress's begin): it counts in the second's budget. */
  counted(): void {
    this.lastSent = Date.now();
    this.sentTimes.push(this.lastSent);
  }

  /**
   * How long until one more send that is not the final one fits in the budget of every second it
   * falls in (0: now). A send a full second old still shares a closed one-second window with now.
   */
  private roomIn(now: number): number {
    while (this.sentTimes.length > 0 && this.sentTimes[0]! < now - 1000) this.sentTimes.shift();
    const allowed = 1000 / this.intervalMs - 1;
    return this.sentTimes.length < allowed ? 0 : this.sentTimes[this.sentTimes.length - allowed]! + 1001 - now;
  }

  /** The timer's turn: a timer may fire a little early by the clock, so room is checked again. */
  private due(): void {
    this.timer = undefined;
    const wait = this.roomIn(Date.now());
    if (wait > 0) this.timer = setTimeout(() => this.due(), wait);
    else this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const { value } = this.pending;
    this.pending = undefined;
    this.lastSent = Date.now();
    this.sentTimes.push(this.lastSent);
    this.send(value);
  }
}

/** At most this many notifications a second per task or progress. */
export const UPDATES_PER_SECOND = 10;
export const UPDATE_INTERVAL_MS = 1000 / UPDATES_PER_SECOND;
