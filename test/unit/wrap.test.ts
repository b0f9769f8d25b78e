/** Answer documents read in editors that do not wrap: prose re-flowed, code and tables untouched. */
import { describe, expect, it } from 'vitest';
import { wrapMarkdown } from '../../src/bridge/editor/wrap.js';

const long = (words: number, word = 'lorem') => Array.from({ length: words }, (_, i) => `${word}${i}`).join(' ');
const widest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));

describe('wrapMarkdown', () => {
  it('re-flows a long paragraph at the width, losing no word', () => {
    const paragraph = long(60);
    const wrapped = wrapMarkdown(paragraph, 40);
    expect(widest(wrapped)).toBeLessThanOrEqual(40);
    expect(wrapped.split(/\s+/)).toEqual(paragraph.split(' '));
  });

  it('keeps list items and quotes hanging under their marker', () => {
    const wrapped = wrapMarkdown(`- ${long(20)}\n12. ${long(20)}\n> ${long(20)}`, 40).split('\n');
    expect(wrapped[0]).toMatch(/^- lorem0 /);
    expect(wrapped[1]).toMatch(/^ {2}lorem/);
    const numbered = wrapped.findIndex((line) => line.startsWith('12. '));
    expect(wrapped[numbered + 1]).toMatch(/^ {4}lorem/);
    const quoted = wrapped.filter((line) => line.startsWith('>'));
    expect(quoted.length).toBeGreaterThan(1);
    expect(quoted.every((line) => line.startsWith('> lorem'))).toBe(true);
  });

  it('leaves code blocks, tables, headings, indented code and hard breaks exactly as they are', () => {
    const verbatim = [
      '```ts',
      `const x = "${'x'.repeat(200)}";`,
      '```',
      `| ${long(20)} | b |`,
      `# ${long(20)}`,
      `    ${long(20)}`,
      `${long(20)}  `,
    ].join('\n');
    expect(wrapMarkdown(verbatim, 40)).toBe(verbatim);
  });

  it('keeps a word longer than the width whole, on its own line', () => {
    const url = `https://example.com/${'a'.repeat(80)}`;
    const wrapped = wrapMarkdown(`see ${url} for more`, 40).split('\n');
    expect(wrapped).toEqual(['see', url, 'for more']);
  });
});
