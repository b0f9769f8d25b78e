/**
 * What one message to the editor carries of an answer: the ask's result at most a megabyte (the
 * start, and where the rest is), a partial result's piece at most 64 KB — never half a character.
 */
import { describe, expect, it } from 'vitest';
import { piecesOf, resultAnswer } from '../../src/bridge/flows/ask.js';

describe("an answer in the editor's messages", () => {
  it('leaves an answer of up to a megabyte whole', () => {
    const answer = 'word '.repeat(200_000);
    expect(resultAnswer(answer)).toBe(answer);
  });

  it('cuts a longer one at a line, saying how much more there is and where', () => {
    const answer = `${'a line of the answer\n'.repeat(100_000)}The end.`;
    const result = resultAnswer(answer);
    const more = /\n\n… ([\d,]+) more characters: the whole answer is in its answer document \(buckley\.answers\.directory\)$/.exec(result)!;
    const start = result.slice(0, result.length - more[0].length);
    expect(start.length).toBeLessThanOrEqual(1024 * 1024);
    expect(answer.startsWith(start)).toBe(true);
    expect(start.endsWith('a line of the answer')).toBe(true);
    expect(start.length + Number(more[1]!.replaceAll(',', ''))).toBe(answer.length);
  });

  it('sends a huge delta in pieces of at most 64 KB that join to it, never splitting a surrogate pair', () => {
    const delta = `${'x'.repeat(64 * 1024 - 1)}😀${'y'.repeat(200_000)}`;
    const pieces = piecesOf(delta);
    expect(pieces.join('')).toBe(delta);
    expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(64 * 1024);
    for (const piece of pieces) expect(piece.isWellFormed()).toBe(true);
    expect(piecesOf('short')).toEqual(['short']);
  });
});
