/**
 * Builds the `EditorContext` sent with an ask: the active document, the selection and its
 * text, and related open documents, within a byte budget (UTF-8 bytes, as sent on the wire).
 * Beyond the budget it keeps the selection and its surroundings and says what was left out.
 * Positions are LSP UTF-16 code units; a position inside a surrogate pair is widened so no
 * character is cut in half.
 */
import type { Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { BUDGET_KEY, type DocumentSnapshot, type EditorContext } from '../../wire/contract.js';
import { isHighSurrogate, isLowSurrogate, utf8Length, utf8Prefix, utf8Suffix } from '../../text.js';
import { shownName } from '../../uri.js';

export interface ContextRequest {
  /** Bytes of the prompt that are not context (the question, the instructions): they count too. */
  reservedBytes?: number;
  /** The document asked about, if any. */
  active?: TextDocument;
  selection?: Range;
  /** Selected text the client sent without a document (e.g. Helix's `%{selection}`). */
  selectedText?: string;
  /** Other documents the editor has open, most relevant first. */
  related: TextDocument[];
  workspaceRoots: string[];
  maxBytes: number;
}

export interface BuiltContext {
  context: EditorContext;
  /** Bytes of document text and selection included. */
  bytes: number;
  /** What was cut or left out, in words; empty when everything fit. */
  leftOut: string[];
}

/**
 * What a document costs in the prompt besides its text: its path, a heading and a code fence
 * (see wire/prompt.ts). Counted generously, so what the agent receives stays within the budget.
 */
export const DOCUMENT_OVERHEAD_BYTES = 64;
/** Kept for the note saying what was left out, which is itself sent. */
const LEFT_OUT_NOTE_BYTES = 1024;
/** Left-out documents named in the note; the rest are counted. */
const NAMED_LEFT_OUT = 10;

/** Offsets of `range` in `doc`, widened so neither end falls inside a surrogate pair. */
export function rangeOffsets(doc: TextDocument, range: Range): { start: number; end: number } {
  const text = doc.getText();
  let start = doc.offsetAt(range.start);
  let end = doc.offsetAt(range.end);
  if (end < start) [start, end] = [end, start];
  if (start > 0 && isLowSurrogate(text.charCodeAt(start)) && isHighSurrogate(text.charCodeAt(start - 1))) start -= 1;
  if (end > 0 && end < text.length && isLowSurrogate(text.charCodeAt(end)) && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
  return { start, end };
}

/** The range as the document really has it: clamped to the document, surrogate pairs whole. */
export function normalizeRange(doc: TextDocument, range: Range): Range {
  const { start, end } = rangeOffsets(doc, range);
  return { start: doc.positionAt(start), end: doc.positionAt(end) };
}

function workspaceRootOf(uri: string, roots: string[]): string {
  return roots.filter((root) => uri.startsWith(root.endsWith('/') ? root : `${root}/`)).sort((a, b) => b.length - a.length)[0] ?? '';
}

function snapshot(doc: TextDocument, content: string, roots: string[], metadata: Record<string, string> = {}): DocumentSnapshot {
  return {
    uri: doc.uri,
    language_id: doc.languageId,
    content,
    version: doc.version,
    workspace_root: workspaceRootOf(doc.uri, roots),
    metadata,
  };
}

export function buildContext(request: ContextRequest): BuiltContext {
  const { active, maxBytes } = request;
  const leftOut: string[] = [];
  const metadata: Record<string, string> = {};
  // Room is kept for the note saying what was left out (it is sent too); the rest is for text.
  const noteRoom = Math.min(LEFT_OUT_NOTE_BYTES, Math.floor(maxBytes / 8));
  let remaining = maxBytes - (request.reservedBytes ?? 0) - noteRoom;
  // The headings of the selection and of the file are paid for first: they are sent whatever fits.
  const heading = DOCUMENT_OVERHEAD_BYTES + utf8Length(active?.uri ?? '');
  if (active) remaining -= heading;

  let document: DocumentSnapshot | undefined;
  let selectedText = request.selectedText ?? '';
  let offsets: { start: number; end: number } | undefined;
  if (active && request.selection) {
    offsets = rangeOffsets(active, request.selection);
    selectedText = active.getText().slice(offsets.start, offsets.end);
  }

  if (selectedText) {
    const total = utf8Length(selectedText);
    remaining -= heading;
    if (total > remaining) {
      selectedText = utf8Prefix(selectedText, Math.max(0, remaining));
      leftOut.push(`the selection was cut to its first ${utf8Length(selectedText)} of ${total} bytes`);
    }
    metadata.selected_text = selectedText;
    remaining -= utf8Length(selectedText);
  }

  if (active) {
    const budget = { remaining };
    document = activeSnapshot(request, active, offsets, budget, leftOut);
    remaining = budget.remaining;
  }

  const budget = { remaining };
  const related = relatedSnapshots(request, budget, leftOut);
  remaining = budget.remaining;
  let note = 0;
  if (leftOut.length > 0) {
    metadata.left_out = utf8Prefix(leftOut.join('; '), noteRoom);
    note = utf8Length(metadata.left_out);
  }
  metadata[BUDGET_KEY] = String(maxBytes);

  return {
    context: { ...(document ? { document } : {}), related_documents: related, symbols: [], metadata },
    bytes: maxBytes - (request.reservedBytes ?? 0) - noteRoom - remaining + note,
    leftOut,
  };
}

/** The active document: whole where it fits the budget, else an excerpt around the selection (saying which lines). */
function activeSnapshot(request: ContextRequest, active: TextDocument, offsets: { start: number; end: number } | undefined, budget: { remaining: number }, leftOut: string[]): DocumentSnapshot {
  const text = active.getText();
  const docMeta: Record<string, string> = {};
  let content = text;
  const size = text.length * 3 <= budget.remaining ? 0 : utf8Length(text);
  if (size > budget.remaining) {
    const excerpt = excerptAround(text, offsets ?? { start: 0, end: 0 }, budget.remaining);
    content = excerpt.content;
    const firstLine = active.positionAt(excerpt.start).line;
    const lastLine = active.positionAt(Math.max(excerpt.start, excerpt.end - 1)).line;
    docMeta.excerpt_start_line = String(firstLine);
    docMeta.excerpt_end_line = String(lastLine);
    leftOut.push(`the active document was cut to lines ${firstLine + 1}-${lastLine + 1} of ${active.lineCount} (${size} bytes do not fit the ${request.maxBytes}-byte budget)`);
  }
  budget.remaining -= utf8Length(content);
  const document = snapshot(active, content, request.workspaceRoots, docMeta);
  if (request.selection && offsets) document.selection = { start: active.positionAt(offsets.start), end: active.positionAt(offsets.end) };
  return document;
}

/** The other open documents, whole, as many as fit; those left out are named (the first few). */
function relatedSnapshots(request: ContextRequest, budget: { remaining: number }, leftOut: string[]): DocumentSnapshot[] {
  const related: DocumentSnapshot[] = [];
  const omitted: string[] = [];
  for (const doc of request.related) {
    if (doc.uri === request.active?.uri) continue;
    const text = doc.getText();
    const size = utf8Length(text) + utf8Length(doc.uri) + DOCUMENT_OVERHEAD_BYTES;
    if (size <= budget.remaining) {
      related.push(snapshot(doc, text, request.workspaceRoots));
      budget.remaining -= size;
    } else {
      omitted.push(doc.uri);
    }
  }
  if (omitted.length > 0) {
    const named = omitted.slice(0, NAMED_LEFT_OUT).map((uri) => shownName(uri, request.workspaceRoots));
    const more = omitted.length > NAMED_LEFT_OUT ? ` and ${omitted.length - NAMED_LEFT_OUT} more` : '';
    leftOut.push(`${omitted.length} open document(s) did not fit the budget: ${named.join(', ')}${more}`);
  }
  return related;
}

/**
 * A piece of `text` around the selection that fits `budget` bytes: the selection itself (as
 * much as fits), then whole lines before and after it, shared evenly.
 */
function excerptAround(text: string, selection: { start: number; end: number }, budget: number): { content: string; start: number; end: number } {
  const selected = utf8Prefix(text.slice(selection.start, selection.end), budget);
  const rest = budget - utf8Length(selected);
  const selectionEnd = selection.start + selected.length;
  let before = utf8Suffix(text.slice(Math.max(0, selection.start - Math.ceil(rest / 2)), selection.start), Math.floor(rest / 2));
  // Start on a line boundary unless the cut is already at the start of the text.
  const beforeStart = selection.start - before.length;
  if (beforeStart > 0 && text[beforeStart - 1] !== '\n') {
    const newline = before.indexOf('\n');
    before = newline === -1 ? '' : before.slice(newline + 1);
  }
  const afterBudget = rest - utf8Length(before);
  let after = utf8Prefix(text.slice(selectionEnd, selectionEnd + afterBudget), afterBudget);
  const afterEnd = selectionEnd + after.length;
  if (afterEnd < text.length && text[afterEnd] !== '\n' && after.includes('\n')) {
    after = after.slice(0, after.lastIndexOf('\n') + 1);
  }
  const start = selection.start - before.length;
  return { content: before + selected + after, start, end: selectionEnd + after.length };
}
