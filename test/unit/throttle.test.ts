/**
 * The coalescer in front of every progress notification: the latest value always arrives, a
 * change the user must see goes out at once, and nothing — urgent changes included — makes more
 * than 10 a second.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Coalescer, UPDATE_INTERVAL_MS } from '../../src/bridge/editor/throttle.js';

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

/** The most sends within any one second. */
function busiestSecond(times: number[]): number {
  return Math.max(0, ...times.map((start) => times.filter((time) => time >= start && time < start + 1000).length));
}

describe('Coalescer', () => {
  it('an urgent change goes out at once when the last second has room', () => {
    const sent: string[] = [];
    const coalescer = new Coalescer<string>((value) => sent.push(value), UPDATE_INTERVAL_MS);
    coalescer.push('working');
    vi.advanceTimersByTime(10);
    coalescer.push('waiting for approval', true);
    expect(sent).toEqual(['working', 'waiting for approval']);
  });

  it('2,000 urgent changes a second (an agent flipping between waiting and working): at most 10 a second, the latest last', () => {
    const times: number[] = [];
    const sent: number[] = [];
    const coalescer = new Coalescer<number>((value) => {
      sent.push(value);
      times.push(Date.now());
    }, UPDATE_INTERVAL_MS);
    for (let i = 1; i <= 6_000; i++) {
      coalescer.push(i, true);
      if (i % 2 === 0) vi.advanceTimersByTime(1);
    }
    vi.advanceTimersByTime(2_000);
    expect(busiestSecond(times)).toBeLessThanOrEqual(10);
    expect(sent.at(-1)).toBe(6_000);
  });

  it('the final value goes out at once, and nothing after it', () => {
    const sent: string[] = [];
    const coalescer = new Coalescer<string>((value) => sent.push(value), UPDATE_INTERVAL_MS);
    coalescer.push('one');
    coalescer.push('two');
    coalescer.finish('done');
    coalescer.push('late', true);
    vi.advanceTimersByTime(1_000);
    expect(sent).toEqual(['one', 'done']);
  });
});
