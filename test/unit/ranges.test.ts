import { describe, expect, it } from 'vitest';
import { shiftRange } from '../../src/bridge/editor/ranges.js';

const at = (line: number, character: number) => ({ line, character });
const range = (a: [number, number], b: [number, number]) => ({ start: at(...a), end: at(...b) });
const asked = range([10, 4], [12, 8]);

describe('shiftRange keeps an answer on its code', () => {
  it.each([
    ['a line inserted above moves it down', { range: range([2, 0], [2, 0]), text: 'new line\n' }, range([11, 4], [13, 8])],
    ['two lines deleted above move it up', { range: range([2, 0], [4, 0]), text: '' }, range([8, 4], [10, 8])],
    ['typing before it on its first line shifts the start column', { range: range([10, 0], [10, 0]), text: '🚀 ' }, range([10, 7], [12, 8])],
    ['an edit after it changes nothing', { range: range([13, 0], [14, 0]), text: 'x' }, asked],
    ['an edit on its last line after the end changes nothing', { range: range([12, 9], [12, 9]), text: 'x' }, asked],
    ['an edit inside it grows it', { range: range([11, 0], [11, 0]), text: 'a\nb\n' }, range([10, 4], [14, 8])],
    ['replacing across its start keeps it from the replacement on', { range: range([9, 0], [10, 6]), text: 'z' }, range([9, 0], [11, 8])],
  ])('%s', (_name, change, expected) => {
    expect(shiftRange(asked, change)).toEqual(expected);
  });

  it('loses the range when the whole document is replaced', () => {
    expect(shiftRange(asked, { text: 'everything new' })).toBeUndefined();
  });
});
