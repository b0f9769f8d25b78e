import { describe, expect, it } from 'vitest';
import { applyHunks, carryOver, changeSummary, describeChange, lineHunks, unifiedDiff } from '../../src/edits.js';

const base = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n';

describe('an agent change as hunks', () => {
  it('touches only the lines that changed, and applying them gives the new text', () => {
    const after = base.replace('three\n', 'THREE\n').replace('six\n', 'six\nsix and a half\n');
    const hunks = lineHunks(base, after);
    expect(hunks).toEqual([
      { fromLine: 2, toLine: 3, start: base.indexOf('three'), end: base.indexOf('four'), text: 'THREE\n' },
      { fromLine: 6, toLine: 6, start: base.indexOf('seven'), end: base.indexOf('seven'), text: 'six and a half\n' },
    ]);
    expect(applyHunks(base, hunks)).toBe(after);
    expect(changeSummary(base, after)).toEqual({ added: 2, removed: 1 });
    expect(describeChange(changeSummary(base, after))).toBe('+2 −1');
  });

  it('handles a file without a final newline, a new file and an emptied one', () => {
    for (const [before, after] of [
      ['a\nb', 'a\nc'],
      ['', 'new\nfile\n'],
      ['gone\n', ''],
    ] as const) {
      expect(applyHunks(before, lineHunks(before, after))).toBe(after);
    }
  });

  it('reads as a unified diff', () => {
    const diff = unifiedDiff('src/x.ts', base, base.replace('two', 'TWO'));
    expect(diff).toContain('--- a/src/x.ts');
    expect(diff).toContain('+++ b/src/x.ts');
    expect(diff).toContain('-two\n+TWO');
  });
});

describe('carrying a change over the user\'s edits', () => {
  const ours = base.replace('six\n', 'SIX\n');
  it('moves it past lines the user added or removed elsewhere', () => {
    const theirs = `zero\n${base.replace('two\n', '')}`;
    const hunks = carryOver(base, ours, theirs)!;
    expect(applyHunks(theirs, hunks)).toBe(`zero\n${base.replace('two\n', '').replace('six\n', 'SIX\n')}`);
  });

  it('refuses where the user changed the same lines, or the lines next to them', () => {
    expect(carryOver(base, ours, base.replace('six\n', 'six!\n'))).toBeUndefined();
    expect(carryOver(base, ours, base.replace('seven\n', 'seven!\n'))).toBeUndefined();
    expect(carryOver(base, ours, base.replace('one\n', 'one!\n'))).toEqual([{ fromLine: 5, toLine: 6, start: base.indexOf('six') + 1, end: base.indexOf('seven') + 1, text: 'SIX\n' }]);
  });
});
