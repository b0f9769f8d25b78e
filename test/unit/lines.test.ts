import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/coordinator/agents/lines.js';

function split(reads: string[], maxChars = 1_000, end = true): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), maxChars);
  for (const read of reads) splitter.add(read);
  if (end) splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('ends a line at its newline, not at the end of a read', () => {
    expect(split(['cat: /home/u/.config/gh/hosts.yml', ': Permission denied\nnext', ' line\r\n'])).toEqual(['cat: /home/u/.config/gh/hosts.yml: Permission denied', 'next line']);
  });

  it('holds an unended line until more comes, and gives it at the end of the output', () => {
    expect(split(['Error: half'], 1_000, false)).toEqual([]);
    expect(split(['Error: half', ' and the rest'])).toEqual(['Error: half and the rest']);
  });

  it('passes on a line that never ends in pieces of its bound', () => {
    expect(split(['a'.repeat(25)], 10, false)).toEqual(['a'.repeat(10), 'a'.repeat(10)]);
  });
});
