/**
 * The stdio framing guard on its own: linear work for big messages, messages passed through as
 * they are, garbage reported once, and the end-of-input marker after everything else.
 */
import { describe, expect, it } from 'vitest';
import { FramingGuard, type FramingError } from '../../src/transport.js';

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
    const { output } = await run(shutdown, 10, { endOfInput: { jsonrpc: '2.0', method: '$/end' } });
    expect(output.toString()).toBe(`${shutdown.toString()}${frame('{"jsonrpc":"2.0","method":"$/end"}').toString()}`);
  });
});
