/**
 * Conversations over real stdio: an answer document is a conversation — a question written below
 * its last line and "Buckley: follow up" continue it in the same agent session, and the answer is
 * appended to the document (in the editor's buffer when it is open, on disk when not); the
 * conversations are listed, one can be started over, and they survive a restart of the server
 * (ACP session/load where the agent can, else the earlier turns are sent along); a coordinator
 * that keeps no sessions gets the thread within the budget. The embedded coordinator and our
 * scripted agent (RECALL says what it remembers).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { editorWithBuffers, openIn, type } from '../helpers/buffers.js';
import { startFakeBuckley } from '../helpers/coordinators.js';
import { startingClients, TestClient } from '../helpers/lspClient.js';
import { REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { linesRange, positionAt } from '../helpers/text.js';

const start = startingClients();
const FOLLOW_UP_LINE = '*Follow up: write your question below this line, then run the code action "Buckley: follow up".*';
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The end of a buffer, where the user writes a follow-up. */
function endOf(text: string) {
  return positionAt(text, text.length);
}

describe('conversations', () => {
  it('follows up in the answer document: the question written below its last line is asked in the same agent session, and the answer is appended to the open buffer', async () => {
    const session = await editorWithBuffers(start, `${REPO}fixtures/workspace`, () => true);
    const { client, buffers } = session;
    const code = readFileSync(`${REPO}fixtures/workspace/retry.ts`, 'utf8');
    const codeUri = await openIn(session, `${REPO}fixtures/workspace/retry.ts`, code);
    const first = await client.request('buckley/ask', { question: 'What does withRetry do?', context: { activeFile: codeUri, selection: linesRange(code, 'export async function withRetry', 'throw lastError;') } });

    // The answer document ends with the place to follow up.
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md'));
    const written = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(written).toContain('# What does withRetry do?');
    expect(written.trimEnd().endsWith(FOLLOW_UP_LINE)).toBe(true);

    // The user opens it (as the editor does on showDocument) and writes a question below the line.
    const documentUri = await openIn(session, fileURLToPath(shown.uri), written);
    await type(session, documentUri, endOf(written), 'RECALL what came before\n');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri: documentUri }, range: { start: endOf(written), end: endOf(written) }, context: { diagnostics: [] } });
    const titles = actions.map((action: any) => action.title);
    expect(titles).toContain('Buckley: follow up «RECALL what came before»');
    // An answer document is not code: no "explain this" about it.
    expect(titles.some((title: string) => title.includes('explain'))).toBe(false);
    const followUp = actions.find((action: any) => action.title.startsWith('Buckley: follow up'));
    const command = typeof followUp.command === 'string' ? followUp : followUp.command;
    expect(await client.request('workspace/executeCommand', { command: command.command, arguments: command.arguments })).toMatchObject({ started: true, conversation: first.conversation });

    // The answer lands in the buffer, below its question, and a new follow-up line after it.
    await client.waitFor('workspace/applyEdit', (p) => JSON.stringify(p.edit).includes('recall:'));
    const text = buffers.get(documentUri)!.getText();
    expect(text).toContain('# What does withRetry do?');
    expect(text).toContain('## RECALL what came before');
    // The same agent session: its second turn, and it remembers the first question.
    expect(text).toMatch(/recall: turn 2 of this session; earlier questions: \[What does withRetry do\?\]/);
    expect(text.indexOf('## RECALL what came before')).toBeGreaterThan(text.indexOf('What does withRetry do?'));
    expect(text.trimEnd().endsWith(FOLLOW_UP_LINE)).toBe(true);
    expect(text.split(FOLLOW_UP_LINE)).toHaveLength(2);
    // The disk is the user's to save; the conversation is kept all the same.
    expect(readFileSync(fileURLToPath(shown.uri), 'utf8')).toBe(written);
    const status = await client.request('buckley/status', null);
    expect(status.conversations[0]).toMatchObject({ id: first.conversation, title: 'What does withRetry do?', turns: 2, document: shown.uri });
  });

  it('follows up by id with the document closed: the answer is appended to the file on disk', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md'));
    const followUp = await client.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    expect(followUp.answer).toBe('recall: turn 2 of this session; earlier questions: [What is first?]');
    // One document, shown again once the answer is in it: the follow-up has none of its own.
    await client.waitFor('window/showDocument', (p) => p !== shown && p.uri === shown.uri);
    const text = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(text).toContain('## RECALL');
    expect(text).toContain(followUp.answer);
    expect(text.trimEnd().endsWith(FOLLOW_UP_LINE)).toBe(true);
    expect(new Set(client.all('window/showDocument').map((p) => p.uri))).toEqual(new Set([shown.uri]));
  });

  it('leaves an open answer document alone when the editor does not apply the answer to it: the answer gets a document of its own', async () => {
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: { capabilities: { window: { showDocument: { support: true } }, workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } } } },
      handlers: { 'workspace/applyEdit': () => ({ applied: false, failureReason: 'the user is typing' }) },
    });
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md'));
    const written = readFileSync(fileURLToPath(shown.uri), 'utf8');
    await client.open(fileURLToPath(shown.uri), written, 'markdown');
    await client.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    const elsewhere = await client.waitFor('window/showDocument', (p) => p.uri !== shown.uri && p.uri.endsWith('-recall.md'));
    expect(readFileSync(fileURLToPath(elsewhere.uri), 'utf8')).toContain('recall: turn 2 of this session');
    // Tried in the buffer; the file under it never changed behind the editor's back.
    expect(client.all('workspace/applyEdit').length).toBeGreaterThan(0);
    expect(readFileSync(fileURLToPath(shown.uri), 'utf8')).toBe(written);
  });

  it('starts over with "Buckley: new conversation": the question, about the same code, in a new agent session and a new document', async () => {
    const session = await editorWithBuffers(start, `${REPO}fixtures/workspace`, () => true);
    const { client } = session;
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md'));
    const written = readFileSync(fileURLToPath(shown.uri), 'utf8');
    const documentUri = await openIn(session, fileURLToPath(shown.uri), written);
    await type(session, documentUri, endOf(written), 'RECALL from scratch');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri: documentUri }, range: { start: endOf(written), end: endOf(written) }, context: { diagnostics: [] } });
    const fresh = actions.find((action: any) => action.title === 'Buckley: new conversation «RECALL from scratch»');
    expect(fresh).toBeDefined();
    const command = typeof fresh.command === 'string' ? fresh : fresh.command;
    await client.request('workspace/executeCommand', { command: command.command, arguments: command.arguments });
    const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "RECALL from scratch"`));
    expect(logged.message).toContain('recall: turn 1 of this session; earlier questions: []');
    const newDocument = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md') && p.uri !== shown.uri);
    expect(readFileSync(fileURLToPath(newDocument.uri), 'utf8')).toContain('# RECALL from scratch');
    const { conversations } = await client.request('buckley/status', null);
    expect(conversations.map((c: any) => c.title)).toEqual(['RECALL from scratch', 'What is first?']);
    expect(conversations[1].id).toBe(first.conversation);
  });

  it('says what to do when there is nothing to follow up: no question written, or not an answer document', async () => {
    const session = await editorWithBuffers(start, `${REPO}fixtures/workspace`, () => true);
    const { client } = session;
    await client.request('buckley/ask', { question: 'What is first?' });
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('.md'));
    const documentUri = await openIn(session, fileURLToPath(shown.uri), readFileSync(fileURLToPath(shown.uri), 'utf8'));
    await expect(client.request('workspace/executeCommand', { command: 'buckley.followUp', arguments: [{ uri: documentUri }] })).rejects.toThrow(/no question: write it below the last line of the answer document/);
    const code = await openIn(session, `${REPO}fixtures/workspace/retry.ts`, 'let x = 1;\n');
    await expect(client.request('workspace/executeCommand', { command: 'buckley.followUp', arguments: [{ uri: code, question: 'and?' }] })).rejects.toThrow(/is not a Buckley answer document/);
    await expect(client.request('workspace/executeCommand', { command: 'buckley.followUp', arguments: [{ conversation: 'no-such-one', question: 'and?' }] })).rejects.toThrow(/no conversation no-such-one/);
    // A task's id made up is no conversation; a task's, once it has answered, is one (asked about read-only, its turns sent along).
    await expect(client.request('buckley/ask', { question: 'RECALL', conversation: 'task-0b0e' })).rejects.toThrow(/no conversation task-0b0e/);
    const { taskId } = await client.request('buckley/executeTask', { task: 'INSTANT' });
    await client.waitFor('window/logMessage', (p) => p.message.startsWith('Buckley\'s answer to "INSTANT"'));
    const recalled = await client.request('buckley/ask', { question: 'RECALL', conversation: `task-${taskId}` });
    expect(recalled).toMatchObject({ conversation: `task-${taskId}` });
    expect(recalled.answer).toContain('earlier turns in the prompt: [INSTANT]');
  });

  it('lists the conversations with buckley.conversations, as a document the editor opens', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    await client.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    await client.request('buckley/ask', { question: 'What is second?' });
    // Its document is written just after the answer: listed once it is there.
    await client.waitFor('window/showDocument', (p) => p.uri.endsWith('what-is-second.md'));
    const result = await client.request('workspace/executeCommand', { command: 'buckley.conversations', arguments: [] });
    expect(result.conversations.map((c: any) => [c.title, c.turns])).toEqual([
      ['What is second?', 1],
      ['What is first?', 2],
    ]);
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.endsWith('/conversations.md'));
    const listing = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(listing).toMatch(/- What is second\? — 1 turn\(s\)[^\n]*\n {2}\/.*what-is-second\.md\n- What is first\? — 2 turn\(s\)/);
  });

  it('survives a restart: an agent that cannot load sessions gets the earlier turns with the follow-up', async () => {
    const stateDir = tempDir('buckley-conv-');
    const before = await TestClient.start({ stateDir });
    const first = await before.request('buckley/ask', { question: 'What is first?' });
    await before.request('buckley/ask', { question: 'What is next?', conversation: first.conversation });
    expect(await before.shutdown()).toBe(0);

    const after = await TestClient.start({ stateDir });
    cleanups.push(() => after.shutdown()); // before its state directory goes
    const followUp = await after.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    // A new agent (and session), told what came before.
    expect(followUp.answer).toBe('recall: turn 1 of this session; earlier questions: []; earlier turns in the prompt: [What is first? | What is next?]');
    const { conversations } = await after.request('buckley/status', null);
    expect(conversations[0]).toMatchObject({ id: first.conversation, turns: 3 });
  });

  it('survives a restart: an agent that can load sessions gets its session back (ACP session/load), not a replay', async () => {
    const stateDir = tempDir('buckley-conv-');
    const env = { SCRIPTED_AGENT_SESSIONS: tempDir('scripted-sessions-') };
    // Where the agent keeps its sessions is its own state: writable in its sandbox, as a user says.
    const initialize = { initializationOptions: { agent: { sandbox: { writable: [env.SCRIPTED_AGENT_SESSIONS] } } } };
    const before = await TestClient.start({ stateDir, env, initialize });
    const first = await before.request('buckley/ask', { question: 'What is first?' });
    expect(await before.shutdown()).toBe(0);

    const after = await TestClient.start({ stateDir, env, initialize });
    cleanups.push(() => after.shutdown());
    const followUp = await after.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    expect(followUp.answer).toBe('recall: turn 2 of this session; earlier questions: [What is first?]');
    // Its history replayed by the agent while loading was not taken for the answer.
    expect(followUp.answer).not.toContain('an earlier answer');
    // Another conversation is another session, loaded or not.
    const other = await after.request('buckley/ask', { question: 'RECALL' });
    expect(other.answer).toBe('recall: turn 1 of this session; earlier questions: []');
  });

  it('survives a restart: an agent that can resume sessions gets its session back with ACP session/resume, preferred to load (no history replayed)', async () => {
    const stateDir = tempDir('buckley-conv-');
    const sessions = tempDir('scripted-sessions-');
    const env = { SCRIPTED_AGENT_SESSIONS: sessions, BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT} --resume` };
    const initialize = { initializationOptions: { agent: { sandbox: { writable: [sessions] } } } };
    const before = await TestClient.start({ stateDir, env, initialize });
    const first = await before.request('buckley/ask', { question: 'What is first?' });
    expect(await before.shutdown()).toBe(0);

    const after = await TestClient.start({ stateDir, env, initialize });
    cleanups.push(() => after.shutdown());
    const followUp = await after.request('buckley/ask', { question: 'RECALL', conversation: first.conversation });
    expect(followUp.answer).toBe('recall: turn 2 of this session; earlier questions: [What is first?]');
    await after.waitFor('window/logMessage', (p) => /resumed the ACP session scripted-\S+ of a conversation followed up \(0 update\(s\) of its history replayed\)/.test(p.message));
    expect(after.stderr + after.all('window/logMessage').map((p) => p.message).join('\n')).not.toContain('session/load for');
  });

  it('sends the thread, within the budget, to a coordinator that keeps no conversations (Buckley)', async () => {
    const buckley = await startFakeBuckley();
    cleanups.push(() => buckley.stop());
    const maxBytes = 4_000;
    const client = await start({ env: { BUCKLEY_COORDINATOR: buckley.address, BUCKLEY_AGENT: undefined }, initialize: { initializationOptions: { context: { maxBytes } } } });
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    for (let turn = 1; turn <= 6; turn++) await client.request('buckley/ask', { question: `Turn ${turn}: ${'and more '.repeat(80)}?`, conversation: first.conversation });
    await client.request('buckley/ask', { question: 'And finally?', conversation: first.conversation });
    const sent = buckley.modelInputs.at(-1)!;
    expect(sent.startsWith('And finally?')).toBe(true);
    expect(sent).toContain('Earlier in this conversation (the question above follows up on it):');
    // The newest turns are sent, the oldest left out — and said so — to keep the budget.
    expect(sent).toContain('The user asked: Turn 6:');
    expect(sent).toMatch(/\(\d+ earlier turn\(s\) left out: over the budget\)/);
    expect(sent).not.toContain('The user asked: What is first?');
    expect(Buffer.byteLength(sent)).toBeLessThanOrEqual(maxBytes);
  });
});
