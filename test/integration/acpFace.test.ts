/**
 * `buckley-lsp acp` over stdio, driven by the ACP SDK's client side as an ACP editor drives its
 * agent: a Zed-like client (its files: `fs/read_text_file`, `fs/write_text_file`) and a bare one,
 * the embedded coordinator and the scripted agent behind. An answer streamed; each permission put
 * to the user with our risk in words, approved or denied; a write made through the client's files
 * (nothing on disk); the read-only mode; a cancel mid-answer.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

interface Client {
  context: acp.ClientContext;
  /** Every session/update received, in order. */
  updates: acp.SessionUpdate[];
  /** The permission requests the client was asked. */
  permissions: acp.RequestPermissionRequest[];
  /** The files the client wrote (its buffers). */
  written: Map<string, string>;
  stderr(): string;
  /** The face's process, and the HOME it and what it starts have. */
  process: ChildProcess;
  home: string;
}

/**
 * The README's agent server for Zed (`buckley-lsp acp`, `gemini` the scripted agent on PATH), and
 * an ACP client of it: with files (as Zed), or without.
 */
async function face(options: { files: boolean; decide?: (request: acp.RequestPermissionRequest) => string }): Promise<Client> {
  const home = tempDir('buckley-acp-home');
  const server = JSON.parse(readmeSnippet('zed-agent-server')).agent_servers.Buckley;
  const child = spawn(server.command, server.args, {
    cwd: REPO,
    env: { PATH: userPath(), HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const client: Omit<Client, 'context'> = { updates: [], permissions: [], written: new Map(), stderr: () => stderr, process: child, home };
  let app = acp
    .client({ name: 'test-client' })
    .onNotification('session/update', ({ params }) => void client.updates.push(params.update))
    .onRequest('session/request_permission', ({ params }) => {
      client.permissions.push(params);
      return { outcome: { outcome: 'selected', optionId: options.decide?.(params) ?? 'allow' } };
    });
  if (options.files) {
    app = app
      .onRequest('fs/read_text_file', ({ params }) => ({ content: client.written.get(params.path) ?? readFileSync(params.path, 'utf8') }))
      .onRequest('fs/write_text_file', ({ params }) => {
        client.written.set(params.path, params.content);
        return {};
      });
  }
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  stops.push(async () => {
    child.stdin.end();
    await exited;
  });
  const context = connection.agent;
  await context.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: options.files, writeTextFile: options.files }, terminal: false }, clientInfo: { name: 'test-client', version: '1' } });
  return { ...client, context };
}

/** A workspace with a README and a file to change. */
function workspace(): string {
  const root = tempDir('buckley-acp-ws');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'README.md'), '# read me\n');
  writeFileSync(join(root, 'retry.ts'), 'export const tries = 3;\n');
  return root;
}

/** The processes running with `HOME=home` in their environment: the face's, and what it started. */
function processesWithHome(home: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`HOME=${home}`) ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

const answerOf = (client: Client) => client.updates.map((update) => (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '')).join('');

describe('buckley-lsp acp', () => {
  it('answers a prompt, streamed, and puts each permission to the user with our risk in words: approved, the agent goes on', async () => {
    const client = await face({ files: false });
    const cwd = workspace();
    const session = await client.context.request('session/new', { cwd, mcpServers: [] });
    expect(session.modes).toMatchObject({ currentModeId: 'task', availableModes: [{ id: 'task' }, { id: 'ask', name: 'Ask (read-only)' }] });
    const done = await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(done.stopReason).toBe('end_turn');
    // Reading the README is low risk, within approvals.autoApprove: not asked. The edit is.
    expect(client.permissions).toHaveLength(1);
    expect(client.permissions[0]!.toolCall).toMatchObject({ title: 'Edit config.json (medium)', kind: 'edit', content: [{ type: 'content', content: { type: 'text', text: expect.stringMatching(/^medium — /) } }] });
    expect(answerOf(client)).toContain('Permission to read: yes; permission to edit: yes.');
  });

  it('denied, the agent is told no', async () => {
    const client = await face({ files: false, decide: () => 'reject' });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(answerOf(client)).toContain('permission to edit: no.');
  });

  it("writes through the client's files where it offers them: the change in its buffer, nothing on disk", async () => {
    const client = await face({ files: true });
    const cwd = workspace();
    const file = join(cwd, 'retry.ts');
    const session = await client.context.request('session/new', { cwd, mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: `REPLACE ${file} "tries = 3" "tries = 5"` }] });
    expect(client.permissions.map((request) => request.toolCall.title)).toEqual([expect.stringMatching(/retry\.ts/)]);
    expect(client.written.get(file)).toBe('export const tries = 5;\n');
    expect(readFileSync(file, 'utf8')).toBe('export const tries = 3;\n');
  });

  it('keeps the read-only mode read-only: nothing asked, the edit refused', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/set_mode', { sessionId: session.sessionId, modeId: 'ask' });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'Tidy the config' }] });
    expect(client.updates).toContainEqual({ sessionUpdate: 'current_mode_update', currentModeId: 'ask' });
    expect(client.permissions).toEqual([]);
    expect(answerOf(client)).toContain('permission to edit: no.');
  });

  it('stops its agent when the client stops it (SIGTERM): nothing it started goes on', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    await client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] });
    expect(processesWithHome(client.home).length).toBeGreaterThan(1);
    const exited = new Promise((resolve) => client.process.once('exit', resolve));
    client.process.kill('SIGTERM');
    await exited;
    expect(processesWithHome(client.home)).toEqual([]);
  });

  it('cancels a turn mid-answer (session/cancel): it ends cancelled', async () => {
    const client = await face({ files: false });
    const session = await client.context.request('session/new', { cwd: workspace(), mcpServers: [] });
    const turn = client.context.request('session/prompt', { sessionId: session.sessionId, prompt: [{ type: 'text', text: 'HANG' }] });
    while (!answerOf(client).includes('Thinking')) await new Promise((resolve) => setImmediate(resolve));
    await client.context.notify('session/cancel', { sessionId: session.sessionId });
    expect((await turn).stopReason).toBe('cancelled');
  });
});
