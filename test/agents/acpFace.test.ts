/**
 * The real agents behind `buckley-lsp acp`, each against a stand-in for its model's API, driven
 * by the ACP SDK's client side as Zed drives its agent (its files offered): an edit is put to the
 * user as a permission with our risk in words, and, approved, reaches the client — through its
 * `fs/write_text_file` (its buffer, its review), or as a finished edit with its diff for an agent
 * that writes the disk itself; denied, nothing changes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome, REAL_AGENTS, requireAgent, stepsScript, type RealAgent } from '../helpers/agents.js';
import { BIN } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import type { ModelServer } from '../helpers/models/standIn.js';
import { clientTerminals } from '../helpers/acpTerminals.js';

const CODE = ['export function retryDelay(attempt: number): number {', '  const cap = 30_000;', '  return Math.min(1000 * 2 ** attempt, cap);', '}', ''].join('\n');

/** A PNG of one pixel. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** An image in a model API's request: Anthropic's image block, OpenAI's image_url or input_image, Gemini's inline data. */
const IMAGE_IN_REQUEST = /"type":\s*"image"|"image_url"|"input_image"|"inline_?[dD]ata"/;

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Panel {
  context: acp.ClientContext;
  model: ModelServer;
  updates: acp.SessionUpdate[];
  permissions: acp.RequestPermissionRequest[];
  written: Map<string, string>;
  /** The terminal/create requests the client ran (a client with terminals). */
  terminalCreates: acp.CreateTerminalRequest[];
}

/** `buckley-lsp acp` with the agent against its stand-in (its settings file), and a Zed-like client of it. */
async function panel(agent: RealAgent, steps: Parameters<typeof stepsScript>[0], allow: boolean, terminals = false): Promise<Panel> {
  const model = await agent.model(stepsScript(steps));
  const { home, cleanup } = agentHome();
  const settings = join(tempDir('buckley-acp-settings'), 'settings.json');
  writeFileSync(settings, JSON.stringify({ agent: { command: agent.command, env: agent.setup(model, home) } }));
  const child = spawn(process.execPath, [BIN, 'acp', '--settings', settings], { env: { PATH: process.env.PATH, HOME: home }, stdio: ['pipe', 'pipe', 'ignore'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const shown: Omit<Panel, 'context' | 'model'> = { updates: [], permissions: [], written: new Map(), terminalCreates: [] };
  const app = acp
    .client({ name: 'zed-like' })
    .onNotification('session/update', ({ params }) => void shown.updates.push(params.update))
    .onRequest('session/request_permission', ({ params }) => {
      shown.permissions.push(params);
      const option = params.options.find((candidate) => candidate.kind === (allow ? 'allow_once' : 'reject_once'))!;
      return { outcome: { outcome: 'selected', optionId: option.optionId } };
    })
    .onRequest('fs/read_text_file', ({ params }) => ({ content: shown.written.get(params.path) ?? readFileSync(params.path, 'utf8') }))
    .onRequest('fs/write_text_file', ({ params }) => {
      shown.written.set(params.path, params.content);
      return {};
    });
  const connection = (terminals ? clientTerminals(app, shown.terminalCreates) : app).connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  cleanups.push(cleanup, () => model.close(), async () => {
    child.stdin.end();
    await exited;
  });
  await connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: terminals }, clientInfo: { name: 'zed-like', version: '1' } });
  return { ...shown, context: connection.agent, model };
}

function workspace(): { root: string; code: string } {
  const root = tempDir('buckley-acp-agent');
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'retry.ts'), CODE);
  return { root, code: join(root, 'src', 'retry.ts') };
}

/** What the client was given of the file: its write, or the diff of the finished edit. */
function changedTo(shown: Panel, path: string): string | undefined {
  if (shown.written.has(path)) return shown.written.get(path);
  for (const update of shown.updates) {
    if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') continue;
    for (const content of update.content ?? []) if (content.type === 'diff' && content.path === path) return content.newText;
  }
  return undefined;
}

describe.each(REAL_AGENTS)('$name, behind buckley-lsp acp', (agent) => {
  const installed = requireAgent(agent);
  const editSteps = (file: string) => [{ tools: [agent.tools.read(file)] }, { tools: [agent.tools.edit(file, '  const cap = 30_000;', '  const cap = 60_000;')] }, { text: 'Raised the cap.' }];

  it.runIf(installed)('puts its edit to the user with our risk in words; approved, the client gets the change', async () => {
    const ws = workspace();
    const shown = await panel(agent, editSteps(ws.code), true);
    const { sessionId } = await shown.context.request('session/new', { cwd: ws.root, mcpServers: [] });
    const done = await shown.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Raise the cap to a minute' }] });
    expect(done.stopReason).toBe('end_turn');
    const edit = shown.permissions.find((request) => /retry\.ts/.test(JSON.stringify(request.toolCall)));
    expect(edit?.toolCall.title).toMatch(/\((medium|high)\)$/);
    expect(edit?.toolCall.content?.[0]).toMatchObject({ type: 'content', content: { type: 'text', text: expect.stringMatching(/^(medium|high) — /) } });
    expect(changedTo(shown, ws.code)).toBe(CODE.replace('30_000', '60_000'));
  });

  it.runIf(installed)("gives the image pasted in the panel to its model (or, for a model it knows takes none, says so in the image's place; an agent that would drop it unsaid is not given it, and the panel says so)", async () => {
    const ws = workspace();
    const shown = await panel(agent, [{ text: 'A dot.' }], true);
    const { sessionId } = await shown.context.request('session/new', { cwd: ws.root, mcpServers: [] });
    await shown.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', mimeType: 'image/png', data: PNG }] });
    const turn = shown.model.turns().at(-1)!;
    // It had the image: it says so in the image's place where its model takes none.
    if (agent.imageInPlace) expect(turn.raw).toMatch(agent.imageInPlace);
    // It would drop it unsaid (Cline): it is not given it, and the panel says so.
    else if (agent.dropsImages) {
      expect(turn.raw).not.toMatch(IMAGE_IN_REQUEST);
      expect(JSON.stringify(shown.updates)).toMatch(/takes no images: a PNG image left out of the prompt/);
    }
    else expect(turn.raw).toMatch(IMAGE_IN_REQUEST);
  });

  it.runIf(installed && agent.clientTerminals)("runs its command in the client's terminal, shown in the panel, inside its sandbox", async () => {
    const ws = workspace();
    const shown = await panel(agent, [{ tools: [agent.tools.shell('echo ran > ran.txt')] }, { text: 'Ran it.' }], true, true);
    const { sessionId } = await shown.context.request('session/new', { cwd: ws.root, mcpServers: [] });
    expect((await shown.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Run it' }] })).stopReason).toBe('end_turn');
    expect(shown.terminalCreates).toHaveLength(1);
    expect(shown.terminalCreates[0]!.command).toMatch(/\/bwrap$/);
    expect(shown.terminalCreates[0]!.args!.join(' ')).toContain('echo ran > ran.txt');
    expect(shown.updates).toContainEqual(expect.objectContaining({ sessionUpdate: 'tool_call', content: [{ type: 'terminal', terminalId: 'zed-terminal-1' }] }));
    // What it made is the client's, for its review.
    expect(changedTo(shown, join(ws.root, 'ran.txt'))).toBe('ran\n');
  });

  it.runIf(installed)('denied, nothing changes: not in the client, not on disk', async () => {
    const ws = workspace();
    const shown = await panel(agent, editSteps(ws.code), false);
    const { sessionId } = await shown.context.request('session/new', { cwd: ws.root, mcpServers: [] });
    await shown.context.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Raise the cap to a minute' }] });
    expect(shown.permissions.length).toBeGreaterThan(0);
    expect(changedTo(shown, ws.code)).toBeUndefined();
    expect(readFileSync(ws.code, 'utf8')).toBe(CODE);
  });
});
