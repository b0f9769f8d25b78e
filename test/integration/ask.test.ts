/**
 * Asking about a selection over real stdio: the built bin, the embedded coordinator over real
 * gRPC, and our scripted ACP agent (fixtures/scripted-agent.mjs) as a real process.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResponseError } from 'vscode-jsonrpc';
import { describe, expect, it } from 'vitest';
import { startingClients } from '../helpers/lspClient.js';
import { linesRange, positionOf, rangeOf } from '../helpers/text.js';

const start = startingClients();

const optedIn = { experimental: { buckley: { taskProgress: true, approveTool: true } } };

describe('buckley/ask', () => {
  it('answers a question about a selection, read-only, and delivers the answer every way the editor takes it', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export async function withRetry', 'throw lastError;');

    const result = await client.request('buckley/ask', {
      question: 'What does withRetry do?',
      context: { activeFile: uri, selection },
    });

    expect(result.answer).toContain('You asked: What does withRetry do?');
    const lines = selection.end.line - selection.start.line;
    expect(result.answer).toContain(`The selection has ${lines} line(s) and starts with \`export async function withRetry`);
    // An ask is read-only: the coordinator allowed the read and declined the edit without asking.
    expect(result.answer).toContain('Permission to read: yes; permission to edit: no.');
    expect(result.references).toEqual([{ uri, range: selection, title: 'Asked about' }]);
    expect(client.all("window/showMessageRequest")).toEqual([]);

    // (a) a markdown answer document, opened with showDocument
    const shown = await client.waitFor('window/showDocument');
    const document = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(shown.uri).toMatch(/\.md$/);
    expect(document).toContain('# What does withRetry do?');
    expect(document).toContain('*About `retry.ts`, lines 3-13 — ');
    // Wrapped for editors that do not wrap: the same words.
    expect(document.replace(/\s+/g, ' ')).toContain(result.answer.replace(/\s+/g, ' '));
    // (c) a one-line summary of at most 60 characters, saying what happened and where the answer is
    const summary = await client.waitFor('window/showMessage', (p) => p.message.startsWith('answered «'));
    expect(summary.message).toBe('answered «What does withRetry do?»: answer opened');
    // (d) the full answer in the log
    await client.waitFor('window/logMessage', (p) => p.message.includes(result.answer));
    // (b) hover over the asked range shows it
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'lastError = error') });
    expect(hover.contents.kind).toBe('markdown');
    expect(hover.contents.value).toContain(result.answer);
    // ...and only there
    const outside = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'export function backoff') });
    expect(outside).toBeNull();
    // The user's file was not touched.
    expect(client.all('workspace/applyEdit')).toEqual([]);

    // The answer stays on its code while the user edits above it.
    await client.notify('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// 🚀 a new first line\n' }],
    });
    const edited = '// 🚀 a new first line\n' + text;
    const moved = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(edited, 'lastError = error') });
    expect(moved?.contents.value).toContain(result.answer);
    expect(moved.range).toEqual(linesRange(edited, 'export async function withRetry', 'throw lastError;'));
  });

  it('rejects bad params with InvalidParams saying what is wrong, and lives on', async () => {
    const client = await start();
    await expect(client.request('buckley/ask', { question: '' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.question: question must not be empty'),
    });
    await expect(client.request('buckley/ask', { question: 'why?', context: { selection: { start: { line: -1 } } } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.context.selection.start.line'),
    });
    const status = await client.request('buckley/status', {});
    expect(status.server.name).toBe('buckley-lsp');
  });

  it('streams partial results and reports work-done progress on the client token', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const result = await client.request('buckley/ask', {
      question: 'Why the backoff?',
      context: { activeFile: uri, selection: rangeOf(text, 'return 2 ** attempt * 100;') },
      workDoneToken: 'work-1',
      partialResultToken: 'partial-1',
    });
    const pieces = client.all('$/progress').filter((p) => p.token === 'partial-1').map((p) => p.value.answer);
    expect(result.answer).toBe('');
    expect(pieces.join('')).toContain('You asked: Why the backoff?');
    const work = client.all('$/progress').filter((p) => p.token === 'work-1').map((p) => p.value);
    expect(work[0]).toMatchObject({ kind: 'begin', title: 'Buckley: Why the backoff?', cancellable: true });
    expect(work.at(-1)).toEqual({ kind: 'end', message: 'Answered' });
  });

  it('keeps each ask in a conversation of its own, follows one up with its id, and never lends its history to a task', async () => {
    const client = await start();
    const first = await client.request('buckley/ask', { question: 'What is first?' });
    const other = await client.request('buckley/ask', { question: 'What is other?' });
    // The scripted agent counts turns per agent session: a fresh session answers its turn 1.
    expect(first.conversation).not.toBe(other.conversation);
    expect(first.answer).toMatch(/turn 1 of session/);
    expect(other.answer).toMatch(/turn 1 of session/);
    const followUp = await client.request('buckley/ask', { question: 'And then?', conversation: first.conversation });
    expect(followUp.conversation).toBe(first.conversation);
    expect(followUp.answer).toMatch(/turn 2 of session/);
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy the config' });
    const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "Tidy the config"`));
    expect(taskId).toBeTruthy();
    expect(logged.message).toMatch(/turn 1 of session/);
  });

  it('shows the answer as it is written: its first words are the progress message before the ask ends', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const { CancellationTokenSource, ResponseError: Cancelled } = await import('vscode-jsonrpc');
    const source = new CancellationTokenSource();
    let settled = false;
    // HANG writes one piece of its answer, then waits until cancelled.
    const asked = client.request('buckley/ask', { question: 'HANG while I watch', workDoneToken: 'watch-1' }, source.token).finally(() => (settled = true));
    const shown = await client.waitFor('$/progress', (p) => p.token === 'watch-1' && p.value.kind === 'report' && p.value.message?.includes('Thinking'));
    expect(shown.value.message).toBe('Thinking for a very long time…');
    expect(settled).toBe(false);
    source.cancel();
    await expect(asked).rejects.toBeInstanceOf(Cancelled);
  });

  it('does not wait for the editor to accept a progress token: steps seen before are replayed in order once it has', async () => {
    let accept!: () => void;
    const accepted = new Promise<null>((resolve) => (accept = () => resolve(null)));
    let slow = false;
    const client = await start({ client: 'neovim-0.10.4', handlers: { 'window/workDoneProgress/create': () => (slow ? accepted : null) } });
    // The agent started first: the answer below comes well within the token request's deadline (2 s), however loaded the machine.
    await client.request('buckley/ask', { question: 'INSTANT to start the agent' });
    slow = true;

    const result = await client.request('buckley/ask', { question: 'INSTANT while the editor is slow' });
    expect(result.answer).toBe('ok');
    // The answer came while the token request was still unanswered; nothing used the token yet.
    const create = client.all('window/workDoneProgress/create').at(-1);
    expect(create).toBeDefined();
    expect(client.all('$/progress').filter((p) => p.token === create.token)).toEqual([]);

    // Accepted: the progress begins and ends on that token (had the bridge given up on it, it never would).
    accept();
    await client.waitFor('$/progress', (p) => p.token === create.token && p.value.kind === 'end');
    const work = client.all('$/progress').filter((p) => p.token === create.token).map((p) => p.value.kind);
    expect(work[0]).toBe('begin');
    expect(work.at(-1)).toBe('end');
    expect(client.all('$/progress').find((p) => p.token === create.token && p.value.kind === 'end').value.message).toBe('Answered');
  });

  it('says nothing stale when the editor refuses the progress token after the answer: the steps go to the log', async () => {
    let refuse!: () => void;
    const refused = new Promise<never>((_, reject) => (refuse = () => reject(new ResponseError(-32603, 'no progress here'))));
    let slow = false;
    const client = await start({ client: 'neovim-0.10.4', handlers: { 'window/workDoneProgress/create': () => (slow ? refused : null) } });
    // The agent started first: the answer below comes well within the token request's deadline (2 s), however loaded the machine.
    await client.request('buckley/ask', { question: 'INSTANT to start the agent' });
    slow = true;

    const result = await client.request('buckley/ask', { question: 'INSTANT and then refused' });
    expect(result.answer).toBe('ok');
    refuse();
    await client.waitFor('window/logMessage', (p) => p.message === 'Buckley: INSTANT and then refused: Answered');
    // No "Buckley: INSTANT and then refused…" start message after the answer.
    expect(client.all('window/showMessage').filter((p) => p.message.startsWith('working on «INSTANT and then refused'))).toEqual([]);
    expect(client.all('$/progress').filter((p) => p.value?.kind && p.token === client.all('window/workDoneProgress/create').at(-1).token)).toEqual([]);
  });

  it('writes the answer document even when the answer directory was removed since the last answer', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    await client.request('buckley/ask', { question: 'first question' });
    const first = fileURLToPath((await client.waitFor('window/showDocument')).uri);
    rmSync(dirname(first), { recursive: true });

    await client.request('buckley/ask', { question: 'second question' });
    const second = await client.waitFor('window/showDocument', (p) => p.uri.includes('second-question'));
    expect(readFileSync(fileURLToPath(second.uri), 'utf8')).toContain('# second question');
  });

  it('is cancelled by $/cancelRequest, and a hanging ask does not hold up the next', async () => {
    const client = await start();
    const { CancellationTokenSource } = await import('vscode-jsonrpc');
    const source = new CancellationTokenSource();
    const cancelled = client.connection.sendRequest('buckley/ask', { question: 'HANG please' }, source.token);
    await client.waitFor('window/logMessage', (p) => p.message.includes('speaks ACP'));
    source.cancel();
    await expect(cancelled).rejects.toMatchObject({ code: -32800 });

    const hanging = client.request('buckley/ask', { question: 'HANG forever' }).catch((error) => error);
    const next = await client.request('buckley/ask', { question: 'Still there?' });
    expect(next.answer).toContain('You asked: Still there?');
    // Shutdown ends the hanging ask too: nothing is left waiting.
    await client.shutdown();
    expect(await hanging).toMatchObject({ code: -32800 });
  });

  it('reports an agent crash clearly and restarts the agent for the next ask', async () => {
    const client = await start();
    await expect(client.request('buckley/ask', { question: 'CRASH NOW' })).rejects.toMatchObject({
      code: -32803,
      message: expect.stringMatching(/Buckley could not answer: scripted-agent.mjs exited with code 3/),
    });
    const next = await client.request('buckley/ask', { question: 'Are you back?' });
    expect(next.answer).toContain('You asked: Are you back?');
  });

  it('gets emoji and other astral characters right (UTF-16 positions, incremental sync)', async () => {
    const client = await start({ initialize: { capabilities: optedIn } });
    const text = 'const rocket = "🚀";\nconst math = "𝔸𝔹ℂ";\n';
    const uri = await client.open(`${process.cwd()}/fixtures/workspace/astral.ts`, text);
    // Insert a line before, with an emoji, through an incremental change.
    await client.notify('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: 'const face = "😀";\n' }],
    });
    const current = 'const face = "😀";\n' + text;
    // A selection whose end falls inside the surrogate pair of 𝔹 is widened, never cut.
    const from = positionOf(current, 'const math');
    const end = positionOf(current, '𝔹', 1);
    const result = await client.request('buckley/ask', { question: 'What is this?', context: { activeFile: uri, selection: { start: from, end } } });
    expect(result.answer).toContain('starts with `const math = "𝔸𝔹`');
    expect(result.references[0].range.end.character).toBe(end.character + 1);
  });
});

describe('context hygiene', () => {
  it('sends only open documents from inside the workspace along as related documents', async () => {
    const client = await start({ client: 'neovim-0.10.4', env: { BUCKLEY_COORDINATOR: undefined } });
    await client.open('/tmp/outside-the-workspace/secrets.env', 'API_KEY=do-not-send\n', 'dotenv');
    await client.open(`${process.cwd()}/fixtures/workspace/notes.md`, '# Notes\n', 'markdown');
    const { uri } = await client.openFixture('workspace/retry.ts');
    const result = await client.request('buckley/ask', { question: 'What files do you see?', context: { activeFile: uri } });
    // The agent lists the related files it was sent: the workspace one, not the one outside.
    expect(result.answer).toContain('Other open files: notes.md.');
  });

  it("says what the turn cost where the agent reports it: at the end of its progress and in the answer document's footer, never in the answer's words", async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const costly = await client.request('buckley/ask', { question: 'COSTLY question', workDoneToken: 'cost-1' });
    expect(costly.answer).toBe('ok');
    const end = client.all('$/progress').find((p) => p.token === 'cost-1' && p.value.kind === 'end');
    expect(end.value.message).toBe('Answered ($0.0123 · context 42k of 200k tokens)');
    const shown = await client.waitFor('window/showDocument');
    const document = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(document).toContain('ok\n\n*Usage: $0.0123 · context 42k of 200k tokens*\n');
    // A follow-up in the same conversation: the status adds the turns up, per conversation and in all.
    await client.request('buckley/ask', { question: 'COSTLY again', conversation: costly.conversation });
    const status = await client.request('buckley/status', {});
    expect(status.usage).toBe('$0.0246 over 2 turns · context 42k of 200k tokens');
    expect(status.conversations.find((c: any) => c.id === costly.conversation).usage).toBe('$0.0246 over 2 turns · context 42k of 200k tokens');
    // An agent that reports nothing: nothing is said, no "$0.00" made up.
    const plain = await client.request('buckley/ask', { question: 'INSTANT question', workDoneToken: 'cost-2' });
    expect(plain.answer).toBe('ok');
    expect(client.all('$/progress').find((p) => p.token === 'cost-2' && p.value.kind === 'end').value.message).toBe('Answered');
    const second = await client.waitFor('window/showDocument', (p) => p.uri !== shown.uri);
    expect(readFileSync(fileURLToPath(second.uri), 'utf8')).not.toContain('Usage:');
    expect((await client.request('buckley/status', {})).usage).toBe('$0.0246 over 2 turns · context 42k of 200k tokens');
  });
  it("says the turn's tokens where the agent's answer to the prompt carries them: ACP's usage, or its _meta as Gemini CLI puts them", async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const first = await client.request('buckley/ask', { question: 'TOKENS please', workDoneToken: 'tokens-1' });
    expect(client.all('$/progress').find((p) => p.token === 'tokens-1' && p.value.kind === 'end').value.message).toBe('Answered (12k tokens in, 800 out)');
    await client.request('buckley/ask', { question: 'TOKENS in META', conversation: first.conversation, workDoneToken: 'tokens-2' });
    expect(client.all('$/progress').find((p) => p.token === 'tokens-2' && p.value.kind === 'end').value.message).toBe('Answered (3k tokens in, 250 out)');
    expect((await client.request('buckley/status', {})).usage).toBe('2 turns · 15k tokens in, 1k out');
  });

  it("folds the agent's thinking into the answer document, collapsed and quoted — never into the answer's words, hover or log", async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const range = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const asked = await client.request('buckley/ask', { question: 'THINK about the loop', workDoneToken: 'think-1', context: { activeFile: uri, selection: range } });
    expect(asked.answer).toBe('Off by one.');
    const reports = client.all('$/progress').filter((p) => p.token === 'think-1' && p.value.kind === 'report').map((p) => p.value.message);
    expect(reports.some((message) => message.startsWith('Thinking: '))).toBe(true);
    const shown = await client.waitFor('window/showDocument');
    const document = readFileSync(fileURLToPath(shown.uri), 'utf8');
    expect(document).toContain('Off by one.\n\n<details>\n<summary>Thinking</summary>\n\n> Reading the loop. It stops one short.\n> &lt;/details>\n> # Escaped\n\n</details>\n');
    // Its words cannot end the section: the only closing tag is ours.
    expect(document.match(/<\/details>/g)).toHaveLength(1);
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: range.start });
    expect(hover.contents.value).toContain('Off by one.');
    expect(hover.contents.value).not.toContain('Reading the loop');
    // The answer as logged is the answer alone.
    const logged = await client.waitFor('window/logMessage', (p) => p.message.startsWith("Buckley's answer to \"THINK about the loop\""));
    expect(logged.message).not.toContain('It stops one short');
  });

  it('shows the plan as it goes (its step, the share done), and its last state at the end and in the document, even from an agent that plans in an instant', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const asked = await client.request('buckley/ask', { question: 'PLAN the answer', workDoneToken: 'plan-1' });
    expect(asked.answer).toMatch(/^Planned answer to: PLAN the answer/);
    const progress = client.all('$/progress').filter((p) => p.token === 'plan-1').map((p) => p.value);
    // The scripted agent sends its four plans in an instant: batched, only the last may be reported — but it is never lost.
    expect(progress.at(-1)).toEqual({ kind: 'end', message: 'Answered (3 of 3 steps)' });
    for (const report of progress.filter((value) => value.kind === 'report' && value.message.startsWith('Step '))) expect(report.message).toMatch(/^Step \d of 3: /);
    const shown = await client.waitFor('window/showDocument');
    expect(readFileSync(fileURLToPath(shown.uri), 'utf8')).toContain('**Plan** — 3 of 3 steps done\n\n- [x] Read the code\n- [x] Think it over\n- [x] Write the answer\n');
  });
});
