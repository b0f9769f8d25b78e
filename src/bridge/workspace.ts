/**
 * The workspace the editor works in: what its tasks may write, what an ask may read without
 * asking. The folders the editor names (`workspaceFolders`, else `rootUri`); an editor that names
 * none works where it was started (Helix without a root marker sends `workspaceFolders: []`) —
 * that folder, unless it is the filesystem's root or the user's home, which would open everything
 * to the agent: then none, and a task starts in an empty folder with nothing to write.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InitializeParams } from 'vscode-languageserver';
import { canonicalUri } from '../uri.js';

export function workspaceRootsOf(params: Pick<InitializeParams, 'workspaceFolders' | 'rootUri'>, where: { cwd: string; home: string | undefined }): string[] {
  if (params.workspaceFolders?.length) return params.workspaceFolders.map((folder) => canonicalUri(folder.uri));
  if (params.rootUri) return [canonicalUri(params.rootUri)];
  const cwd = resolve(where.cwd);
  if (cwd === '/' || (where.home && cwd === resolve(where.home))) return [];
  return [canonicalUri(pathToFileURL(cwd).href)];
}
