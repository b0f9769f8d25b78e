/** An editor that holds buffers, for tests of what the server changes in them (workspace/applyEdit). */
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { ClientOptions, TestClient } from './lspClient.js';

/**
 * An editor in a test: it holds the buffers it opened, applies workspace/applyEdit to them as a
 * real editor does (and says so with didChange), and answers approvals with `approve()`.
 */
export async function editorWithBuffers(
  start: (options?: ClientOptions) => Promise<TestClient>,
  root: string,
  approve: (request: any) => boolean | Promise<boolean>,
  workspaceCapabilities: object = { applyEdit: true, workspaceEdit: { documentChanges: true } },
  initializationOptions?: object,
): Promise<{ client: TestClient; buffers: Map<string, TextDocument>; edits: any[] }> {
  const buffers = new Map<string, TextDocument>();
  const edits: any[] = [];
  let client!: TestClient;
  client = await start({
    client: 'neovim-0.10.4',
    ...(initializationOptions ? { env: { BUCKLEY_AGENT: undefined } } : {}),
    initialize: {
      ...(initializationOptions ? { initializationOptions } : {}),
      rootUri: pathToFileURL(root).href,
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }],
      capabilities: {
        window: { showDocument: { support: true }, workDoneProgress: true },
        workspace: workspaceCapabilities,
        experimental: { buckley: { taskProgress: true, approveTool: true } },
      },
    },
    handlers: {
      'buckley/approveTool': async (request) => ({ approved: await approve(request) }),
      'workspace/applyEdit': async ({ edit }) => {
        edits.push(edit);
        for (const change of edit.documentChanges ?? []) {
          const buffer = buffers.get(change.textDocument.uri);
          if (!buffer || buffer.version !== change.textDocument.version) return { applied: false, failureReason: 'the buffer is newer' };
          const updated = TextDocument.update(buffer, change.edits.map((e: any) => ({ range: e.range, text: e.newText })), buffer.version + 1);
          buffers.set(change.textDocument.uri, updated);
          await client.notify('textDocument/didChange', { textDocument: { uri: change.textDocument.uri, version: updated.version }, contentChanges: change.edits.map((e: any) => ({ range: e.range, text: e.newText })) });
        }
        return { applied: true };
      },
    },
  });
  return { client, buffers, edits };
}

export async function openIn(session: { client: TestClient; buffers: Map<string, TextDocument> }, file: string, text: string): Promise<string> {
  const languageId = file.endsWith('.md') ? 'markdown' : 'typescript';
  const uri = await session.client.open(file, text, languageId);
  session.buffers.set(uri, TextDocument.create(uri, languageId, 1, text));
  return uri;
}

/** The user types: the buffer and the server both get it. */
export async function type(session: { client: TestClient; buffers: Map<string, TextDocument> }, uri: string, at: { line: number; character: number }, text: string): Promise<void> {
  const buffer = session.buffers.get(uri)!;
  const change = { range: { start: at, end: at }, text };
  const updated = TextDocument.update(buffer, [change], buffer.version + 1);
  session.buffers.set(uri, updated);
  await session.client.notify('textDocument/didChange', { textDocument: { uri, version: updated.version }, contentChanges: [change] });
}

