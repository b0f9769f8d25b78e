/**
 * The real agents in tasks, over stdio through buckley-lsp, each against a stand-in for its
 * model's API. An approved edit of a file open in the editor with an unsaved line lands in the
 * buffer — whether the agent wrote through ACP's fs/* (Gemini CLI, Qwen Code, Claude Code 0.16) or
 * the disk by itself (Codex's apply_patch, Claude Code 0.23's Edit) — with the unsaved line kept,
 * the disk left as it was, listed in the task's review and taken back by its undo; a denied one
 * changes nothing. With autoApprove at high, a harmless command runs unasked and a destructive one
 * is asked about (and, denied, does nothing).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome, REAL_AGENTS, requireAgent, stepsScript, toolResultsOf, type RealAgent } from '../helpers/agents.js';
import { editorWithBuffers, openIn } from '../helpers/buffers.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import type { ModelServer, Reply } from '../helpers/models/standIn.js';
import { tempDir } from '../helpers/temp.js';

const CODE = ['export function retryDelay(attempt: number): number {', '  const cap = 30_000;', '  return Math.min(1000 * 2 ** attempt, cap);', '}', ''].join('\n');
const UNSAVED = '// the user typed this line and has not saved it';

// Registered first, so run last: the agents' homes go once the servers (and their agents) have stopped.
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

function workspace(): { root: string; code: string; keep: string } {
  const root = tempDir('buckley-agent-task');
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'keep'));
  writeFileSync(join(root, 'src', 'retry.ts'), CODE);
  writeFileSync(join(root, 'keep', 'data.txt'), 'precious\n');
  return { root, code: join(root, 'src', 'retry.ts'), keep: join(root, 'keep') };
}

async function model(agent: RealAgent, steps: Reply[]): Promise<ModelServer> {
  const server = await agent.model(stepsScript(steps));
  cleanups.push(() => server.close());
  return server;
}

function agentSettings(agent: RealAgent, server: ModelServer, extra: object = {}, agentExtra: object = {}): object {
  const { home, cleanup } = agentHome();
  cleanups.push(cleanup);
  return { agent: { command: agent.command, env: agent.setup(server, home), ...agentExtra }, ...extra };
}

/** Runs a task to its end: its answer as logged. */
async function task(client: TestClient, query: string): Promise<string> {
  await client.request('buckley/executeTask', { task: query });
  return (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${query}"`))).message;
}

describe.each(REAL_AGENTS)('$name, in a task', (agent) => {
  const installed = requireAgent(agent);
  // Claude Code edits only files it has read; the others do not mind reading first.
  const editSteps = (file: string): Reply[] => [{ tools: [agent.tools.read(file)] }, { tools: [agent.tools.edit(file, '  const cap = 30_000;', '  const cap = 60_000;')] }, { text: 'Raised the cap.' }];

  it.runIf(installed)('an approved edit of an open file lands in its buffer, the unsaved line kept, the disk as it was; listed, and undone', async () => {
    const ws = workspace();
    const server = await model(agent, editSteps(ws.code));
    const session = await editorWithBuffers(start, ws.root, () => true, undefined, agentSettings(agent, server));
    const uri = await openIn(session, ws.code, `${UNSAVED}\n${CODE}`);

    const answer = await task(session.client, 'Raise the cap to a minute');
    expect(session.buffers.get(uri)!.getText()).toBe(`${UNSAVED}\n${CODE.replace('30_000', '60_000')}`);
    expect(readFileSync(ws.code, 'utf8')).toBe(CODE);
    expect(answer).toContain('- `src/retry.ts` +1 −1, in the editor, not saved yet');
    // Asked about with the change to the whole file in view — as the user has it (the unsaved line
    // is context), real line numbers, the path as they read it — and its size.
    const [approval] = session.client.all('buckley/approveTool');
    expect(approval.change).toMatchObject({ linesAdded: 1, linesRemoved: 1 });
    // Named in words, not by its input as JSON text (Cline's apply_patch title).
    expect(approval.title).not.toMatch(/^[\w.-]+: \s*[{[]/);
    expect(approval.change.diff).toContain(`--- a/src/retry.ts\n+++ b/src/retry.ts\n@@ -1,5 +1,5 @@\n ${UNSAVED}\n export function retryDelay`);

    expect(await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] })).toEqual({ undone: [ws.code], kept: [] });
    expect(session.buffers.get(uri)!.getText()).toBe(`${UNSAVED}\n${CODE}`);
    // What the agent writes of its own state at a turn (its config's $schema, its settings) is
    // not taken for a change to what runs code later: nothing put back, nothing moved aside.
    expect(session.client.all('window/logMessage').map((message) => message.message).filter((message) => /worked in its sandbox|moved aside|put back/.test(message))).toEqual([]);
  });

  it.runIf(installed)('a denied edit changes nothing, in the buffer or on disk', async () => {
    const ws = workspace();
    const server = await model(agent, editSteps(ws.code));
    const session = await editorWithBuffers(start, ws.root, () => false, undefined, agentSettings(agent, server));
    const uri = await openIn(session, ws.code, `${UNSAVED}\n${CODE}`);
    const answer = await task(session.client, 'Raise the cap to a minute');
    expect(session.client.all('buckley/approveTool').length).toBeGreaterThan(0);
    // A refusal is a refusal, not a cancel — even from an agent that can only end its turn so (Codex).
    const [final] = session.client.all('$/buckley/taskProgress').filter((p) => ['completed', 'failed', 'cancelled'].includes(p.status));
    expect(final.status).toBe('completed');
    expect(session.buffers.get(uri)!.getText()).toBe(`${UNSAVED}\n${CODE}`);
    expect(readFileSync(ws.code, 'utf8')).toBe(CODE);
    expect(answer).not.toContain('Files it changed');
  });

  it.runIf(installed)('with autoApprove high, runs a harmless command unasked and asks about a destructive one, which denied does nothing', async () => {
    const ws = workspace();
    const server = await model(agent, [{ tools: [agent.tools.shell('ls')] }, { tools: [agent.tools.shell(`rm -rf ${ws.keep}`)] }, { text: 'Cleaned.' }]);
    const session = await editorWithBuffers(start, ws.root, () => false, undefined, agentSettings(agent, server, { approvals: { autoApprove: 'high' } }));
    await task(session.client, 'Clean up');
    // The one asked about is the rm -rf, as destructive; the ls was never a question.
    const asked = session.client.all('buckley/approveTool');
    expect(asked.map((approval) => approval.risk)).toEqual(asked.length ? ['destructive'] : []);
    expect(asked.every((approval) => JSON.stringify(approval).includes('rm -rf'))).toBe(true);
    expect(existsSync(join(ws.keep, 'data.txt'))).toBe(true);
    // The harmless command ran: its output reached the model.
    expect(toolResultsOf(server).join('\n---\n')).toMatch(/src|keep/);
  });

  it.runIf(installed)('in a mode that runs tools unasked, what it changed is caught: named, listed, undone', async () => {
    const ws = workspace();
    const notes = join(ws.root, 'notes.txt');
    writeFileSync(notes, 'old notes\n');
    const server = await model(agent, [{ tools: [agent.tools.shell(`echo new notes > ${notes}`)] }, { text: 'Rewrote the notes.' }]);
    const settings = agentSettings(agent, server, {}, { modes: { task: agent.permissiveMode } }) as { agent: { command: string[]; env: Record<string, string> } };
    Object.assign(settings.agent.env, agent.permissiveEnv);
    settings.agent.command = [...settings.agent.command, ...(agent.permissiveArgs ?? [])];
    const session = await editorWithBuffers(start, ws.root, () => true, undefined, settings);
    const answer = await task(session.client, 'Rewrite the notes');
    toolResultsOf(server);
    expect(readFileSync(notes, 'utf8')).toBe('new notes\n');
    // An agent that runs its commands through buckley-lsp's terminals (Claude Code 0.16) is asked
    // about them whatever its mode: then the change was asked for. The others change unasked.
    if (session.client.all('buckley/approveTool').length) {
      expect(answer).toContain('- `notes.txt` +1 −1, on disk');
      expect(answer).not.toContain('without asking');
    } else {
      expect(answer).toMatch(/Without asking, .* changed `notes\.txt`/);
      expect(answer).toContain('- `notes.txt` +1 −1, on disk, changed without asking');
    }
    // The change is marked in the file for review, however it was made (the agent's own shell here).
    const uri = pathToFileURL(notes).href;
    const marked = await session.client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 1);
    expect(marked.diagnostics[0].message).toMatch(/^changed by «Rewrite the notes» \(\+1 −1\)/);
    expect(await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] })).toEqual({ undone: [notes], kept: [] });
    expect(readFileSync(notes, 'utf8')).toBe('old notes\n');
    await session.client.waitFor('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length === 0);
  });
});
