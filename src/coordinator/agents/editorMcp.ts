/**
 * Our editor MCP server, offered to every ACP session: the agent's tools for what the editor
 * holds — the open files (and which have unsaved edits), the selection, a file as its buffer has
 * it. It is how agents whose own tools read the disk (and skip ACP's `fs/read_text_file`) see
 * the user's unsaved edits. A read goes the way `fs/read_text_file` goes (the turn's rules: the
 * workspace, secrets kept out, the editor's buffer first).
 *
 * MCP's streamable HTTP transport (JSON answers, no event stream) on 127.0.0.1 only; every
 * request must carry the per-process secret, and each session has its own path, so a call is
 * answered with that session's turn. An agent that takes no HTTP MCP servers gets a stdio command
 * (editorMcpRelay.ts) that relays to it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type * as acp from '@agentclientprotocol/sdk';
import type { Logger } from '../../logger.js';
import { EDITOR_MCP_NAME, EDITOR_MCP_SECRET_ENV, EDITOR_MCP_URL_ENV } from './editorMcpNames.js';
import { EDITOR_TOOLS, callEditorTool, type EditorAccess } from './editorTools.js';

const PROTOCOL_VERSIONS = ['2025-06-18', '2025-03-26', '2024-11-05'];
/** A request's body at most (a tool call is a few hundred bytes). */
const MAX_BODY_BYTES = 1024 * 1024;

interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

/** One session's place on the server: its entry for `session/new`, and the turn it answers with. */
export interface EditorSlot {
  server: acp.McpServer;
  /** The session whose turn a call is answered with (known once `session/new` answered). */
  bind(access: () => EditorAccess | undefined): void;
  release(): void;
}

export class EditorMcpServer {
  private readonly secret = randomBytes(32).toString('hex');
  private readonly slots = new Map<string, (() => EditorAccess | undefined) | undefined>();
  private listening: Promise<string> | undefined;
  private server: Server | undefined;
  private saidNoRelay = false;
  private saidNoListen = false;

  constructor(
    private readonly logger: Logger,
    private readonly version: string,
    /** The stdio relay's script (dist/buckley-lsp-editor-mcp.js); found next to this bundle when not given. */
    private readonly relay: string | undefined = defaultRelay(),
  ) {}

  /** A place for a new session: HTTP where the agent takes it, else the stdio relay; undefined where neither can be offered. */
  async slot(http: boolean): Promise<EditorSlot | undefined> {
    if (!http && !this.relay) {
      if (!this.saidNoRelay) this.logger.warn(`the editor MCP server is not offered: the agent takes only stdio MCP servers, and the relay (buckley-lsp-editor-mcp.js) is not next to the coordinator`);
      this.saidNoRelay = true;
      return undefined;
    }
    let base: string;
    try {
      base = await this.listen();
    } catch (error) {
      // Sessions go on without the editor tools; said once.
      if (!this.saidNoListen) this.logger.warn(`the editor MCP server is not offered: it could not listen on 127.0.0.1 (${(error as Error).message})`);
      this.saidNoListen = true;
      return undefined;
    }
    const id = randomBytes(12).toString('hex');
    this.slots.set(id, undefined);
    const url = `${base}/mcp/${id}`;
    const server: acp.McpServer = http
      ? { type: 'http', name: EDITOR_MCP_NAME, url, headers: [{ name: 'Authorization', value: `Bearer ${this.secret}` }] }
      : {
          name: EDITOR_MCP_NAME,
          command: process.execPath,
          args: [this.relay!],
          env: [
            { name: EDITOR_MCP_URL_ENV, value: url },
            { name: EDITOR_MCP_SECRET_ENV, value: this.secret },
          ],
        };
    return {
      server,
      bind: (access) => {
        if (this.slots.has(id)) this.slots.set(id, access);
      },
      release: () => this.slots.delete(id),
    };
  }

  /** Where it listens (`http://127.0.0.1:port`), for the agent's confined network; undefined where it cannot listen. */
  async endpoint(): Promise<string | undefined> {
    return this.listen().catch(() => undefined);
  }

  close(): void {
    this.server?.close();
    this.server?.closeAllConnections();
  }

  private listen(): Promise<string> {
    this.listening ??= new Promise<string>((resolve, reject) => {
      const server = createServer((request, response) =>
        // A request that fails midway (its connection gone) must not take the coordinator down.
        this.handle(request, response).catch((error: unknown) => {
          this.logger.warn(`the editor MCP server could not answer a request: ${(error as Error).message}`);
          if (!response.headersSent) plain(response, 500, 'the request failed; see the coordinator log');
          else response.destroy();
        }),
      );
      server.requestTimeout = 15 * 60_000;
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.unref();
        this.server = server;
        const { port } = server.address() as AddressInfo;
        this.logger.info(`the editor MCP server listens on 127.0.0.1:${port}`);
        resolve(`http://127.0.0.1:${port}`);
      });
    });
    return this.listening;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const id = /^\/mcp\/([0-9a-f]{24})$/.exec(request.url ?? '')?.[1];
    // A browser page's request (DNS rebinding) carries an Origin; an agent's does not.
    if (request.headers.origin) return plain(response, 403, 'requests from web pages are refused');
    if (!this.authorized(request.headers.authorization)) return plain(response, 401, 'the secret is missing or wrong');
    if (!id || !this.slots.has(id)) return plain(response, 404, 'no such session (it has ended)');
    if (request.method === 'DELETE') return plain(response, 200, '');
    if (request.method !== 'POST') return plain(response, 405, 'POST only: this server sends no event stream');
    const body = await readBody(request);
    if (body === undefined) return plain(response, 413, `a request may be at most ${MAX_BODY_BYTES} bytes`);
    let messages: JsonRpcMessage[];
    let batch = false;
    try {
      const parsed = JSON.parse(body) as unknown;
      batch = Array.isArray(parsed);
      messages = (batch ? parsed : [parsed]) as JsonRpcMessage[];
      if (!messages.every((message) => message !== null && typeof message === 'object')) throw new Error('not a JSON-RPC message');
    } catch {
      return json(response, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'the body is not JSON-RPC' } });
    }
    const answers = (await Promise.all(messages.map((message) => this.answer(message, id)))).filter((answer) => answer !== undefined);
    if (answers.length === 0) return plain(response, 202, '');
    json(response, 200, batch ? answers : answers[0]);
  }

  private authorized(header: string | undefined): boolean {
    const given = Buffer.from(header ?? '');
    const expected = Buffer.from(`Bearer ${this.secret}`);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  /** A request's answer; none for notifications and responses. */
  private async answer(message: JsonRpcMessage, slot: string): Promise<object | undefined> {
    if (message.id === undefined || message.id === null || typeof message.method !== 'string') return undefined;
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id: message.id, result });
    switch (message.method) {
      case 'initialize': {
        const asked = message.params?.protocolVersion;
        const protocolVersion = typeof asked === 'string' && PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0];
        return reply({
          protocolVersion,
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: EDITOR_MCP_NAME, title: "The user's editor (buckley-lsp)", version: this.version },
          instructions: 'What the user has open in their editor. Read a file with read_file rather than from disk: an open file may have edits the user has not saved.',
        });
      }
      case 'ping':
        return reply({});
      case 'tools/list':
        return reply({ tools: EDITOR_TOOLS });
      case 'tools/call': {
        const access = this.slots.get(slot)?.();
        return reply(await callEditorTool(message.params, access));
      }
      default:
        return { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `${message.method} is not offered by ${EDITOR_MCP_NAME} (it has tools only)` } };
    }
  }
}

function defaultRelay(): string | undefined {
  const path = fileURLToPath(new URL('./buckley-lsp-editor-mcp.js', import.meta.url));
  return existsSync(path) ? path : undefined;
}

function readBody(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', () => resolve(undefined));
  });
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(text);
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
