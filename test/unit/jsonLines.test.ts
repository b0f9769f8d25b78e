/**
 * A peer's JSON-RPC lines, each within a bound (src/jsonLines.ts): lines within it pass whole,
 * however the chunks cut them; a line past it is never held whole: a request becomes our
 * extension request with its id, method and size, a response an error to its id, a notification
 * our extension notification — the lines after it untouched.
 */
import { describe, expect, it } from 'vitest';
import { boundedLines, OVERSIZED_METHOD, oversizedWords, type Oversized } from '../../src/jsonLines.js';
import { tooLarge } from '../../src/acp/face.js';

async function through(chunks: string[], limit: number): Promise<{ lines: string[]; dropped: Oversized[] }> {
  const dropped: Oversized[] = [];
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of boundedLines(input, limit, 'the reader', (line) => dropped.push(line))) text += decoder.decode(chunk, { stream: true });
  return { lines: text.split('\n'), dropped };
}

describe("the ACP face's input lines", () => {
  it('passes lines within the bound whole, however the chunks cut them, and the last one without its newline', async () => {
    const { lines, dropped } = await through(['{"a":', '1}\n{"b"', ':2}\n\n{"c":3}'], 20);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '', '{"c":3}', '']);
    expect(dropped).toEqual([]);
  });

  it('replaces a request past the bound by our extension request with its id, method and size; the next line untouched', async () => {
    const big = `{"jsonrpc":"2.0","id":"req-7","method":"session/prompt","params":{"text":"${'x'.repeat(200)}"}}`;
    const { lines, dropped } = await through([big.slice(0, 50), big.slice(50, 120), `${big.slice(120)}\n{"id":8}\n`], 100);
    expect(dropped).toEqual([{ id: 'req-7', method: 'session/prompt', response: false, bytes: big.length }]);
    expect(JSON.parse(lines[0]!)).toEqual({ jsonrpc: '2.0', id: 'req-7', method: OVERSIZED_METHOD, params: { method: 'session/prompt', bytes: big.length } });
    expect(lines.slice(1)).toEqual(['{"id":8}', '']);
  });

  it("finds a request's id and method at its end where its params come first, and never takes an id inside its params for its own", async () => {
    const late = `{"params":{"id":99,"content":"${'q'.repeat(300)}"},"method":"session/prompt","jsonrpc":"2.0","id":"late-1"}`;
    const { lines, dropped } = await through([`${late}\n`], 100);
    expect(dropped).toEqual([{ id: 'late-1', method: 'session/prompt', response: false, bytes: late.length }]);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 'late-1', method: OVERSIZED_METHOD });
    // A notification whose params hold an "id": no id of its own, so nothing answers it as a request.
    const note = `{"jsonrpc":"2.0","method":"session/update","params":{"id":5,"x":"${'q'.repeat(300)}"}}`;
    expect((await through([`${note}\n`], 100)).dropped).toEqual([{ method: 'session/update', response: false, bytes: note.length }]);
  });

  it('finds a line past the bound inside one chunk longer than the bound, between lines within it', async () => {
    const big = `{"jsonrpc":"2.0","id":3,"method":"fs/write_text_file","params":{"content":"${'z'.repeat(300)}"}}`;
    const { lines, dropped } = await through([`{"id":1}\n${big}\n{"id":2}\n{"id":4}\n`], 100);
    expect(dropped.map((line) => line.id)).toEqual([3]);
    expect(lines.map((line) => (line.includes(OVERSIZED_METHOD) ? 'replaced' : line))).toEqual(['{"id":1}', 'replaced', '{"id":2}', '{"id":4}', '']);
  });

  it('puts our notification, naming the method, size and ACP session, in the place of a notification past the bound', async () => {
    const update = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"text":"${'y'.repeat(300)}"}}}`;
    const { lines, dropped } = await through([`${update}\n{"id":1}\n`], 100);
    expect(dropped).toEqual([{ method: 'session/update', response: false, bytes: update.length, sessionId: 's-1' }]);
    expect(JSON.parse(lines[0]!)).toEqual({ jsonrpc: '2.0', method: OVERSIZED_METHOD, params: { method: 'session/update', bytes: update.length, sessionId: 's-1' } });
    expect(lines.slice(1)).toEqual(['{"id":1}', '']);
  });

  it('answers a response past the bound with an error to its id, in words: the request it answered fails, nothing waits', async () => {
    const answer = `{"jsonrpc":"2.0","id":12,"result":{"content":"${'z'.repeat(3 * 1024 * 1024)}"}}`;
    const { lines, dropped } = await through([answer, '\n'], 1024 * 1024);
    expect(dropped).toEqual([{ id: 12, method: 'answer', response: true, bytes: answer.length }]);
    expect(JSON.parse(lines[0]!)).toEqual({ jsonrpc: '2.0', id: 12, error: { code: -32600, message: 'an answer was 3 MB, over the 1 MB the reader reads in one message: send less in it' } });
  });

  it('says which message, how large, the bound and what to do', () => {
    expect(oversizedWords({ method: 'fs/write_text_file', bytes: 40 * 1024 * 1024 }, 32 * 1024 * 1024, 'buckley-lsp')).toBe('the fs/write_text_file message was 40 MB, over the 32 MB buckley-lsp reads in one message: send less in it');
    expect(tooLarge({ method: 'session/prompt', bytes: 60 * 1024 * 1024 })).toBe('the session/prompt message was 60 MB, over the 48 MB buckley-lsp acp reads in one message: send less in it (a prompt carries at most 20 MB of images; attach large files by link)');
  });
});
