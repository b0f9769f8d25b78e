/**
 * What the editor showed when a turn began — its file, the selection, the workspace's open files
 * and which have unsaved edits — taken from the request's EditorContext, for the agent's editor
 * tools (editorMcp.ts). The buffers' text is not here: a tool reads it live, through the turn.
 */
import * as z from '../../schema.js';
import type { EditorContext } from '../../wire/contract.js';
import { OPEN_FILES_KEY, type OpenFile } from '../../wire/openFiles.js';
import { uriToPath } from '../../uri.js';

export interface EditorState {
  /** The file the request was made in (absolute path), if any. */
  file?: string;
  language?: string;
  /** 1-based lines of the selection, when there is one. */
  selection?: { startLine: number; endLine: number };
  selectedText?: string;
  openFiles: OpenFile[];
}

const openFilesSchema = z.array(z.object({ path: z.string().check(z.minLength(1)), language: z.string(), unsaved: z.boolean() }));

/** The editor's state from a request's context; undefined when the request came without one. */
export function editorStateOf(context: EditorContext | undefined): EditorState | undefined {
  if (!context) return undefined;
  const document = context.document;
  const file = document?.uri?.startsWith('file:') ? uriToPath(document.uri) : undefined;
  const range = document?.selection;
  const selected = range && (range.start.line !== range.end.line || range.start.character !== range.end.character);
  let openFiles: OpenFile[] = [];
  try {
    const parsed = openFilesSchema.safeParse(JSON.parse(context.metadata?.[OPEN_FILES_KEY] ?? '[]'));
    if (parsed.success) openFiles = parsed.data;
  } catch {
    // Not JSON: a caller that is not ours; no open files known.
  }
  return {
    ...(file ? { file, language: document?.language_id } : {}),
    ...(range && selected ? { selection: { startLine: range.start.line + 1, endLine: range.end.line + 1 } } : {}),
    ...(context.metadata?.selected_text ? { selectedText: context.metadata.selected_text } : {}),
    openFiles,
  };
}
