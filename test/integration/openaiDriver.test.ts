/**
 * The OpenAI-compatible driver against a local server that speaks the chat-completions API over
 * real HTTP: an answer streamed for longer than the deadline to start answering is taken whole
 * (the deadline is for the start), and a stream that is no answer ends in words, unread.
 */
import { createServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiDriver } from '../../src/coordinator/agents/openai.js';
import { RootLogger } from '../../src/logger.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A model server whose answers `answer` writes; its base URL. */
async function modelServer(answer: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((request, response) => {
    request.resume().once('end', () => answer(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
}

const piece = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const logger = new RootLogger('error', () => undefined);
const turn = { sessionKey: 'editor-1', prompt: 'hello', readOnly: true };
const sink = { text() {}, tool() {}, plan() {}, thought() {}, notice() {}, permission: async () => 'reject' as const, readFile: async () => '', writeFile: async () => undefined };

describe('the OpenAI-compatible driver', () => {
  it('takes an answer that streams longer than the deadline to start answering, whole', async () => {
    const url = await modelServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // A slow model: a piece every 150 ms, for well past the 300 ms the answer had to start.
      let n = 0;
      const next = () => {
        if (n === 6) return void response.end('data: [DONE]\n\n');
        response.write(piece(`w${n++} `));
        setTimeout(next, 150);
      };
      next();
    });
    const driver = new OpenAiDriver({ baseUrl: url, model: 'slow', logger, connectTimeoutMs: 300 });
    const result = await driver.run(turn, sink as never, new AbortController().signal);
    expect(result).toMatchObject({ text: 'w0 w1 w2 w3 w4 w5 ', stopReason: 'end_turn' });
  });

  it('says a server that does not start answering in time, in seconds', async () => {
    const url = await modelServer(() => undefined);
    const driver = new OpenAiDriver({ baseUrl: url, model: 'silent', logger, connectTimeoutMs: 300 });
    await expect(driver.run(turn, sink as never, new AbortController().signal)).rejects.toThrow(`OpenAI-compatible model \`silent\` at ${url}: did not start answering within 0.3 s. Is the server running?`);
  });

  it('ends a stream whose event never ends in words, without holding it', async () => {
    const url = await modelServer((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // One line, never ended: 16 MB of it, written as the reader takes it.
      const block = `data: ${'x'.repeat(1024 * 1024)}`;
      let sent = 0;
      const more = () => {
        while (sent < 16 && response.write(sent === 0 ? block : 'x'.repeat(1024 * 1024))) sent++;
        if (sent < 16) response.once('drain', more);
      };
      more();
    });
    const driver = new OpenAiDriver({ baseUrl: url, model: 'odd', logger });
    await expect(driver.run(turn, sink as never, new AbortController().signal)).rejects.toThrow(/sent an event over 8 MB: not an answer's piece/);
  });
});
