/**
 * A local HTTP server that speaks the OpenAI chat-completions API for real (GET /v1/models, POST
 * /v1/chat/completions streamed as server-sent events): the stand-in for an LLM service, which
 * cannot run here. `reply` gives the pieces of each answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach } from 'vitest';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function bodyOf(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return raw;
}

/** GET /v1/models, answered with the one model `id`; false for any other request. */
function listedModels(req: IncomingMessage, res: ServerResponse, id: string): boolean {
  if (req.url !== '/v1/models' || req.method !== 'GET') return false;
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id, object: 'model' }] }));
  return true;
}

/**
 * `usage`: asked for it (`stream_options.include_usage`), the last event before [DONE] says the
 * tokens, as OpenAI sends them (no choices): the prompt's characters / 4 in, a token a piece out.
 * `strict`: a server from before `stream_options`, which refuses it (HTTP 400, naming it).
 * `oddUsage`: usage in a shape of its own (null, words) instead.
 */
export async function sseServer(reply: (req: IncomingMessage, body: any) => Promise<string[]>, options: { strict?: boolean; oddUsage?: boolean } = {}): Promise<{ url: string }> {
  const server: Server = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    if (listedModels(req, res, 'llama3:8b')) return;
    if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw);
    if (options.strict && body.stream_options) {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Unrecognized request argument supplied: stream_options', type: 'invalid_request_error' } }));
      return;
    }
    const pieces = await reply(req, body);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const piece of pieces) {
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
    // `oddUsage`: counts in a shape of its own (fields null or words), as some servers do.
    if (options.oddUsage) res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: null, completion_tokens: 'n/a' } })}\n\n`);
    else if (body.stream_options?.include_usage) {
      const input = Math.ceil(JSON.stringify(body.messages).length / 4);
      res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: input, completion_tokens: pieces.length, total_tokens: input + pieces.length } })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}` };
}

export interface CompletionCall {
  path: string;
  body: any;
  /** Resolves when the exchange is over: true if the client went away before the answer (its request was aborted). */
  aborted: Promise<boolean>;
}

/**
 * A local HTTP server that completes code the ways OpenAI-compatible servers do — POST
 * /v1/completions with `suffix`, llama.cpp's POST /infill, POST /v1/chat/completions — offering
 * only the `ways` given (404 for the others). `reply` gives the completion; `hold` keeps the
 * answer back until the client goes away (a request in flight, to cancel).
 */
export async function completionServer(options: {
  ways: ('completions' | 'infill' | 'chat')[];
  reply: (body: any) => string;
  hold?: (body: any) => boolean;
}): Promise<{ url: string; calls: CompletionCall[]; nextCall(): Promise<CompletionCall> }> {
  const calls: CompletionCall[] = [];
  const waiting: ((call: CompletionCall) => void)[] = [];
  const paths = { completions: '/v1/completions', infill: '/infill', chat: '/v1/chat/completions' } as const;
  const server: Server = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    if (listedModels(req, res, 'coder')) return;
    const way = options.ways.find((candidate) => paths[candidate] === req.url);
    if (!way || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw);
    const aborted = new Promise<boolean>((resolve) => res.once('close', () => resolve(!res.writableEnded)));
    const call: CompletionCall = { path: req.url!, body, aborted };
    calls.push(call);
    waiting.splice(0).forEach((resolve) => resolve(call));
    if (options.hold?.(body)) return;
    const text = options.reply(body);
    const json =
      way === 'completions'
        ? { choices: [{ index: 0, text, finish_reason: 'stop' }] }
        : way === 'infill'
          ? { content: text, stop_type: 'eos' }
          : { choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}`, calls, nextCall: () => new Promise((resolve) => waiting.push(resolve)) };
}
