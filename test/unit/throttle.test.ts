/**
 * The coalescer in front of every progress notification: the latest value always arrives, a
 * change the user must see goes out at once, and nothing — urgent changes included — makes more
 * than 10 a second.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Coalescer, UPDATE_INTERVAL_MS } from '../../src/bridge/editor/throttle.js';
import { ProgressFactory } from '../../src/bridge/editor/progress.js';
import { RootLogger } from '../../src/logger.js';
import { FakeEditor } from '../helpers/fakeEditor.js';

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

/** The most sends within any one second, its ends included. */
function busiestSecond(times: number[]): number {
  return Math.max(0, ...times.map((start) => times.filter((time) => time >= start && time <= start + 1000).length));
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

  it('keeps the bound with the final value and a send made around it counted: never 11, and the final never waits', () => {
    const times: number[] = [];
    const sent: string[] = [];
    const coalescer = new Coalescer<string>((value) => {
      sent.push(value);
      times.push(Date.now());
    }, UPDATE_INTERVAL_MS);
    times.push(Date.now()); // a progress's begin, sent around the coalescer
    coalescer.counted();
    for (let i = 1; i <= 3_000; i++) {
      coalescer.push(`step ${i}`, i % 2 === 0);
      vi.advanceTimersByTime(i % 3 === 0 ? 1 : 0);
    }
    const finishedAt = Date.now();
    coalescer.finish('done');
    expect(sent.at(-1)).toBe('done');
    expect(times.at(-1)).toBe(finishedAt);
    expect(busiestSecond(times)).toBeLessThanOrEqual(10);
  });
});

describe("a progress's notifications", () => {
  it('stay within 10 in any second, begin and end included, however fast its reports come', async () => {
    const editor = new FakeEditor();
    const factory = new ProgressFactory(editor, new RootLogger('error', () => undefined));
    const progress = factory.begin({ title: 'Refactor', kind: 'task', clientToken: 'client-token', workDoneProgress: true });
    for (let i = 1; i <= 1_000; i++) {
      progress.report(`Waiting for your approval (${i} waiting)`);
      if (i % 5 === 0) progress.writing(`words ${i}`);
      vi.advanceTimersByTime(1);
    }
    // One second after the begin, its ends included.
    progress.done('Done');
    const sends = editor.recorded.filter((entry) => entry.kind === 'progress');
    expect((sends.at(-1)!.params as { value: { kind: string } }).value.kind).toBe('end');
    expect(sends.length).toBeLessThanOrEqual(10);
  });
});
