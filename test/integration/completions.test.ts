/**
 * Inline completions over real stdio (LSP 3.18 textDocument/inlineCompletion, as Neovim 0.12
 * asks for them): the bridge, the embedded coordinator over real gRPC, and a local HTTP server
 * that speaks the OpenAI / llama.cpp completion APIs for real.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CancellationTokenSource, ErrorCodes, ResponseError } from 'vscode-jsonrpc';
import { describe, expect, it } from 'vitest';
import { completionServer } from '../helpers/openai.js';
import { startFakeBuckley } from '../helpers/coordinators.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { REPO } from '../helpers/paths.js';
import { positionAt } from '../helpers/text.js';

const start = startingClients();
const CODE = 'export function add(a: number, b: number): number {\n  return \n}\n';
const CURSOR = CODE.indexOf('return ') + 'return '.length;

/** A Neovim 0.12 session whose coordinator completes code with the model at `url`. */
async function editorWithModel(url: string, completions: object = {}): Promise<TestClient> {
  return start({
    client: 'neovim-0.12.4',
    env: { BUCKLEY_AGENT: undefined },
    initialize: { initializationOptions: { agent: { driver: 'openai', openai: { baseUrl: `${url}/v1`, model: 'coder' } }, completions: { debounceMs: 0, ...completions } } },
  });
}

async function complete(client: TestClient, uri: string, text: string, offset: number, token?: any): Promise<any> {
  return client.request('textDocument/inlineCompletion', { textDocument: { uri }, position: positionAt(text, offset), context: { triggerKind: 2 } }, token);
}

/**
 * The coordinator has answered (its features decide whether completions are offered). The embedded
 * coordinator starts when first needed: asking for the status starts it.
 */
async function ready(client: TestClient): Promise<void> {
  await client.request('buckley/status', {});
  await client.waitFor('$/buckley/features', (features) => features.coordinator?.known === true);
}

describe('inline completions', () => {
  it('are offered to editors that ask for them (Neovim 0.12), not to others, and not when turned off', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;' });
    expect((await editorWithModel(model.url)).initializeResult.capabilities.inlineCompletionProvider).toBeDefined();
    expect((await start({ client: 'neovim-0.10.4' })).initializeResult.capabilities.inlineCompletionProvider).toBeUndefined();
    expect((await editorWithModel(model.url, { enabled: false })).initializeResult.capabilities.inlineCompletionProvider).toBeUndefined();
  });

  it('complete the code at the cursor by fill-in-the-middle: the model gets the code before it as the prompt and after it as the suffix', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;' });
    const client = await editorWithModel(model.url);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    const items = await complete(client, uri, CODE, CURSOR);
    const at = positionAt(CODE, CURSOR);
    expect(items).toEqual([{ insertText: 'a + b;', range: { start: at, end: at } }]);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]).toMatchObject({ path: '/v1/completions', body: { model: 'coder', prompt: CODE.slice(0, CURSOR), suffix: CODE.slice(CURSOR) } });
    const status = await client.request('buckley/status', null);
    expect(status.completions).toEqual({ available: true });
  });

  it('answer the first request even when it comes before the coordinator has said what it offers (as Neovim asks on entering insert mode)', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;' });
    const client = await editorWithModel(model.url);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    // No waiting for $/buckley/features: asked at once.
    expect((await complete(client, uri, CODE, CURSOR)).map((item: any) => item.insertText)).toEqual(['a + b;']);
  });

  it('answer from the last completion while the user types what it offered: no new request', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;' });
    const client = await editorWithModel(model.url);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    await complete(client, uri, CODE, CURSOR);
    const typed = `${CODE.slice(0, CURSOR)}a +${CODE.slice(CURSOR)}`;
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ text: typed }] });
    const items = await complete(client, uri, typed, CURSOR + 3);
    expect(items.map((item: any) => item.insertText)).toEqual([' b;']);
    expect(model.calls).toHaveLength(1);
    // Typed something else: the model is asked again.
    const other = `${CODE.slice(0, CURSOR)}b${CODE.slice(CURSOR)}`;
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 3 }, contentChanges: [{ text: other }] });
    await complete(client, uri, other, CURSOR + 1);
    expect(model.calls).toHaveLength(2);
  });

  it("say a model's failure as the model's: the coordinator did not go away — no reconnection, no call made twice", async () => {
    let calls = 0;
    const model = createServer((req, res) => {
      calls++;
      req.resume().on('end', () => res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"model overloaded"}}'));
    });
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const client = await editorWithModel(`http://127.0.0.1:${(model.address() as AddressInfo).port}`);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    await complete(client, uri, CODE, CURSOR);
    await complete(client, uri, CODE, CURSOR);
    model.close();
    expect(calls).toBe(2);
    const log = client.all('window/logMessage').map((p) => p.message);
    expect(log.filter((line) => line.includes('inline completion failed: OpenAI-compatible model `coder`') && line.includes('answered HTTP 500'))).toHaveLength(2);
    expect(log.filter((line) => /went away|reconnecting/.test(line))).toEqual([]);
    expect(client.all('window/showMessage')).toEqual([]);
  });

  it('are cancelled end to end: $/cancelRequest cancels the gRPC call, which aborts the model\'s HTTP request', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'never', hold: () => true });
    const client = await editorWithModel(model.url);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    const source = new CancellationTokenSource();
    const asked = model.nextCall();
    const result = complete(client, uri, CODE, CURSOR, source.token);
    const call = await asked;
    source.cancel();
    await expect(result).rejects.toSatisfy((error: unknown) => error instanceof ResponseError && error.code === -32800);
    expect(await call.aborted).toBe(true);
  });

  it('give way to a newer request for the same document: the older one is cancelled, its HTTP request aborted', async () => {
    let first = true;
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;', hold: () => (first ? !(first = false) : false) });
    const client = await editorWithModel(model.url);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    const asked = model.nextCall();
    // Its outcome is awaited below; it may come before the newer one's answer.
    const older = expect(complete(client, uri, CODE, CURSOR)).rejects.toSatisfy((error: unknown) => error instanceof ResponseError && error.code === -32800);
    const held = await asked;
    const newer = await complete(client, uri, CODE, CURSOR);
    expect(newer.map((item: any) => item.insertText)).toEqual(['a + b;']);
    await older;
    expect(await held.aborted).toBe(true);
  });

  it("use llama.cpp's /infill where there is no /v1/completions, and a chat completion where there is neither", async () => {
    const infill = await completionServer({ ways: ['infill', 'chat'], reply: () => 'a + b;' });
    const client = await editorWithModel(infill.url);
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    expect((await complete(client, uri, CODE, CURSOR)).map((item: any) => item.insertText)).toEqual(['a + b;']);
    expect(infill.calls.map((call) => call.path)).toEqual(['/infill']);
    expect(infill.calls[0]!.body).toMatchObject({ input_prefix: CODE.slice(0, CURSOR), input_suffix: CODE.slice(CURSOR) });

    const chat = await completionServer({ ways: ['chat'], reply: () => '```ts\na + b;\n```' });
    const chatClient = await editorWithModel(chat.url);
    await ready(chatClient);
    const chatUri = await chatClient.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    // The fence a chat model puts around it anyway is taken off.
    expect((await complete(chatClient, chatUri, CODE, CURSOR)).map((item: any) => item.insertText)).toEqual(['a + b;']);
    expect(chat.calls.at(-1)!.body.messages.at(-1).content).toContain(`${CODE.slice(0, CURSOR)}<CURSOR>${CODE.slice(CURSOR)}`);
  });

  it('never carry more than their budget of the code around the cursor', async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => '0;' });
    const client = await editorWithModel(model.url, { maxBytes: 1000 });
    await ready(client);
    const big = `${'// filler line\n'.repeat(5000)}const x = \n${'// after\n'.repeat(5000)}`;
    const cursor = big.indexOf('const x = ') + 'const x = '.length;
    const uri = await client.open(`${REPO}fixtures/workspace/big.ts`, big);
    await complete(client, uri, big, cursor);
    const { prompt, suffix } = model.calls[0]!.body;
    expect(Buffer.byteLength(prompt) + Buffer.byteLength(suffix)).toBeLessThanOrEqual(1000);
    expect(prompt.endsWith('const x = ')).toBe(true);
    expect(suffix.startsWith('\n// after')).toBe(true);
  });

  it("go to Buckley's StreamInlineCompletions: the cursor an empty selection in the context's document, the code before it as prompt; streamed pieces joined", async () => {
    const buckley = await startFakeBuckley();
    const client = await start({ client: 'neovim-0.12.4', env: { BUCKLEY_COORDINATOR: buckley.address, BUCKLEY_AGENT: undefined } });
    try {
      const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
      expect((await complete(client, uri, CODE, CURSOR)).map((item: any) => item.insertText)).toEqual(['a + b;']);
      const { request } = await buckley.waitFor('StreamInlineCompletions');
      const at = positionAt(CODE, CURSOR);
      expect(request).toMatchObject({ prompt: CODE.slice(0, CURSOR), max_suggestions: 1, context: { document: { uri, content: CODE, selection: { start: at, end: at } } } });
    } finally {
      await client.shutdown();
      await buckley.stop();
    }
  });

  it('are none, with the reason in buckley/status, where the agent cannot complete code (an ACP agent)', async () => {
    const client = await start({ client: 'neovim-0.12.4' });
    await ready(client);
    const uri = await client.open(`${REPO}fixtures/workspace/add.ts`, CODE);
    expect(await complete(client, uri, CODE, CURSOR)).toBeNull();
    const status = await client.request('buckley/status', null);
    expect(status.completions).toEqual({ available: false, why: expect.stringContaining('the coordinator does not complete code') });
    // Bad params are still a JSON-RPC error, not a crash.
    await expect(client.request('textDocument/inlineCompletion', { textDocument: {}, position: { line: -1 } })).rejects.toSatisfy(
      (error: unknown) => error instanceof ResponseError && error.code === ErrorCodes.InvalidParams,
    );
  });
});
