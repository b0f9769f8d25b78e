/**
 * Integrity over real stdio, against hostile agents and careless editors: no answer leaks into
 * another, what agents send is shown but never acts on the editor, and URIs that name the same
 * document are the same document.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CancellationTokenSource } from 'vscode-jsonrpc/node.js';
import { describe, expect, it } from 'vitest';
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
    const stubborn = client.request('buckley/ask', { question: 'STUBBORN old question', context, partialResultToken: 'old' }, cancel.token);
    await client.waitFor('$/progress', (p) => p.token === 'old');
    cancel.cancel();
    await expect(stubborn).rejects.toMatchObject({ code: -32800 });
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
