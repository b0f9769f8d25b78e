/**
 * buckley-lsp's editor MCP server over stdio, with the scripted agent calling it from its session
 * as a real MCP client would — over HTTP where it takes HTTP servers (`--mcp-http`), else through
 * the stdio relay (dist/buckley-lsp-editor-mcp.js): the open files and which have unsaved edits,
 * the selection, a file as its buffer has it (not the disk's). Then what keeps others out: the
 * per-process secret, a web page's request, a session with no turn running.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();

/** Opens retry.ts, types a line into its buffer (not saved), and asks the agent to use the tools with its first lines selected. */
async function askWithUnsavedEdit(client: TestClient, question: string): Promise<{ answer: string; disk: string; uri: string }> {
  const { uri, text } = await client.openFixture('workspace/retry.ts');
  await client.notify('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// typed, not saved\n' }] });
  const range = { start: { line: 1, character: 0 }, end: { line: 3, character: 0 } };
  const { answer } = await client.request('buckley/ask', { question, context: { activeFile: uri, selection: range } });
  return { answer, disk: text, uri };
}

describe("the agent's editor tools (buckley-lsp's editor MCP server)", () => {
  it('reach an agent that takes only stdio MCP servers through the relay: open files with unsaved edits, the selection, the buffer as typed', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` } });
    const { answer, disk, uri } = await askWithUnsavedEdit(client, 'EDITOR TOOLS retry.ts');
    expect(answer).toContain('editor tools (stdio): open_files, selection, read_file');
    expect(answer).toContain('open: Open in the editor:\nretry.ts (typescript) — unsaved edits');
    expect(answer).toContain('selection: Selected in retry.ts, lines 2-4:\n');
    // The buffer's text, with the line typed and not saved; the disk has not got it.
    expect(answer).toContain('read: // typed, not saved\n');
    expect(disk).not.toContain('typed, not saved');
    expect(readFileSync(fileURLToPath(new URL('../../fixtures/workspace/retry.ts', import.meta.url)), 'utf8')).toBe(disk);

    // Saved (the editor says so): no longer marked.
    await client.notify('textDocument/didSave', { textDocument: { uri } });
    const saved = await client.request('buckley/ask', { question: 'EDITOR TOOLS retry.ts' });
    expect(saved.answer).toContain('open: Open in the editor:\nretry.ts (typescript)\n');
  });

  it('are served over HTTP to an agent that takes it, with the secret in a header', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT} --mcp-http` } });
    const { answer } = await askWithUnsavedEdit(client, 'EDITOR TOOLS retry.ts');
    expect(answer).toContain('editor tools (http): open_files, selection, read_file');
    expect(answer).toContain('read: // typed, not saved\n');
  });

  it('answer only with the secret, never a web page, and only while a turn of the session runs', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` } });
    const { answer } = await client.request('buckley/ask', { question: 'MCP SERVERS' });
    const url = /BUCKLEY_EDITOR_MCP_URL=(\S+)/.exec(answer)?.[1];
    const secret = /BUCKLEY_EDITOR_MCP_SECRET=([0-9a-f]+)/.exec(answer)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f]{24}$/);
    expect(answer).toMatch(/buckley-editor \(stdio: \S+ \S+dist\/buckley-lsp-editor-mcp\.js; env /);
    const call = (headers: Record<string, string>) =>
      fetch(url!, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'retry.ts' } } }) });
    expect((await call({})).status).toBe(401);
    expect((await call({ authorization: `Bearer ${'0'.repeat(64)}` })).status).toBe(401);
    expect((await call({ authorization: `Bearer ${secret}`, origin: 'http://evil.example' })).status).toBe(403);
    expect((await fetch(url!.replace(/[0-9a-f]{24}$/, 'f'.repeat(24)), { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: '{}' })).status).toBe(404);
    // The turn has ended: the session's tools say so to the model, and read nothing.
    const late = await call({ authorization: `Bearer ${secret}` });
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: "the editor's state is given during a turn of this session, and none is running" }], isError: true } });
  });

  it('read as the agent reads: a file outside the workspace is refused in an ask, in words the model gets', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` } });
    const { answer } = await client.request('buckley/ask', { question: 'EDITOR TOOLS /etc/passwd' });
    expect(answer).toContain('read: ERROR reading /etc/passwd was refused: reads /etc/passwd outside the workspace');
    expect(answer).not.toContain('root:');
  });

  it('are not offered when buckley.agent.editorTools is off', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` }, initialize: { initializationOptions: { agent: { editorTools: false } } } });
    expect((await client.request('buckley/ask', { question: 'EDITOR TOOLS retry.ts' })).answer).toBe('editor tools: none given');
  });
});
