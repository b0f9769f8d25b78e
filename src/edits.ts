/**
 * An agent's change to a file, as the user reviews and the editor applies it: line hunks
 * (minimal: only the lines that changed, so the cursor and everything else stay), a +/− summary,
 * a unified diff to read, and the same change carried over a user's own edits made since —
 * refused where both touched the same lines. Diffing is jsdiff's (`diff`).
 */
import { createTwoFilesPatch, diffLines } from 'diff';

/** Replace `text[start, end)` — old lines `[fromLine, toLine)` — with `text`. */
export interface Hunk {
  fromLine: number;
  toLine: number;
  start: number;
  end: number;
  text: string;
}

/** The hunks that turn `before` into `after`, in order, with offsets into `before`. */
export function lineHunks(before: string, after: string): Hunk[] {
  const hunks: Hunk[] = [];
  let line = 0;
  let offset = 0;
  let open: Hunk | undefined;
  for (const part of diffLines(before, after)) {
    if (!part.added && !part.removed) {
      if (open) hunks.push(open);
      open = undefined;
      line += part.count ?? 0;
      offset += part.value.length;
      continue;
    }
    open ??= { fromLine: line, toLine: line, start: offset, end: offset, text: '' };
    if (part.removed) {
      line += part.count ?? 0;
      offset += part.value.length;
      open.toLine = line;
      open.end = offset;
    } else {
      open.text += part.value;
    }
  }
  if (open) hunks.push(open);
  return hunks;
}

/** Lines added and removed: what a reviewer reads first. */
export function changeSummary(before: string, after: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const part of diffLines(before, after)) {
    if (part.added) added += part.count ?? 0;
    if (part.removed) removed += part.count ?? 0;
  }
  return { added, removed };
}

/** "+3 −1" */
export function describeChange({ added, removed }: { added: number; removed: number }): string {
  return `+${added} −${removed}`;
}

/** A unified diff of the change, with a few lines of context, as `diff -u` prints it. */
export function unifiedDiff(path: string, before: string, after: string): string {
  // An absolute path is `a/tmp/x`, as git writes one, not `a//tmp/x`.
  const shown = path.replace(/^\/+/, '');
  return createTwoFilesPatch(`a/${shown}`, `b/${shown}`, before, after, undefined, undefined, { context: 3 });
}

/**
 * The hunks that carry `base → ours` over to `theirs` (base with the user's edits since), with
 * offsets into `theirs`; undefined when a hunk of ours touches lines the user changed too (the
 * same lines, or lines next to them: the user has to decide then, not us).
 */
export function carryOver(base: string, ours: string, theirs: string): Hunk[] | undefined {
  const mine = lineHunks(base, ours);
  const users = lineHunks(base, theirs);
  const carried: Hunk[] = [];
  for (const hunk of mine) {
    if (users.some((user) => hunk.fromLine <= user.toLine && user.fromLine <= hunk.toLine)) return undefined;
    // The user's hunks before this one moved it by what they added or took away.
    let lines = 0;
    let chars = 0;
    for (const user of users) {
      if (user.toLine > hunk.fromLine) break;
      lines += lineCount(user.text) - (user.toLine - user.fromLine);
      chars += user.text.length - (user.end - user.start);
    }
    carried.push({ fromLine: hunk.fromLine + lines, toLine: hunk.toLine + lines, start: hunk.start + chars, end: hunk.end + chars, text: hunk.text });
  }
  return carried;
}

/** `text` with the hunks (offsets into it, in order) applied. */
export function applyHunks(text: string, hunks: Hunk[]): string {
  let result = '';
  let at = 0;
  for (const hunk of hunks) {
    result += text.slice(at, hunk.start) + hunk.text;
    at = hunk.end;
  }
  return result + text.slice(at);
}

/** Lines in `text` (a last line without its newline counts). */
export function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count + (text.length > 0 && !text.endsWith('\n') ? 1 : 0);
}
