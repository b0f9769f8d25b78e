/**
 * The stand-ins for the model APIs the real agents call — Anthropic Messages (Claude Code),
 * OpenAI Responses (Codex), OpenAI chat completions (Qwen Code) and Gemini's
 * streamGenerateContent (Gemini CLI) — each a local HTTP server that speaks its API for real,
 * streaming as the real one does, scripted per test: the script sees each request (its
 * conversation flattened, the tools offered, the tool results given back) and says what the
 * model answers — text, tool calls, or an HTTP error. Every request body is kept, so a test can
 * say what reached the model (and what never did: a secret).
 *
 * No vitest here: the benchmarks use these servers too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type Api = 'anthropic' | 'responses' | 'chat' | 'gemini';

export interface ToolUse {
  name: string;
  input: Record<string, unknown>;
}

export interface Reply {
  /** The answer's words, in pieces (each piece one streamed delta). */
  text?: string | string[];
  /** The model's thinking, before its text, as its API streams reasoning (Anthropic thinking blocks, Gemini thought parts, reasoning_content, reasoning summaries). */
  thinking?: string;
  /** Tools the model calls, after the text. */
  tools?: ToolUse[];
  /** An HTTP error instead of an answer: its status and message. */
  error?: { status: number; message: string };
  /** Keep the answer back until the client goes away (a turn in flight, to cancel). */
  hold?: boolean;
}

export interface ModelCall {
  api: Api;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** The request body as it came. */
  raw: string;
  /** Names of the tools the request offers the model (none: a side query, such as a title). */
  tools: string[];
  /** Every piece of text of the conversation (messages, tool results), in order. */
  texts: string[];
  /** The results of tool calls in the conversation so far, in order. */
  toolResults: string[];
  /** The text of the first user message (the prompt the agent was given, with its own additions). */
  firstUserText: string;
}

export type Script = (call: ModelCall) => Reply | Promise<Reply>;

export interface ModelServer {
  api: Api;
  /** The base URL to give the agent (its API's own root). */
  url: string;
  calls: ModelCall[];
  /** Every request body, concatenated: what reached the model. */
  received(): string;
  /** The script's calls that offered tools (the agent's turns, not its side queries). */
  turns(): ModelCall[];
  close(): Promise<void>;
}

/** What the API-specific parts do: read a request, write a reply. */
export interface Dialect {
  api: Api;
  /** Whether this request is one the model answers (else 404). */
  accepts(method: string, path: string): boolean;
  read(body: any, path: string): Pick<ModelCall, 'tools' | 'texts' | 'toolResults' | 'firstUserText'>;
  /** Writes the reply (streamed when the request asked for a stream). */
  write(res: ServerResponse, reply: Reply, call: ModelCall, ids: () => string): void;
  writeError(res: ServerResponse, status: number, message: string): void;
  /** Requests the dialect answers itself (model lists, token counts): true when it did. */
  answerOther?(req: IncomingMessage, res: ServerResponse, body: any): boolean;
}

/** The request's body; undefined when the agent went away before sending all of it (it cancelled, or its process ended). */
async function bodyOf(req: IncomingMessage): Promise<string | undefined> {
  let raw = '';
  try {
    for await (const chunk of req) raw += chunk;
  } catch {
    return undefined;
  }
  return raw;
}

/** A stand-in listening on `host` (loopback, unless a test needs an address only a proxy reaches). */
export async function startModel(dialect: Dialect, script: Script, host = '127.0.0.1'): Promise<ModelServer> {
  const calls: ModelCall[] = [];
  let next = 0;
  const ids = () => `${++next}`;
  const held = new Set<ServerResponse>();
  const server: Server = createServer(async (req, res) => {
    const raw = await bodyOf(req);
    if (raw === undefined) return;
    let body: any = {};
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      // not JSON: answered as a bad request below, if it is a model call
    }
    const path = req.url ?? '/';
    if (dialect.answerOther?.(req, res, body)) return;
    if (!dialect.accepts(req.method ?? 'GET', path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `not found: ${req.method} ${path}` } }));
      return;
    }
    const call: ModelCall = { api: dialect.api, path, headers: req.headers, body, raw, ...dialect.read(body, path) };
    calls.push(call);
    let reply: Reply;
    try {
      reply = await script(call);
    } catch (error) {
      reply = { error: { status: 500, message: `the test's script failed: ${(error as Error).message}` } };
    }
    if (reply.error) return dialect.writeError(res, reply.error.status, reply.error.message);
    if (reply.hold) {
      held.add(res);
      res.once('close', () => held.delete(res));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      return;
    }
    dialect.write(res, reply, call, ids);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as { port: number };
  return {
    api: dialect.api,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    calls,
    received: () => calls.map((call) => call.raw).join('\n'),
    turns: () => calls.filter((call) => call.tools.length > 0),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Server-sent events, as the APIs write them: `event:` (when named) and `data:` lines. */
export function sse(res: ServerResponse, events: { event?: string; data: unknown }[], done?: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const { event, data } of events) res.write(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  res.end(done ?? '');
}

export function pieces(text: Reply['text']): string[] {
  if (text === undefined) return [];
  return typeof text === 'string' ? [text] : text;
}

/** Every string under `value`, depth first (the texts of a message, whatever its shape). */
export function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsIn(item, into);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into);
  return into;
}
