/**
 * Bad input over the real stdio transport: malformed frames and JSON, wrong types, unknown
 * methods, and a seeded fuzz run of thousands of random and mutated messages. The server answers
 * what deserves an answer with a JSON-RPC error, and keeps answering valid requests afterwards.
 */
import { describe, expect, it } from 'vitest';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { seeded } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();
// No coordinator, no progress or configuration requests: nothing but our bytes on the wire.
const quiet = { env: { BUCKLEY_COORDINATOR: '127.0.0.1:1', BUCKLEY_AGENT: undefined } };

const frame = (body: string | Buffer) => {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`), bytes]);
};
const raw = (client: TestClient, bytes: Buffer | string) =>
  new Promise<void>((resolve, reject) => client.process.stdin!.write(bytes, (error) => (error ? reject(error) : resolve())));
const errorWithId = (client: TestClient, id: number | string | null) => client.errorResponse(id);

describe('bad input', () => {
  it('answers a body that is not JSON with a parse error, and reads on', async () => {
    const client = await start(quiet);
    const parseError = errorWithId(client, null);
    await raw(client, frame('{"jsonrpc": "2.0", "id": 7, "method": "buckley/status", "params": {'));
    expect(await parseError).toMatchObject({ code: -32700, message: expect.stringContaining('Parse error') });
    expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
  });

  it('answers a large body that is not JSON (checked by the reader, not twice) with a parse error, and reads on', async () => {
    const client = await start(quiet);
    const parseError = errorWithId(client, null);
    await raw(client, frame(`{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": "${'x'.repeat(100_000)}"`));
    expect(await parseError).toMatchObject({ code: -32700, message: expect.stringContaining('Parse error') });
    expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
  });

  it('answers a message that is not JSON-RPC 2.0 with Invalid Request, with its id', async () => {
    const client = await start(quiet);
    const invalid = errorWithId(client, 41);
    await raw(client, frame(JSON.stringify({ jsonrpc: '1.0', id: 41, method: 'buckley/status' })));
    expect(await invalid).toMatchObject({ code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' });
    const batch = errorWithId(client, null);
    await raw(client, frame('[{"jsonrpc":"2.0","id":1,"method":"buckley/status"}]'));
    expect(await batch).toMatchObject({ code: -32600 });
    expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
  });

  it('answers buckley/status sent without params, with null params or with {}', async () => {
    const client = await start(quiet);
    // vscode-jsonrpc sends no "params" member for a request without parameters, as Helix and Zed do.
    expect((await client.connection.sendRequest('buckley/status')) as any).toMatchObject({ server: { name: 'buckley-lsp' } });
    for (const [id, params] of [[51, null], [52, {}]] as const) {
      const answered = client.response(id);
      await raw(client, frame(JSON.stringify({ jsonrpc: '2.0', id, method: 'buckley/status', params })));
      expect(await answered).toMatchObject({ result: { server: { name: 'buckley-lsp' } } });
    }
  });

  it('skips garbage between messages and finds the next header', async () => {
    const client = await start(quiet);
    await raw(client, 'this is not a header\r\n\r\n\x00\x01\x02 and neither is this');
    expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
  });

  it('skips a message larger than the limit without reading it', async () => {
    const client = await start(quiet);
    const tooLarge = errorWithId(client, null);
    const size = 101 * 1024 * 1024;
    await raw(client, `Content-Length: ${size}\r\n\r\n`);
    expect(await tooLarge).toMatchObject({ code: -32600, message: expect.stringContaining(`message of ${size} bytes is larger than the`) });
    await raw(client, Buffer.alloc(size, ' '));
    expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
  });

  it('answers wrong param types, unknown methods and out-of-range positions with errors, not crashes', async () => {
    const client = await start(quiet);
    await expect(client.request('textDocument/hover', { textDocument: { uri: 'file:///x' }, position: { line: -1, character: 'a' } })).rejects.toMatchObject({ code: -32602 });
    await expect(client.request('textDocument/codeAction', { textDocument: {}, range: null })).rejects.toMatchObject({ code: -32602 });
    await expect(client.request('buckley/noSuchMethod', {})).rejects.toMatchObject({ code: -32601 });
    const { uri } = await client.openFixture('workspace/retry.ts');
    // A range far beyond the document is clamped, not an error.
    const actions = await client.request('textDocument/codeAction', { textDocument: { uri }, range: { start: { line: 0, character: 0 }, end: { line: 9999, character: 9999 } }, context: { diagnostics: [] } });
    expect(actions.length).toBeGreaterThan(0);
  });

  it("drops document notifications whose fields are not as LSP says, and says so: the server's copy stays text, and what reads it is answered", async () => {
    const client = await start(quiet);
    const { uri } = await client.openFixture('workspace/retry.ts');
    const other = `${uri.slice(0, -'retry.ts'.length)}other.ts`;
    const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
    await client.notify('textDocument/didOpen', { textDocument: { uri: other, languageId: 'typescript', version: 1, text: ['not', 'text'] } });
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 2 }, contentChanges: [{ range, text: 5 }] });
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 3 }, contentChanges: [{ range: 'all', text: '' }] });
    await client.notify('textDocument/didChange', { textDocument: { uri, version: 'four' }, contentChanges: [{ text: '' }] });
    await client.notify('textDocument/didSave', { textDocument: null });
    const ask = (target: string) => client.request('textDocument/codeAction', { textDocument: { uri: target }, range, context: { diagnostics: [] } });
    expect(await ask(other)).toEqual([]);
    expect((await ask(uri)).length).toBeGreaterThan(0);
    const logged = client.all('window/logMessage').map((params) => params.message as string);
    expect(logged).toContainEqual(expect.stringContaining(`ignored the editor's textDocument/didOpen for ${other}, not as LSP says (params.textDocument.text: Invalid input: expected string, received array)`));
    expect(logged).toContainEqual(`[documents] ignored the editor's textDocument/didChange for ${uri}, not as LSP says (params.contentChanges.0.text: Invalid input: expected string, received number): the server's copy of that document may now differ from the editor's until it is closed and opened again`);
    expect(logged).toContainEqual(expect.stringContaining('params.contentChanges.0.range: Invalid input: expected object, received string'));
    expect(logged).toContainEqual(expect.stringContaining('params.textDocument.version: Invalid input: expected number, received string'));
    expect(logged).toContainEqual(expect.stringContaining("ignored the editor's textDocument/didSave, not as LSP says (params.textDocument: Invalid input: expected object, received null)"));
  });

  it('answers workspace/executeCommand whose arguments are not a list with InvalidParams, saying so', async () => {
    const client = await start(quiet);
    await expect(client.request('workspace/executeCommand', { command: 'buckley.status', arguments: { taskId: 'x' } })).rejects.toMatchObject({ code: -32602, message: 'params.arguments: Invalid input: expected array, received object' });
    await expect(client.request('workspace/executeCommand', { arguments: [] })).rejects.toMatchObject({ code: -32602, message: 'params.command: Invalid input: expected string, received undefined' });
  });

  it('refuses requests before initialize and after shutdown, as LSP says', async () => {
    const { spawn } = await import('node:child_process');
    const { StreamMessageReader, StreamMessageWriter, createMessageConnection } = await import('vscode-jsonrpc/node.js');
    const { BIN } = await import('../helpers/paths.js');
    const child = spawn(process.execPath, [BIN, '--stdio'], { env: { PATH: process.env.PATH, HOME: tempDir('buckley-home'), BUCKLEY_COORDINATOR: '127.0.0.1:1' }, stdio: ['pipe', 'pipe', 'ignore'] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    connection.listen();
    try {
      await expect(connection.sendRequest('buckley/status', {})).rejects.toMatchObject({ code: -32002 });
      await connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
      await connection.sendRequest('shutdown');
      await expect(connection.sendRequest('textDocument/hover', { textDocument: { uri: 'file:///x' }, position: { line: 0, character: 0 } })).rejects.toMatchObject({
        code: -32600,
        message: 'textDocument/hover after shutdown: the server is shutting down',
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await connection.sendNotification('exit');
      expect(await exited).toBe(0);
    } finally {
      connection.dispose();
      child.kill();
    }
  });

  it('answers what the editor sends right behind initialize, in order, while the server loads after answering it', async () => {
    const { spawn } = await import('node:child_process');
    const { pathToFileURL } = await import('node:url');
    const { BIN, REPO } = await import('../helpers/paths.js');
    const { parseFrames } = await import('../helpers/lspClient.js');
    const child = spawn(process.execPath, [BIN, '--stdio'], { env: { PATH: process.env.PATH, HOME: tempDir('buckley-home'), BUCKLEY_AGENT: 'no-such-agent' }, stdio: ['pipe', 'pipe', 'ignore'] });
    const uri = pathToFileURL(`${REPO}fixtures/workspace/behind.ts`).href;
    const message = (body: object) => frame(JSON.stringify({ jsonrpc: '2.0', ...body }));
    const range = { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } };
    let out = Buffer.alloc(0);
    const answered = new Promise<any[]>((resolve) =>
      child.stdout!.on('data', (chunk: Buffer) => {
        out = Buffer.concat([out, chunk]);
        const responses = parseFrames(out).filter((m) => m.id !== undefined && m.method === undefined);
        if (responses.length >= 3) resolve(responses);
      }),
    );
    try {
      // One write: the messages after initialize reach the server before it has loaded its handlers.
      child.stdin!.write(
        Buffer.concat([
          message({ id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } }),
          message({ method: 'initialized', params: {} }),
          message({ method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'typescript', version: 1, text: 'const a = 1;\nconst b = 2;\n' } } }),
          // A cancel the connection cannot read costs nothing behind it.
          message({ method: '$/cancelRequest', params: { id: { toString: 1 } } }),
          message({ id: 2, method: 'textDocument/codeAction', params: { textDocument: { uri }, range, context: { diagnostics: [] } } }),
          message({ id: 3, method: 'buckley/noSuchMethod', params: {} }),
        ]),
      );
      const [initialize, actions, unknown] = await answered;
      const logged = parseFrames(out).filter((m) => m.method === 'window/logMessage').map((m) => m.params.message);
      expect(logged).toContain("refused the editor's $/cancelRequest: params.id must be the id of a request, a number or a string");
      expect(initialize).toMatchObject({ id: 1, result: { serverInfo: { name: 'buckley-lsp' } } });
      // The document was opened before the code actions were asked for: they are there.
      expect(actions.id).toBe(2);
      expect(actions.result.map((action: any) => action.title)).toContain('Buckley: explain this');
      expect(unknown).toMatchObject({ id: 3, error: { code: -32601 } });
    } finally {
      child.kill();
    }
  });

  it('answers an initialize whose params are not as LSP says with InvalidParams naming the field, lives on, takes a good one, and refuses a second', async () => {
    const { spawn } = await import('node:child_process');
    const { StreamMessageReader, StreamMessageWriter, createMessageConnection } = await import('vscode-jsonrpc/node.js');
    const { BIN } = await import('../helpers/paths.js');
    const child = spawn(process.execPath, [BIN, '--stdio'], { env: { PATH: process.env.PATH, HOME: tempDir('buckley-home'), BUCKLEY_AGENT: 'no-such-agent' }, stdio: ['pipe', 'pipe', 'ignore'] });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    connection.onRequest(() => null);
    connection.listen();
    try {
      const bad = connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: null });
      const behind = connection.sendRequest('buckley/status', {});
      await expect(bad).rejects.toMatchObject({ code: -32602, message: "initialize's params are not as LSP says: params.capabilities must be an object, not null" });
      await expect(behind).rejects.toMatchObject({ code: -32002 });
      // Taken, it would load a server that fails every request ("could not start its server").
      await expect(connection.sendRequest('initialize', { processId: null, rootUri: 5, capabilities: {}, workspaceFolders: [{ uri: [] }] })).rejects.toMatchObject({
        code: -32602,
        message: "initialize's params are not as LSP says: params.rootUri must be a string, not a number; params.workspaceFolders[0].uri must be a string, not a list",
      });
      const good = await connection.sendRequest<any>('initialize', { processId: null, rootUri: null, capabilities: {} });
      expect(good.serverInfo.name).toBe('buckley-lsp');
      // A connection is initialized once: a second server is never loaded beside the first.
      await expect(connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} })).rejects.toMatchObject({ code: -32600, message: 'initialize was already answered: a connection is initialized once' });
      const status = await connection.sendRequest<any>('buckley/status', {});
      expect(status.server.name).toBe('buckley-lsp');
    } finally {
      connection.dispose();
      child.kill();
    }
  });

  it('survives a seeded fuzz run of thousands of random and mutated messages', async () => {
    const client = await start(quiet);
    const { uri } = await client.openFixture('workspace/retry.ts');
    const random = seeded(20261122);
    const valid = [
      { jsonrpc: '2.0', id: 1, method: 'buckley/status', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'textDocument/hover', params: { textDocument: { uri }, position: { line: 3, character: 4 } } },
      { jsonrpc: '2.0', id: 3, method: 'textDocument/codeAction', params: { textDocument: { uri }, range: { start: { line: 1, character: 0 }, end: { line: 4, character: 0 } }, context: { diagnostics: [] } } },
      { jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri, version: 9 }, contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '//' }] } },
      { jsonrpc: '2.0', id: 4, method: 'buckley/ask', params: { question: 'q' } },
      { jsonrpc: '2.0', id: 5, method: 'workspace/executeCommand', params: { command: 'buckley.cancelTask', arguments: [] } },
      { jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 4 } },
    ];
    for (let i = 0; i < 3000; i++) {
      const base = JSON.stringify({ ...valid[Math.floor(random() * valid.length)], ...(random() < 0.9 ? { id: 1000 + i } : {}) });
      const bytes = mutate(base, random);
      // A fuzzer that says "exit" would end the test, not find a bug.
      if (/"method":"(exit|shutdown|initialize)"/.test(bytes.toString('latin1'))) continue;
      await raw(client, random() < 0.97 ? frame(bytes) : bytes);
    }
    await raw(client, '\r\n\r\n'); // close any header the fuzz left open
    const status = await client.request('buckley/status', {});
    expect(status.server.name).toBe('buckley-lsp');
    expect(client.process.exitCode).toBeNull();
  });
});

function mutate(text: string, random: () => number): Buffer {
  const bytes = Buffer.from(text);
  switch (Math.floor(random() * 6)) {
    case 0:
      return bytes; // valid
    case 1:
      return bytes.subarray(0, Math.floor(random() * bytes.length)); // truncated
    case 2: {
      for (let n = 0; n < 3; n++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256); // flipped bytes
      return bytes;
    }
    case 3:
      return Buffer.from(text.replace(/"(line|character|version)":\d+/g, () => `"$1":${JSON.stringify(['x', -1, 1e308, null, {}][Math.floor(random() * 5)])}`));
    case 4:
      return Buffer.from(text.replace(/"method":"[^"]+"/, `"method":"${['foo/bar', '$/x', '', 'textDocument/definition', 'buckley/ask'][Math.floor(random() * 5)]}"`));
    default:
      return Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256)));
  }
}
