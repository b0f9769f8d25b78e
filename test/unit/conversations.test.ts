import { describe, expect, it } from 'vitest';
import { earlierTurns, typedFollowUp, FOLLOW_UP_MARKER } from '../../src/bridge/stores/conversations.js';

const turn = (question: string, answer: string) => ({ question, answer, at: '2026-11-22T00:00:00.000Z' });

describe("a conversation's earlier turns, as the agent is sent them", () => {
  it('keeps the newest turns within the budget and says how many older ones were left out', () => {
    const turns = [turn('first?', 'a'.repeat(600)), turn('second?', 'b'.repeat(600)), turn('third?', 'c')];
    const sent = earlierTurns(turns, 1000);
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(1000);
    expect(sent).toContain('The user asked: third?');
    expect(sent).toContain('The user asked: second?');
    expect(sent).not.toContain('first?');
    expect(sent.startsWith('(1 earlier turn(s) left out: over the budget)')).toBe(true);
  });

  it('keeps the end of a newest turn too big for the budget, within it, whatever its script', () => {
    const sent = earlierTurns([turn('為什麼'.repeat(200), `${'答'.repeat(5000)}THE END`)], 2000);
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(2000);
    expect(sent).toContain('You answered (its end):');
    expect(sent.endsWith('THE END')).toBe(true);
  });

  it('is empty with no turns', () => {
    expect(earlierTurns([], 1000)).toBe('');
  });
});

describe('the question written in an answer document', () => {
  it('is what follows the last follow-up line, trimmed; nothing without one', () => {
    expect(typedFollowUp(`# Q\n\nA\n\n---\n\n${FOLLOW_UP_MARKER}\n\n  and if it is empty?\n`)).toBe('and if it is empty?');
    expect(typedFollowUp(`${FOLLOW_UP_MARKER}\n\n`)).toBeUndefined();
    expect(typedFollowUp('# Q\n\nno line here')).toBeUndefined();
  });
});
