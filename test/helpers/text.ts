/** Locating positions by text, not by magic numbers. Positions are LSP UTF-16 code units. */
import type { Position, Range } from 'vscode-languageserver';

export function positionAt(text: string, offset: number): Position {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

/** The range of the `occurrence`-th (0-based) match of `needle` in `text`. */
export function rangeOf(text: string, needle: string, occurrence = 0): Range {
  let offset = -1;
  for (let i = 0; i <= occurrence; i++) {
    offset = text.indexOf(needle, offset + 1);
    if (offset === -1) throw new Error(`"${needle}" occurs fewer than ${occurrence + 1} times`);
  }
  return { start: positionAt(text, offset), end: positionAt(text, offset + needle.length) };
}

/** The position just inside the start of `needle`'s range, plus `delta` characters. */
export function positionOf(text: string, needle: string, delta = 0): Position {
  const { start } = rangeOf(text, needle);
  return { line: start.line, character: start.character + delta };
}

/** Whole lines from the one holding `first` through the one holding `last`. */
export function linesRange(text: string, first: string, last: string): Range {
  const start = rangeOf(text, first).start.line;
  const end = rangeOf(text, last).start.line;
  return { start: { line: start, character: 0 }, end: { line: end + 1, character: 0 } };
}
