/**
 * The ACP face's input, a line at a time (src/acp/lines.ts): lines within the bound pass whole,
 * however the chunks cut them; a line past it is never held whole and becomes our extension
 * request with its id, method and size (a notification: dropped), the lines after it untouched.
 */
import { describe, expect, it } from 'vitest';
import { boundedLines, OVERSIZED_METHOD, oversizedWords, type Oversized } from '../../src/acp/lines.js';

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
  for await (const chunk of boundedLines(input, limit, (line) => dropped.push(line))) text += decoder.decode(chunk, { stream: true });
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
    expect(dropped).toEqual([{ id: 'req-7', method: 'session/prompt', bytes: big.length }]);
    expect(JSON.parse(lines[0]!)).toEqual({ jsonrpc: '2.0', id: 'req-7', method: OVERSIZED_METHOD, params: { method: 'session/prompt', bytes: big.length } });
    expect(lines.slice(1)).toEqual(['{"id":8}', '']);
  });

  it('drops a notification past the bound (no id to answer), and says so', async () => {
    const cancel = `{"jsonrpc":"2.0","method":"session/cancel","params":{"pad":"${'y'.repeat(300)}"}}`;
    const { lines, dropped } = await through([`${cancel}\n{"id":1}\n`], 100);
    expect(dropped).toEqual([{ method: 'session/cancel', bytes: cancel.length }]);
    expect(lines).toEqual(['{"id":1}', '']);
  });

  it('says which message, how large, the bound and what to do', () => {
    expect(oversizedWords({ method: 'session/prompt', bytes: 60 * 1024 * 1024 })).toBe('the session/prompt message was 60 MB, over the 48 MB buckley-lsp acp reads in one message: send less in it (a prompt carries at most 20 MB of images; attach large files by link)');
  });
});
