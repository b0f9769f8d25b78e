/**
 * Keeping a range on the same text while the document changes: how an answer stays on the code
 * it is about when the user edits above or inside it. Positions are LSP UTF-16 positions.
 */
import type { Position, Range, TextDocumentContentChangeEvent } from 'vscode-languageserver';

export function comparePositions(a: Position, b: Position): number {
  return a.line - b.line || a.character - b.character;
}

/** Where `position` ends up after `change` replaced `change.range` with its text. */
function transformPosition(position: Position, changed: Range, newEnd: Position, inside: 'start' | 'end'): Position {
  if (comparePositions(position, changed.start) < 0) return position;
  if (comparePositions(position, changed.end) < 0) return inside === 'start' ? changed.start : newEnd;
  if (position.line === changed.end.line) {
    return { line: newEnd.line, character: newEnd.character + (position.character - changed.end.character) };
  }
  return { line: position.line + (newEnd.line - changed.end.line), character: position.character };
}

/**
 * The range after an incremental change, or undefined when the change replaced the whole
 * document (nothing says where the text went).
 */
export function shiftRange(range: Range, change: TextDocumentContentChangeEvent): Range | undefined {
  if (!('range' in change)) return undefined;
  const lines = change.text.split(/\r\n|\r|\n/);
  const last = lines[lines.length - 1] ?? '';
  const newEnd: Position =
    lines.length === 1
      ? { line: change.range.start.line, character: change.range.start.character + last.length }
      : { line: change.range.start.line + lines.length - 1, character: last.length };
  return {
    start: transformPosition(range.start, change.range, newEnd, 'start'),
    end: transformPosition(range.end, change.range, newEnd, 'end'),
  };
}
