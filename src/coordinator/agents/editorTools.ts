/**
 * The editor MCP server's tools (editorMcp.ts): their declarations, and their answers from the
 * turn running in the session that calls them. Every answer is MCP tool content; what goes wrong
 * is said to the model (`isError`), never thrown at the agent.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import * as z from '../../schema.js';
import type { EditorState } from './editorState.js';

/** What a call reaches: the session's turn (none between turns). */
export interface EditorAccess {
  state: EditorState | undefined;
  /** Where relative paths lead: the session's workspace. */
  cwd: string;
  /** A file as the editor has it (unsaved edits included), else the disk — as `fs/read_text_file` reads. */
  read(path: string, line: number | undefined, limit: number | undefined): Promise<string>;
}

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const EDITOR_TOOLS = [
  {
    name: 'open_files',
    title: 'Files open in the editor',
    description: "The workspace's files open in the user's editor, and which of them have edits the user has not saved (read those with read_file: the disk has the old text).",
    inputSchema: { type: 'object', properties: {} },
    annotations: readOnly,
  },
  {
    name: 'selection',
    title: "The user's selection",
    description: 'The file the user asked from, and the lines and text they had selected.',
    inputSchema: { type: 'object', properties: {} },
    annotations: readOnly,
  },
  {
    name: 'read_file',
    title: 'Read a file as the editor has it',
    description: "A file's text as the user's editor has it, unsaved edits included (the disk's when it is not open). Paths are absolute or relative to the workspace.",
    inputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file: absolute, or relative to the workspace' },
        line: { type: 'integer', minimum: 1, description: 'The first line to read (1-based)' },
        limit: { type: 'integer', minimum: 1, description: 'How many lines to read' },
      },
      required: ['path'],
    },
    annotations: readOnly,
  },
] as const;

const callSchema = z.object({ name: z.string(), arguments: z.optional(z.record(z.string(), z.unknown())) });
const readSchema = z.object({ path: z.string().check(z.minLength(1)), line: z.optional(z.int().check(z.minimum(1))), limit: z.optional(z.int().check(z.minimum(1))) });

type ToolResult = { content: Array<{ type: 'text'; text: string }>; isError?: boolean };
const said = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });
const failed = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** A `tools/call` answered from the session's turn. */
export async function callEditorTool(params: unknown, access: EditorAccess | undefined): Promise<ToolResult> {
  const call = callSchema.safeParse(params);
  if (!call.success) return failed('tools/call needs a tool name and its arguments');
  const { name } = call.data;
  if (!EDITOR_TOOLS.some((tool) => tool.name === name)) return failed(`no tool ${name}: this server has ${EDITOR_TOOLS.map((tool) => tool.name).join(', ')}`);
  if (!access) return failed("the editor's state is given during a turn of this session, and none is running");
  const shown = (path: string) => {
    const inside = relative(access.cwd, path);
    return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : path;
  };
  switch (name) {
    case 'open_files': {
      const files = access.state?.openFiles ?? [];
      if (files.length === 0) return said('No file of the workspace is open in the editor.');
      const lines = files.map((file) => `${shown(file.path)} (${file.language || 'plain text'})${file.unsaved ? ' — unsaved edits' : ''}`);
      return said(`Open in the editor:\n${lines.join('\n')}`);
    }
    case 'selection': {
      const state = access.state;
      if (!state?.file) return said(state?.selectedText ? `Selected (in no file the editor named):\n${state.selectedText}` : 'The request was made in no file.');
      if (!state.selection && !state.selectedText) return said(`The user asked from ${shown(state.file)}, with nothing selected.`);
      const lines = state.selection ? `, lines ${state.selection.startLine}-${state.selection.endLine}` : '';
      return said(`Selected in ${shown(state.file)}${lines}:\n${state.selectedText ?? ''}`);
    }
    default: {
      const args = readSchema.safeParse(call.data.arguments ?? {});
      if (!args.success) return failed(`read_file needs a path, and optionally line and limit (whole numbers from 1): ${z.problems(args.error)}`);
      const { path, line, limit } = args.data;
      try {
        return said(await access.read(resolve(access.cwd, path), line, limit));
      } catch (error) {
        return failed(error instanceof Error ? error.message : String(error));
      }
    }
  }
}
