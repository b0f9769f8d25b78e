/**
 * A test editor: spawns the built `bin` over stdio and talks to it with vscode-jsonrpc, like
 * an editor would. It answers the server's requests (configuration, progress tokens,
 * showDocument, showMessageRequest) and records everything the server sends, so tests can
 * wait on the event they expect.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type MessageConnection,
} from 'vscode-jsonrpc/node.js';
import type { InitializeParams, InitializeResult } from 'vscode-languageserver';
import { afterEach } from 'vitest';
import { BIN, CLIENT_PAYLOADS, fileUri, REPO, SCRIPTED_AGENT } from './paths.js';
import { tempDir } from './temp.js';

export interface Received {
  method: string;
  params: any;
  kind: 'notification' | 'request';
}

export interface ClientOptions {
  /** A payload from fixtures/clients (e.g. "neovim-0.10.4"), or explicit params. */
  client?: string;
  initialize?: Partial<InitializeParams>;
  /** Extra environment for the server; BUCKLEY_AGENT defaults to the scripted agent. */
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Where the server starts (an editor's folder): the repository unless given; `home`: its HOME. */
  cwd?: string | 'home';
  /** What `workspace/configuration` answers for the `buckley` section. */
  settings?: unknown;
  /** How to answer window/showMessageRequest (default: the first action); `token` is cancelled by $/cancelRequest. */
  answerMessageRequest?: (params: any, token: CancellationToken) => unknown;
  /** Handlers for other server → client requests (e.g. buckley/approveTool), by method. */
  handlers?: Record<string, (params: any, token: CancellationToken) => unknown>;
  stateDir?: string;
  /**
   * A script that starts the server (given the bin and its arguments) and relays its stdio, as an
   * editor's wrapper would: the server's parent is then that script, not the test.
   */
  wrapper?: string;
  /** The server command to run instead of the built bin (an installed `buckley-lsp`). */
  command?: string[];
}

export class TestClient {
  readonly received: Received[] = [];
  private readonly waiters = new Set<{ method: string; match: (r: Received) => boolean; resolve: (r: Received) => void }>();
  stderr = '';
  /** Every byte the server wrote to stdout, to check that it is JSON-RPC and nothing else. */
  private stdout: Buffer[] = [];
  initializeResult!: InitializeResult;
  settings: unknown;
  private exited: Promise<number | null>;

  private constructor(
    readonly process: ChildProcess,
    readonly connection: MessageConnection,
    readonly stateDir: string,
    options: ClientOptions,
  ) {
    this.settings = options.settings;
    process.stdout!.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    process.stderr!.setEncoding('utf8');
    process.stderr!.on('data', (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) => process.once('exit', (code) => resolve(code)));
    const record = (kind: Received['kind']) => (method: string, params: any) => this.record({ method, params, kind });
    connection.onNotification(record('notification'));
    // vscode-jsonrpc routes $/progress apart from other notifications.
    connection.onUnhandledProgress((params) => record('notification')('$/progress', params));
    connection.onRequest((method, params, token) => {
      record('request')(method, params);
      const handler = options.handlers?.[method];
      if (handler) return handler(params, token);
      switch (method) {
        case 'workspace/configuration':
          return ((params as any).items as unknown[]).map(() => this.settings ?? null);
        case 'window/workDoneProgress/create':
        case 'client/registerCapability':
          return null;
        case 'window/showDocument':
          return { success: true };
        case 'window/showMessageRequest':
          return options.answerMessageRequest ? options.answerMessageRequest(params, token) : ((params as any).actions?.[0] ?? null);
        default:
          return null;
      }
    });
    connection.listen();
  }

  static async start(options: ClientOptions = {}): Promise<TestClient> {
    const stateDir = options.stateDir ?? tempDir('buckley-test');
    const [program, ...programArgs] = options.command ?? [process.execPath, ...(options.wrapper ? [options.wrapper] : []), BIN];
    const child = spawn(program!, [...programArgs, '--stdio', ...(options.args ?? [])], {
      cwd: options.cwd === 'home' ? stateDir : (options.cwd ?? REPO),
      env: {
        PATH: process.env.PATH,
        HOME: stateDir,
        XDG_STATE_HOME: stateDir,
        BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}`,
        ...options.env,
      } as NodeJS.ProcessEnv,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const client = new TestClient(child, connection, stateDir, options);
    const base: InitializeParams = options.client
      ? JSON.parse(readFileSync(`${CLIENT_PAYLOADS}${options.client}.json`, 'utf8'))
      : { processId: null, rootUri: fileUri(`${REPO}fixtures/workspace`), capabilities: {}, workspaceFolders: null };
    const params = { ...base, processId: process.pid, rootUri: fileUri(`${REPO}fixtures/workspace`), workspaceFolders: [{ uri: fileUri(`${REPO}fixtures/workspace`), name: 'workspace' }], ...options.initialize };
    client.initializeResult = await connection.sendRequest('initialize', params);
    await connection.sendNotification('initialized', {});
    return client;
  }

  private record(message: Received): void {
    this.received.push(message);
    for (const waiter of this.waiters) {
      if (waiter.match(message)) {
        this.waiters.delete(waiter);
        waiter.resolve(message);
      }
    }
  }

  /** The first message (already received or still to come) of `method` that satisfies `match`. */
  waitFor(method: string, match: (params: any) => boolean = () => true): Promise<any> {
    const test = (r: Received) => r.method === method && match(r.params);
    const seen = this.received.find(test);
    if (seen) return Promise.resolve(seen.params);
    return new Promise((resolve) => this.waiters.add({ method, match: test, resolve: (r) => resolve(r.params) }));
  }

  /** Like waitFor, but only for messages that arrive from now on. */
  waitForNext(method: string, match: (params: any) => boolean = () => true): Promise<any> {
    return new Promise((resolve) => this.waiters.add({ method, match: (r) => r.method === method && match(r.params), resolve: (r) => resolve(r.params) }));
  }

  all(method: string): any[] {
    return this.received.filter((r) => r.method === method).map((r) => r.params);
  }

  request<T = any>(method: string, params: unknown, token?: CancellationToken): Promise<T> {
    return (token ? this.connection.sendRequest(method, params, token) : this.connection.sendRequest(method, params)) as Promise<T>;
  }

  /** Writes bytes to the server's stdin as they are (no framing added). */
  write(bytes: Buffer | string): Promise<void> {
    return new Promise((resolve, reject) => this.process.stdin!.write(bytes, (error) => (error ? reject(error) : resolve())));
  }

  /** Closes the server's stdin, as an editor that goes away does; `bytes` are written first. */
  closeInput(bytes?: Buffer | string): void {
    this.process.stdin!.end(bytes);
  }

  notify(method: string, params: unknown): Promise<void> {
    return this.connection.sendNotification(method, params);
  }

  /** Opens `text` as a document; returns its URI. */
  async open(path: string, text: string, languageId = 'typescript'): Promise<string> {
    const uri = fileUri(path);
    await this.notify('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    return uri;
  }

  async openFixture(relative: string, languageId = 'typescript'): Promise<{ uri: string; text: string }> {
    const path = `${REPO}fixtures/${relative}`;
    const text = readFileSync(path, 'utf8');
    return { uri: await this.open(path, text, languageId), text };
  }

  /** The `experimental.buckley` block of the initialize result. */
  get buckley(): any {
    return (this.initializeResult.capabilities.experimental as any)?.buckley;
  }

  /**
   * Orderly shutdown and exit, as an editor does; resolves with the exit code. Fails if the
   * server wrote anything but JSON-RPC messages to stdout.
   */
  async shutdown(): Promise<number | null> {
    if (this.process.exitCode === null && this.process.signalCode === null && this.process.stdin!.writable) {
      await this.request('shutdown', null);
      await this.notify('exit', null);
    }
    const code = await this.exited;
    this.connection.dispose();
    assertOnlyJsonRpc(Buffer.concat(this.stdout));
    return code;
  }

  /** Every JSON-RPC message the server wrote to stdout so far. */
  stdoutMessages(): any[] {
    return parseFrames(Buffer.concat(this.stdout));
  }

  /** Resolves with the exit code once the server process has exited. */
  exit(): Promise<number | null> {
    return this.exited;
  }

  /** Resolves with the first error response (so far or to come) whose id is `id`. */
  async errorResponse(id: number | string | null): Promise<{ code: number; message: string }> {
    return (await this.response(id, (m) => m.error !== undefined)).error;
  }

  /** Resolves with the first response (so far or to come) whose id is `id` (and that `match`es). */
  response(id: number | string | null, match: (message: any) => boolean = () => true): Promise<any> {
    const find = () => parseFrames(Buffer.concat(this.stdout)).find((m) => m.id === id && m.method === undefined && match(m));
    return new Promise((resolve) => {
      const check = () => {
        const found = find();
        if (!found) return false;
        this.process.stdout!.off('data', check);
        resolve(found);
        return true;
      };
      if (!check()) this.process.stdout!.on('data', check);
    });
  }

  /**
   * For a failed test (a timeout says nothing of where it stood): what this client still waits
   * for, and the last of what the server logged.
   */
  diagnosis(lines = 25): string {
    const waiting = [...this.waiters].map((waiter) => waiter.method);
    const logged = this.all('window/logMessage').map((params) => `  ${String(params.message).slice(0, 400)}`);
    return [
      `still waiting for: ${waiting.length ? waiting.join(', ') : 'nothing'}`,
      `the server's last log lines (${logged.length} in all):`,
      ...logged.slice(-lines),
      ...(this.stderr.trim() ? [`its stderr ends: ${this.stderr.slice(-2000)}`] : []),
    ].join('\n');
  }

  kill(): void {
    this.process.kill('SIGKILL');
    this.connection.dispose();
  }
}

/** A JSON-RPC message framed as LSP frames it. */
export function frame(message: object): Buffer {
  const body = Buffer.from(JSON.stringify(message));
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
}

/** Throws unless `bytes` is a sequence of `Content-Length`-framed JSON-RPC 2.0 messages. */
export function assertOnlyJsonRpc(bytes: Buffer): void {
  parseFrames(bytes);
}

/** The JSON-RPC messages in `bytes` (complete frames only); throws on anything else. */
export function parseFrames(bytes: Buffer): any[] {
  const messages: any[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const headerEnd = bytes.indexOf('\r\n\r\n', offset);
    if (headerEnd === -1) throw new Error(`stdout has bytes that are not a JSON-RPC message: ${bytes.subarray(offset, offset + 80).toString()}`);
    const header = bytes.subarray(offset, headerEnd).toString('ascii');
    const length = /^Content-Length: (\d+)$/im.exec(header)?.[1];
    if (!length || !/^(Content-(Length|Type): [^\r\n]+(\r\n|$))+$/i.test(header)) {
      throw new Error(`stdout has a bad header: ${JSON.stringify(header.slice(0, 80))}`);
    }
    if (bytes.length < headerEnd + 4 + Number(length)) break; // incomplete: more to come
    const body = bytes.subarray(headerEnd + 4, headerEnd + 4 + Number(length));
    const message = JSON.parse(body.toString('utf8'));
    if (message.jsonrpc !== '2.0') throw new Error(`stdout has a message that is not JSON-RPC 2.0: ${body.toString().slice(0, 80)}`);
    messages.push(message);
    offset = headerEnd + 4 + Number(length);
  }
  return messages;
}

/**
 * For a test file: a `start` whose clients are shut down after each test (which also checks
 * that each server wrote nothing but JSON-RPC to stdout).
 */
export function startingClients(): (options?: ClientOptions) => Promise<TestClient> {
  const clients: TestClient[] = [];
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') for (const client of clients) process.stdout.write(`${context.task.name}: a server of this test —\n${client.diagnosis()}\n`);
    await Promise.all(clients.splice(0).map((client) => client.shutdown()));
  });
  return async (options) => {
    const client = await TestClient.start(options);
    clients.push(client);
    return client;
  };
}
