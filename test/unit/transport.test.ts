/**
 * The stdio framing guard on its own: linear work for big messages, messages passed through as
 * they are, garbage reported once, and the end-of-input marker after everything else.
 */
import { describe, expect, it } from 'vitest';
import { Emitter, type DataCallback, type Message, type MessageReader } from 'vscode-languageserver/node.js';
import { FramingGuard, HeldReader, type FramingError } from '../../src/bridge/transport.js';
import { parseFrames } from '../helpers/lspClient.js';
import { seeded } from '../helpers/random.js';

const frame = (body: string | Buffer) => {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`), bytes]);
};

/** Feeds `input` to a guard in chunks of `chunkSize`, ends it, and returns what came out. */
async function run(input: Buffer, chunkSize: number, options: ConstructorParameters<typeof FramingGuard>[1] = {}) {
  const errors: FramingError[] = [];
  const guard = new FramingGuard((error) => errors.push(error), options);
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => guard.on('end', resolve));
  for (let offset = 0; offset < input.length; offset += chunkSize) guard.write(input.subarray(offset, offset + chunkSize));
  guard.end();
  await ended;
  return { output: Buffer.concat(out), errors, guard };
}

/** Feeds `input` cut into chunks of the given sizes (cycled), ends the guard, returns what came out. */
async function runCut(input: Buffer, sizes: number[]) {
  const errors: FramingError[] = [];
  const guard = new FramingGuard((error) => errors.push(error));
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => guard.on('end', resolve));
  for (let offset = 0, i = 0; offset < input.length; offset += sizes[i++ % sizes.length]!) guard.write(input.subarray(offset, offset + sizes[i % sizes.length]!));
  guard.end();
  await ended;
  return { output: Buffer.concat(out), errors };
}

describe('FramingGuard', () => {
  it('reads a big message in pieces with linear work: each byte is copied at most once', async () => {
    const text = 'x'.repeat(16 * 1024 * 1024);
    const message = frame(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { text } } }));
    const { output, errors, guard } = await run(message, 64 * 1024);
    expect(errors).toEqual([]);
    expect(output.equals(message)).toBe(true);
    // Joining 256 chunks by re-copying the buffer on every chunk would copy ~2 GB.
    expect(guard.copiedBytes).toBeLessThanOrEqual(message.length);
  });

  it('passes many small messages through unchanged, however they are split', async () => {
    const messages = Buffer.concat(Array.from({ length: 500 }, (_, i) => frame(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'buckley/status', params: {} }))));
    for (const chunkSize of [1, 7, 100, 4096, messages.length]) {
      const { output, errors } = await run(messages, chunkSize);
      expect(errors).toEqual([]);
      expect(output.equals(messages)).toBe(true);
    }
  });

  it('gives the same messages and the same errors however hostile input is split, an empty body at a chunk end included', async () => {
    const random = seeded(20261122);
    const pieces: Buffer[] = [frame(''), frame('{"jsonrpc":"2.0","id":1,"method":"buckley/status"}')];
    for (let i = 0; i < 400; i++) {
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'textDocument/hover', params: { n: i } }));
      const kind = Math.floor(random() * 6);
      if (kind === 0) pieces.push(frame(body.subarray(0, Math.floor(random() * body.length)))); // truncated, even to nothing
      else if (kind === 1) pieces.push(body); // no header at all
      else if (kind === 2) pieces.push(Buffer.from(Array.from({ length: Math.floor(random() * 100) }, () => Math.floor(random() * 256)))); // noise
      else if (kind === 3) pieces.push(frame(Buffer.alloc(0)));
      else pieces.push(frame(body));
    }
    pieces.push(frame('{"jsonrpc":"2.0","id":"last","method":"buckley/status"}'));
    const input = Buffer.concat(pieces);
    const whole = await run(input, input.length);
    expect(parseFrames(whole.output).at(-1)).toMatchObject({ id: 'last' });
    // Cut after every header (where an empty body ends a chunk), and at random sizes.
    const cuts = [pieces.map((piece) => piece.length), ...Array.from({ length: 20 }, () => pieces.map(() => 1 + Math.floor(random() * 300)))];
    for (const sizes of cuts) {
      const result = await runCut(input, sizes);
      expect(result.output.equals(whole.output)).toBe(true);
      expect(result.errors).toEqual(whole.errors);
    }
  });

  it('reports garbage once and finds the next message', async () => {
    const good = frame('{"jsonrpc":"2.0","id":1,"method":"buckley/status"}');
    const input = Buffer.concat([Buffer.from('this is not a header\r\n\r\n\x00\x01 and neither is this '.repeat(20)), good]);
    for (const chunkSize of [3, 64, input.length]) {
      const { output, errors } = await run(input, chunkSize);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.code).toBe(-32700);
      expect(output.equals(good)).toBe(true);
    }
  });

  it('skips an oversized body and reads on', async () => {
    const good = frame('{"jsonrpc":"2.0","id":2,"method":"buckley/status"}');
    const input = Buffer.concat([frame('y'.repeat(5000)), good]);
    const { output, errors } = await run(input, 1000, { maxBytes: 4096 });
    expect(errors.map((error) => error.message)).toEqual(['message of 5000 bytes is larger than the 4096-byte limit; skipped']);
    expect(output.equals(good)).toBe(true);
  });

  it('passes on the end-of-input message after everything read before the end', async () => {
    const shutdown = frame('{"jsonrpc":"2.0","id":9,"method":"shutdown"}');
    const { output } = await run(shutdown, 10, { endOfInput: () => ({ jsonrpc: '2.0', method: '$/end' }) });
    expect(output.toString()).toBe(`${shutdown.toString()}${frame('{"jsonrpc":"2.0","method":"$/end"}').toString()}`);
  });
});

describe('the reader that holds what comes after initialize', () => {
  /** A reader whose messages the test hands it. */
  function source() {
    let callback: DataCallback | undefined;
    const reader: MessageReader = {
      onError: new Emitter<Error>().event,
      onClose: new Emitter<void>().event,
      onPartialMessage: new Emitter<never>().event,
      listen: (cb) => ((callback = cb), { dispose: () => undefined }),
      dispose: () => undefined,
    };
    return { reader, send: (message: object) => callback!(message as Message) };
  }

  it('passes messages on until initialize, holds the ones after it, then passes them on in order once released', () => {
    const { reader, send } = source();
    const held = new HeldReader(reader);
    const seen: string[] = [];
    held.listen((message) => seen.push((message as { method?: string }).method ?? 'response'));
    send({ jsonrpc: '2.0', id: 1, method: 'buckley/status' });
    send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { capabilities: {} } });
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    send({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: {} });
    send({ jsonrpc: '2.0', id: 3, method: 'textDocument/hover', params: {} });
    expect(seen).toEqual(['buckley/status', 'initialize']);
    held.release();
    expect(seen).toEqual(['buckley/status', 'initialize', 'initialized', 'textDocument/didOpen', 'textDocument/hover']);
    send({ jsonrpc: '2.0', method: 'exit' });
    expect(seen.at(-1)).toBe('exit');
  });

  it('passes each held message on by itself: one the connection throws on, or a $/cancelRequest without an id, is refused in words and costs none behind it', () => {
    const { reader, send } = source();
    const refused: string[] = [];
    const held = new HeldReader(reader, (_message, refusal) => refused.push(`${refusal.code} ${refusal.message}`));
    const seen: string[] = [];
    held.listen((message) => {
      const method = (message as { method?: string }).method ?? 'response';
      if (method === 'buckley/throws') throw new TypeError('id.toString is not a function');
      seen.push(method);
    });
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } });
    send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: { toString: 1 } } });
    send({ jsonrpc: '2.0', id: 2, method: 'buckley/throws' });
    send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 2 } });
    send({ jsonrpc: '2.0', id: 3, method: 'textDocument/hover', params: {} });
    held.release();
    expect(seen).toEqual(['initialize', '$/cancelRequest', 'textDocument/hover']);
    expect(refused).toEqual(['-32600 $/cancelRequest: params.id must be the id of a request, a number or a string', '-32600 buckley/throws could not be taken (id.toString is not a function)']);
    send({ jsonrpc: '2.0', method: '$/cancelRequest' });
    expect(refused).toHaveLength(3);
  });

  it('refuses an initialize whose params the LSP library would fail on, naming the field; it holds nothing behind it', () => {
    const { reader, send } = source();
    const refused: string[] = [];
    const held = new HeldReader(reader, (_message, refusal) => refused.push(`${refusal.code} ${refusal.message}`));
    const seen: string[] = [];
    held.listen((message) => seen.push((message as { method?: string }).method ?? 'response'));
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: null } });
    send({ jsonrpc: '2.0', id: 2, method: 'buckley/status' });
    expect(refused).toEqual(["-32602 initialize's params are not as LSP says: params.capabilities must be an object, not null"]);
    expect(seen).toEqual(['buckley/status']);
  });

  it('holds nothing when released before initialize, nor after a second initialize', () => {
    const { reader, send } = source();
    const held = new HeldReader(reader);
    const seen: string[] = [];
    held.listen((message) => seen.push((message as { method?: string }).method ?? ''));
    held.release();
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } });
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    expect(seen).toEqual(['initialize', 'initialized']);
  });

  it('lets the held messages go when initialize is answered with an error, and holds again behind the next initialize', () => {
    const { reader, send } = source();
    const held = new HeldReader(reader);
    const seen: string[] = [];
    held.listen((message) => seen.push((message as { method?: string }).method ?? ''));
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } });
    send({ jsonrpc: '2.0', id: 2, method: 'buckley/status' });
    send({ jsonrpc: '2.0', id: 3, method: 'initialize', params: { capabilities: {} } });
    send({ jsonrpc: '2.0', method: 'initialized', params: {} });
    held.answered({ jsonrpc: '2.0', id: 9, result: null } as Message);
    expect(seen).toEqual(['initialize']);
    held.answered({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'cannot read capabilities' } } as Message);
    expect(seen).toEqual(['initialize', 'buckley/status', 'initialize']);
    held.release();
    expect(seen).toEqual(['initialize', 'buckley/status', 'initialize', 'initialized']);
  });
});
