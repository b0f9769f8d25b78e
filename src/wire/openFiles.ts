/**
 * EditorContext metadata (buckley-lsp extension): the workspace's files open in the editor, as
 * JSON `OpenFile[]` — for the agent's editor tools (our editor MCP server), not for the prompt.
 * Apart from contract.ts, whose schemas the bridge loads only with its first call.
 */
export const OPEN_FILES_KEY = 'open_files';

export interface OpenFile {
  /** Absolute path. */
  path: string;
  language: string;
  /** The buffer has edits the editor has not saved. */
  unsaved: boolean;
}
