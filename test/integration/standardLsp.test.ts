/**
 * The ask flow through standard LSP only, as Helix, Zed and plain Neovim get it: code actions
 * that carry their command, workspace/executeCommand answered at once, progress on a token the
 * server creates, answers on hover.
 */
import { describe, expect, it } from 'vitest';
import { startingClients } from '../helpers/lspClient.js';
import { linesRange, positionOf, rangeOf } from '../helpers/text.js';

const start = startingClients();

describe('asking through code actions and commands', () => {
  it('offers explain / find problems / ask «comment question» with commands listed by the server and no edits', async () => {
    const client = await start({ client: 'zed-1.6.0.from-source' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const listed: string[] = client.initializeResult.capabilities.executeCommandProvider!.commands;

    const withQuestion = await client.request('textDocument/codeAction', {
      textDocument: { uri },
      range: linesRange(text, '// why does this wait longer', 'return 2 ** attempt'),
      context: { diagnostics: [] },
    });
    expect(withQuestion.map((action: any) => action.title)).toEqual([
      'Buckley: ask «why does this wait longer after each failure?»',
      'Buckley: run task «why does this wait longer after each failure?»',
      'Buckley: explain this',
      'Buckley: find problems',
      'Buckley: fix problems here',
    ]);
    for (const action of withQuestion) {
      expect(action.edit).toBeUndefined();
      expect(listed).toContain(action.command.command);
    }
    expect(withQuestion[0].command.arguments[0]).toMatchObject({ question: 'why does this wait longer after each failure?', uri });

    const plain = await client.request('textDocument/codeAction', {
      textDocument: { uri },
      range: rangeOf(text, 'let lastError: unknown;'),
      context: { diagnostics: [] },
    });
    expect(plain.map((action: any) => action.title)).toEqual(['Buckley: explain this', 'Buckley: find problems', 'Buckley: fix problems here']);

    const empty = await client.request('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: positionOf(text, 'let lastError'), end: positionOf(text, 'let lastError') },
      context: { diagnostics: [] },
    });
    expect(empty).toEqual([]);
  });

  it("keeps the editor's text when a burst of keystrokes arrives out of order, as Helix 25.01 sends it: changes are applied in version order", async () => {
    const client = await start({ client: 'helix-25.01.1' });
    const uri = await client.open(`${process.cwd()}/fixtures/workspace/typed.ts`, '// \nlet x = 1;\n');
    // "RECALL what?" typed after "// ": version 2 + i for the i-th character, each change right for its own
    // version, sent in the order Helix's log showed for such a burst.
    const typed = 'RECALL what?';
    const key = (i: number) => ({
      textDocument: { uri, version: 2 + i },
      contentChanges: [{ range: { start: { line: 0, character: 3 + i }, end: { line: 0, character: 3 + i } }, text: typed[i] }],
    });
    for (const i of [0, 6, 7, 10, 8, 9, 11, 2, 1, 4, 3, 5]) await client.notify('textDocument/didChange', key(i));
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } }, context: { diagnostics: [] } });
    expect(actions.map((action: any) => action.title)).toContain('Buckley: ask «RECALL what?»');
  });

  it('runs "explain this" from a code action: the command answers at once, progress runs on a server-created token, hover shows the answer', async () => {
    const client = await start({ client: 'helix-25.01.1' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const range = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const [explain] = (await client.request('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } })).filter(
      (action: any) => action.title === 'Buckley: explain this',
    );

    const started = await client.request('workspace/executeCommand', explain.command);
    expect(started).toEqual({ started: true });

    const created = await client.waitFor('window/workDoneProgress/create');
    const end = await client.waitFor('$/progress', (p) => p.token === created.token && p.value.kind === 'end');
    expect(end.value.message).toBe('Answered');
    const begin = client.all('$/progress').find((p) => p.token === created.token && p.value.kind === 'begin');
    expect(begin.value).toMatchObject({ title: 'Buckley: Explain what this code does and why.', cancellable: true });

    // Helix 25.01 opens documents it was sent although it does not advertise showDocument.
    await client.waitFor('window/showDocument');
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'attempt * 100') });
    expect(hover.contents.value).toContain('You asked: Explain what this code does and why.');
    expect(hover.contents.value).toContain('starts with `export function backoff');
    // Helix has no showMessageRequest: nothing may depend on it.
    expect(client.all('window/showMessageRequest')).toEqual([]);
  });

  it('takes buckley.ask with JSON arguments as a Helix key binding writes them (text and buffer name)', async () => {
    const client = await start({ client: 'helix-master-2026-07' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    await client.request('workspace/executeCommand', {
      command: 'buckley.ask',
      arguments: [{ question: 'What is this for?', text: 'return 2 ** attempt * 100;', uri: 'retry.ts' }],
    });
    await client.waitFor('window/logMessage', (p) => p.message.includes('You asked: What is this for?'));
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, '2 ** attempt * 100;', 3) });
    expect(hover.contents.value).toContain('starts with `return 2 ** attempt * 100;`');
  });

  it('explains what is wrong with bad command arguments', async () => {
    const client = await start();
    await expect(client.request('workspace/executeCommand', { command: 'buckley.ask', arguments: [] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('buckley.ask takes one JSON argument'),
    });
    await expect(client.request('workspace/executeCommand', { command: 'buckley.ask', arguments: [{ question: 42 }] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('arguments[0].question'),
    });
  });

  it('stops an ask when the user cancels its progress (window/workDoneProgress/cancel)', async () => {
    const client = await start({ client: 'zed-1.6.0.from-source' });
    await client.request('workspace/executeCommand', { command: 'buckley.ask', arguments: ['HANG until I cancel'] });
    const created = await client.waitFor('window/workDoneProgress/create');
    await client.waitFor('$/progress', (p) => p.token === created.token && p.value.kind === 'begin');
    await client.notify('window/workDoneProgress/cancel', { token: created.token });
    const end = await client.waitFor('$/progress', (p) => p.token === created.token && p.value.kind === 'end');
    expect(end.value.message).toBe('Cancelled');
    await client.waitFor('window/showMessage', (p) => p.message.startsWith('cancelled «'));
  });

  it('without window.workDoneProgress (eglot 1.9) says so with showMessage and logs each step', async () => {
    const client = await start({ client: 'eglot-1.9' });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    await client.request('workspace/executeCommand', {
      command: 'buckley.ask',
      arguments: [{ question: 'PLAN an answer', uri, range: rangeOf(text, 'let lastError: unknown;') }],
    });
    await client.waitFor('window/showMessage', (p) => p.message === 'working on «PLAN an answer»…');
    await client.waitFor('window/logMessage', (p) => p.message.includes('Buckley: PLAN an answer: Answered'));
    await client.waitFor('window/logMessage', (p) => p.message.includes('Planned answer to: PLAN an answer'));
    expect(client.all('window/workDoneProgress/create')).toEqual([]);
    // eglot 1.9 shows plain-text hovers.
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'lastError: unknown') });
    expect(hover.contents.kind).toBe('plaintext');
    expect(hover.contents.value).toContain('Planned answer to: PLAN an answer');
  });

  it('gives Zed, which has no showDocument, the full answer in a markdown prompt', async () => {
    const client = await start({ client: 'zed-1.6.0.from-source' });
    await client.request('workspace/executeCommand', { command: 'buckley.ask', arguments: ['What is a monad?'] });
    const prompt = await client.waitFor('window/showMessageRequest');
    expect(prompt.message).toContain('**What is a monad?**');
    expect(prompt.message).toContain('You asked: What is a monad?');
    expect(client.all('window/showDocument')).toEqual([]);
  });
});
