/**
 * Integrity over real stdio, against hostile agents and careless editors: no answer leaks into
 * another, what agents send is shown but never acts on the editor, and URIs that name the same
 * document are the same document.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { CancellationTokenSource } from 'vscode-jsonrpc/node.js';
import { describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../src/wire/client.js';
import { serverCapabilitiesSchema, taskEventSchema } from '../../src/wire/contract.js';
import { startingClients } from '../helpers/lspClient.js';
import { linesRange, positionOf } from '../helpers/text.js';

const start = startingClients();

describe('turns', () => {
  it("never lets a cancelled ask's late output into the next answer, its hover or its document", async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: { agent: { cancelGraceMs: 300 } } });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const context = { activeFile: uri, selection };

    const cancel = new CancellationTokenSource();
    const stubborn = client.request('buckley/ask', { question: 'STUBBORN old question', context, partialResultToken: 'old' }, cancel.token).then(
      () => undefined,
      (error: { code: number }) => error,
    );
    await client.waitFor('$/progress', (p) => p.token === 'old');
    cancel.cancel();
    expect(await stubborn).toMatchObject({ code: -32800 });
    // The agent goes on streaming into the old session; the next ask comes once it was given up.
    await client.waitFor('window/logMessage', (p) => p.message.includes('did not end a cancelled turn within 0.3 s'));

    const result = await client.request('buckley/ask', { question: 'INSTANT new question', context });
    expect(result.answer).toBe('ok');
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'attempt * 100') });
    expect(hover.contents.value).toContain('INSTANT new question');
    expect(hover.contents.value).not.toContain('stale output');
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.includes('instant-new-question'));
    expect(readFileSync(fileURLToPath(shown.uri), 'utf8')).not.toContain('stale output');
    await client.waitFor('window/logMessage', (p) => /ended the abandoned turn of ACP session \S+ \(\d+ late update\(s\) dropped\)/.test(p.message));
  });
});

describe('URIs', () => {
  it('finds a document under every spelling of its URI: escapes in either case, or none', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const path = `${fileURLToPath(new URL('../../fixtures/workspace/', import.meta.url))}odd:name.ts`;
    const spelled = (colon: string) => `file://${path.replace(':', colon)}`;
    const text = 'export const answer = 42;\n';
    await client.notify('textDocument/didOpen', { textDocument: { uri: spelled('%3a'), languageId: 'typescript', version: 1, text } });
    const selection = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };

    const result = await client.request('buckley/ask', { question: 'What is it?', context: { activeFile: spelled('%3A'), selection } });
    expect(result.answer).toContain('The selection has 1 line(s) and starts with `export const answer = 42;`');
    const hover = await client.request('textDocument/hover', { textDocument: { uri: spelled(':') }, position: { line: 0, character: 5 } });
    expect(hover.contents.value).toContain('What is it?');
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri: spelled('%3A') }, range: selection, context: { diagnostics: [] } });
    expect(actions.map((action: any) => action.title)).toContain('Buckley: explain this');

    await client.notify('textDocument/didClose', { textDocument: { uri: spelled('%3A') } });
    await expect(client.request('buckley/ask', { question: 'Still there?', context: { activeFile: spelled('%3a') } })).rejects.toMatchObject({
      message: expect.stringContaining('is not open in the editor and cannot be read from disk (no such file)'),
    });
  });

  it('reads a file the editor has not opened (yet) from disk: a command run as the editor starts the server is answered', async () => {
    const client = await start({ client: 'neovim-0.10.4' });
    const uri = new URL('../../fixtures/workspace/retry.ts', import.meta.url).href;
    const text = readFileSync(fileURLToPath(uri), 'utf8');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');

    const result = await client.request('buckley/ask', { question: 'What does it wait?', context: { activeFile: uri, selection } });
    expect(result.answer).toContain('starts with `export function backoff');
    const hover = await client.request('textDocument/hover', { textDocument: { uri }, position: selection.start });
    expect(hover.contents.value).toContain('What does it wait?');
  });
});

describe('what agents send', () => {
  /** Anything an editor or terminal would act on: C0/C1 controls (but tab and newline), bidi controls, tags. */
  const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u{E0000}-\u{E007F}]/u;
  const strings = (value: unknown): string[] =>
    typeof value === 'string' ? [value] : typeof value === 'object' && value !== null ? Object.values(value).flatMap(strings) : [];

  it('is shown, never acted on: one-line places get no controls, documents and hover show them inert, nothing is ill-formed', async () => {
    const payload = JSON.parse(readFileSync(new URL('../../fixtures/clients/neovim-0.10.4.json', import.meta.url), 'utf8'));
    const client = await start({
      client: 'neovim-0.10.4',
      initialize: { capabilities: { ...payload.capabilities, experimental: { buckley: { taskProgress: true } } } },
    });
    const { uri, text } = await client.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    const { taskId } = await client.request('buckley/executeTask', { task: 'UNSAFE output, please', context: { activeFile: uri, selection } });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    const shown = await client.waitFor('window/showDocument', (p) => p.uri.includes('unsafe-output'));

    const oneLine = [
      ...client.all('window/showMessage').map((p) => p.message),
      ...client.all('$/progress').flatMap((p) => [p.value.title, p.value.message].filter(Boolean)),
      ...client.all('$/buckley/taskProgress').flatMap((p) => [p.message, ...(p.toolExecutions ?? []).map((tool: any) => tool.tool)].filter(Boolean)),
    ];
    expect(oneLine.some((line) => line.includes('ALERT'))).toBe(true);
    for (const line of oneLine) {
      expect(line).not.toMatch(ACTIVE);
      expect(line).not.toContain('\n');
    }
    const document = readFileSync(fileURLToPath(shown.uri), 'utf8');
    const hover = (await client.request('textDocument/hover', { textDocument: { uri }, position: positionOf(text, 'attempt * 100') })).contents.value;
    for (const inert of [document.replace(/ *\n(?!second)/g, ' '), hover]) {
      expect(inert).toContain('red ␛[31mALERT␛[0m bell␇ <U+202E>gnp.exe<U+202C> ␀nul <U+009B>C1 tag<U+E0041><U+E0042> lone\uFFFD end');
      expect(inert).toContain('\nsecond line␍third');
      expect(inert).not.toMatch(ACTIVE);
    }
    // Not one string the server sent is ill-formed Unicode (serde_json and Neovim 0.7.2 reject those).
    for (const message of client.stdoutMessages()) for (const value of strings(message)) expect(value.isWellFormed()).toBe(true);
    for (const line of client.all('window/logMessage').map((p) => p.message)) expect(line).not.toMatch(/\u001b/);
  });
});

describe('the context budget', () => {
  it('holds with 3,000 open documents: the prompt the agent receives is within it, all told', async () => {
    const client = await start();
    const root = fileURLToPath(new URL('../../fixtures/workspace/', import.meta.url));
    for (let i = 0; i < 3000; i++) {
      await client.notify('textDocument/didOpen', {
        textDocument: { uri: `file://${root}generated/module-${i}.ts`, languageId: 'typescript', version: 1, text: `export const value${i} = ${i}; // ${'·'.repeat(80)}\n`.repeat(2) },
      });
    }
    const result = await client.request('buckley/ask', { question: `PROMPT SIZE ${'with a long question '.repeat(50)}` });
    const received = Number(/prompt bytes: (\d+)/.exec(result.answer)![1]);
    expect(received).toBeLessThanOrEqual(250_000);
    expect(received).toBeGreaterThan(200_000); // the budget is used, not wasted
    await client.waitFor('window/logMessage', (p) => /open document\(s\) did not fit the budget: generated\/module-\d+\.ts(, generated\/module-\d+\.ts){9} and \d+ more/.test(p.message));
  });
});

describe('the embedded coordinator', () => {
  it('serves only its own bridge: another local process is refused, whatever identity it claims', async () => {
    const client = await start();
    expect((await client.request('buckley/ask', { question: 'INSTANT hello' })).answer).toBe('ok');
    const { coordinator } = await client.request('buckley/status', {});
    expect(coordinator).toMatchObject({ mode: 'embedded', state: 'ready' });
    const stranger = new CoordinatorClient({ address: coordinator.address, agentId: 'buckley-lsp' });
    try {
      await expect(stranger.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
      const stream = stranger.stream('StreamTask', { task_id: 't', agent_id: 'buckley-lsp', query: 'rm -rf ~' }, taskEventSchema, { timeoutMs: 5000 });
      await expect(stream.next()).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    } finally {
      stranger.close();
    }
  });
});
