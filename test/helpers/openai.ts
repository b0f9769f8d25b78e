/**
 * A local HTTP server that speaks the OpenAI chat-completions API for real (GET /v1/models, POST
 * /v1/chat/completions streamed as server-sent events): the stand-in for an LLM service, which
 * cannot run here. `reply` gives the pieces of each answer.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterEach } from 'vitest';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

export async function sseServer(reply: (req: IncomingMessage, body: any) => Promise<string[]>): Promise<{ url: string }> {
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    if (req.url === '/v1/models' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'llama3:8b', object: 'model' }] }));
      return;
    }
    if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const pieces = await reply(req, JSON.parse(raw));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}` };
}
