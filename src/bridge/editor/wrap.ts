/**
 * Markdown prose wrapped for editors that do not wrap lines (Helix cuts every long paragraph at
 * the screen edge): paragraphs, list items and quotes are re-flowed at WIDTH columns with their
 * indentation or `> ` kept; code blocks, tables, headings and lines ending in a hard break are
 * left exactly as they are.
 */
import { width as cellsOf } from '../../text.js';

// 80: half of a wide terminal, where Helix and Neovim open the answer beside the code.
export const WRAP_WIDTH = 80;

const FENCE = /^\s*(```|~~~)/;
const LIST_ITEM = /^(\s*)([-*+]|\d+[.)])(\s+)/;
const QUOTE = /^(\s*>\s?)+/;
/** Lines that are not prose: headings, tables, rules, indented code, HTML. */
const VERBATIM = /^(\s*#|\s*\||\s*([-*_]\s*){3,}$|\s{4,}\S|\t|\s*<)/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Terminal cells of a piece of text: its length when it is plain ASCII (most prose, and fast), else measured grapheme by grapheme. */
function cells(text: string): number {
  return PRINTABLE_ASCII.test(text) ? text.length : cellsOf(text);
}

export function wrapMarkdown(text: string, width = WRAP_WIDTH): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const opening = FENCE.exec(line)?.[1];
    if (fence) {
      out.push(line);
      if (opening === fence) fence = undefined;
      continue;
    }
    if (opening) {
      fence = opening;
      out.push(line);
      continue;
    }
    if ((line.length <= width && cells(line) <= width) || VERBATIM.test(line) || / {2}$/.test(line)) {
      out.push(line);
      continue;
    }
    out.push(...wrapLine(line, width));
  }
  return out.join('\n');
}

/** One long prose line as several, each continuing with the indentation (or quote marks) of the first. */
function wrapLine(line: string, width: number): string[] {
  const quote = QUOTE.exec(line)?.[0] ?? '';
  const rest = line.slice(quote.length);
  const item = LIST_ITEM.exec(rest);
  const first = quote + (item ? item[0] : (/^\s*/.exec(rest)?.[0] ?? ''));
  const hanging = quote + ' '.repeat(item ? item[0].length : first.length - quote.length);
  const words = rest.slice(first.length - quote.length).split(/ +/).filter(Boolean);
  const lines: string[] = [];
  // The width so far is counted as words are added: measuring the line again each time would be
  // quadratic in its length (a 20 MB paragraph took seconds).
  let current = first;
  let currentCells = cells(first);
  let empty = true;
  for (const word of words) {
    const wordCells = cells(word);
    if (!empty && currentCells + 1 + wordCells > width) {
      lines.push(current);
      current = hanging;
      currentCells = cells(hanging);
      empty = true;
    }
    current += empty ? word : ` ${word}`;
    currentCells += (empty ? 0 : 1) + wordCells;
    empty = false;
  }
  lines.push(current);
  return lines;
}
