/**
 * The stdio transport, both ways.
 *
 * In: vscode-jsonrpc reads `Content-Length` frames and stops reading for good at the first frame
 * it cannot parse — one stray write to the server's stdin and it would live on, deaf. The
 * FramingGuard sits in front of the reader: it passes well-formed frames through unchanged,
 * answers a body that is not JSON with a Parse error (-32700) and a JSON body that is not a
 * JSON-RPC 2.0 message with Invalid Request (-32600), skips oversized bodies, and resynchronises
 * on the next header after garbage. It keeps what it has read as a list of chunks and copies a
 * body once, when it is complete, so a 50 MB message costs linear time. When the input ends it
 * passes on one last, internal message (`endOfInput`), which the connection sees after every
 * message before it — a `shutdown` the editor sent just before closing the pipe is handled
 * first.
 *
 * Bodies above CHECKED_BYTES (a didOpen of a big file) are not parsed here, so they are not parsed
 * twice; vscode-jsonrpc skips a bad one of those itself, and the caller answers its reader error.
 *
 * Then the HeldReader: the messages after `initialize` wait, in order, until the server that
 * handles them is loaded (bridge/start.ts answers `initialize` before loading it).
 *
 * Out: the EditorWriter never fails the connection. A message the server sends after the editor
 * has closed the pipe is dropped (no "Connection is closed" error to turn a clean exit into a
 * crash), every string in a message is well-formed Unicode, and `drained()` tells when every
 * message handed to it has been written.
 */
import { Transform, type TransformCallback, type Writable } from 'node:stream';
import { Emitter, Message, StreamMessageWriter, type DataCallback, type Disposable, type MessageReader, type MessageWriter } from 'vscode-languageserver/node.js';
import { shorten, wellFormed } from '../text.js';
import { initializeParamsProblems } from './initializeParams.js';

/** Larger bodies are skipped unread (a 5 MB document is 1/20 of this). */
export const MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
/** Bodies up to this size are checked here (parsing them twice costs microseconds). */
export const CHECKED_BYTES = 64 * 1024;
/** A header longer than this is garbage. */
const MAX_HEADER_BYTES = 8192;
/** Kept while looking for a header in garbage: a `Content-Length:` may straddle two chunks. */
const PARTIAL_HEADER_BYTES = 'content-length:'.length - 1;

export interface FramingError {
  code: -32700 | -32600;
  message: string;
  /** The request id, when the message had one we could read. */
  id: number | string | null;
}

export interface FramingGuardOptions {
  maxBytes?: number;
  /** A message passed on when the input ends (see the module comment). */
  endOfInput?: () => object;
}

const SEPARATOR = Buffer.from('\r\n\r\n');
const HEADER = /^content-length:/i;

export class FramingGuard extends Transform {
  /** What has been read and not passed on yet, in order. */
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The header of the frame whose body is awaited, and the body's length. */
  private frame: { header: Buffer; length: number } | undefined;
  /** Bytes of an oversized body still to drop. */
  private skipping = 0;
  /** After garbage: dropping input up to the next header. */
  private resyncing = false;
  /** Bytes copied to join chunks: at most about the size of the input (tests check it). */
  copiedBytes = 0;
  private readonly maxBytes: number;

  constructor(
    private readonly onError: (error: FramingError) => void,
    private readonly options: FramingGuardOptions = {},
  ) {
    super();
    this.maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      try {
        this.drain();
      } catch (error) {
        // A fault of the guard itself must not end the stream (the server would be deaf for good):
        // it drops what it holds, says so, and reads on from the next header.
        this.onError({ code: -32700, message: `Parse error: the input could not be framed (${(error as Error).message}); skipped to the next message`, id: null });
        this.chunks = [];
        this.buffered = 0;
        this.frame = undefined;
        this.skipping = 0;
        this.resyncing = true;
      }
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.options.endOfInput) {
      const body = Buffer.from(JSON.stringify(this.options.endOfInput()));
      this.push(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
    }
    done();
  }

  private drain(): void {
    for (;;) {
      if (this.skipping > 0) {
        const dropped = Math.min(this.skipping, this.buffered);
        this.consume(dropped);
        this.skipping -= dropped;
        if (this.skipping > 0) return;
      }
      if (!this.frame) {
        const next = this.readHeader();
        if (next === 'more') return;
        if (next === 'skip') continue;
      }
      const { header, length } = this.frame!;
      if (this.buffered < length) return;
      this.frame = undefined;
      const body = this.takeFront(length);
      const problem = body.length <= CHECKED_BYTES ? check(body) : undefined;
      if (problem) {
        this.onError(problem);
      } else {
        this.push(header);
        this.push(body);
      }
    }
  }

  /**
   * Reads the next header: `frame` when `this.frame` is set, `skip` when an oversized body is to
   * be dropped, `more` when more input is needed.
   */
  private readHeader(): 'frame' | 'skip' | 'more' {
    for (;;) {
      if (this.resyncing) {
        // Garbage: drop it up to the next thing that looks like a header (reported once).
        const garbage = this.peek(MAX_HEADER_BYTES, false);
        const next = garbage.toString('latin1').search(/content-length:/i);
        if (next === -1) {
          this.consume(Math.max(0, garbage.length - PARTIAL_HEADER_BYTES));
          if (this.buffered > PARTIAL_HEADER_BYTES) continue;
          return 'more';
        }
        this.consume(next);
        this.resyncing = false;
        continue;
      }
      const head = this.peek(MAX_HEADER_BYTES + SEPARATOR.length, true);
      const headerEnd = head.indexOf(SEPARATOR);
      if (headerEnd === -1) {
        // Keep waiting for the rest of a header, but not for ever on garbage.
        if (this.buffered <= MAX_HEADER_BYTES) return 'more';
        this.resync('a header longer than 8 KiB');
        continue;
      }
      const text = head.subarray(0, headerEnd).toString('ascii');
      const length = contentLength(text);
      if (length === undefined) {
        this.resync(`a header without Content-Length: ${JSON.stringify(shorten(text, 60))}`);
        continue;
      }
      const header = Buffer.from(head.subarray(0, headerEnd + SEPARATOR.length));
      this.consume(header.length);
      if (length > this.maxBytes) {
        this.onError({ code: -32600, message: `message of ${length} bytes is larger than the ${this.maxBytes}-byte limit; skipped`, id: null });
        this.skipping = length;
        return 'skip';
      }
      this.frame = { header, length };
      return 'frame';
    }
  }

  /** Reports garbage at the front and drops it up to the next header (see readHeader). */
  private resync(what: string): void {
    this.onError({ code: -32700, message: `Parse error: ${what}; skipped to the next message`, id: null });
    this.consume(1);
    this.resyncing = true;
  }

  /**
   * Up to `max` bytes from the front, without consuming them (copied only across chunks; not at
   * all for a header that ends in the first chunk, when `header`).
   */
  private peek(max: number, header: boolean): Buffer {
    const first = this.chunks[0];
    if (!first) return Buffer.alloc(0);
    if (first.length >= max || this.chunks.length === 1 || (header && first.includes(SEPARATOR))) return first.subarray(0, max);
    const parts: Buffer[] = [];
    let size = 0;
    for (const chunk of this.chunks) {
      parts.push(chunk);
      size += chunk.length;
      if (size >= max) break;
    }
    const joined = Buffer.concat(parts, Math.min(size, max));
    this.copiedBytes += joined.length;
    return joined;
  }

  /** The first `length` bytes, consumed; one copy at most. */
  private takeFront(length: number): Buffer {
    // An empty body (`Content-Length: 0`) may end exactly where a chunk did: nothing is buffered.
    if (length === 0) return Buffer.alloc(0);
    const first = this.chunks[0]!;
    if (first.length >= length) {
      const taken = first.subarray(0, length);
      this.consume(length);
      return taken;
    }
    const parts: Buffer[] = [];
    let size = 0;
    while (size < length) {
      const chunk = this.chunks[0]!;
      const part = chunk.length <= length - size ? chunk : chunk.subarray(0, length - size);
      parts.push(part);
      size += part.length;
      this.consume(part.length);
    }
    this.copiedBytes += length;
    return Buffer.concat(parts, length);
  }

  /** Drops `count` bytes from the front. */
  private consume(count: number): void {
    this.buffered -= count;
    while (count > 0) {
      const first = this.chunks[0]!;
      if (first.length <= count) {
        this.chunks.shift();
        count -= first.length;
      } else {
        this.chunks[0] = first.subarray(count);
        count = 0;
      }
    }
  }
}

function contentLength(header: string): number | undefined {
  let length: number | undefined;
  for (const line of header.split('\r\n')) {
    if (HEADER.test(line)) {
      const value = line.slice(line.indexOf(':') + 1).trim();
      if (!/^\d+$/.test(value)) return undefined;
      length = Number(value);
    } else if (!/^[\w-]+:/.test(line)) {
      return undefined;
    }
  }
  return length;
}

/** What is wrong with a body, or undefined when it is a JSON-RPC 2.0 message. */
function check(body: Buffer): FramingError | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return { code: -32700, message: `Parse error: ${(error as Error).message}`, id: null };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { code: -32600, message: 'Invalid Request: a JSON-RPC message is an object (batches are not used by LSP)', id: null };
  }
  const { jsonrpc, id, method } = message as Record<string, unknown>;
  const validId = typeof id === 'number' || typeof id === 'string' ? id : null;
  if (jsonrpc !== '2.0') return { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"', id: validId };
  if (method !== undefined && typeof method !== 'string') return { code: -32600, message: 'Invalid Request: "method" must be a string', id: validId };
  if (id !== undefined && id !== null && validId === null) return { code: -32600, message: 'Invalid Request: "id" must be a number or a string', id: null };
  return undefined;
}

/** The writer of the editor connection (see the module comment). */
export class EditorWriter implements MessageWriter {
  private readonly inner: StreamMessageWriter;
  private pending = 0;
  private readonly waiting: (() => void)[] = [];
  /** The editor closed its end: nothing more can be written. */
  private gone = false;
  // Never fired: a broken pipe must not close the connection under the server's feet.
  private readonly errors = new Emitter<[Error, Message | undefined, number | undefined]>();
  private readonly closes = new Emitter<void>();
  readonly onError = this.errors.event;
  readonly onClose = this.closes.event;

  constructor(
    private readonly output: Writable,
    /** Told of each message as it is written (the HeldReader watches for `initialize`'s answer). */
    private readonly written?: (message: Message) => void,
  ) {
    this.inner = new StreamMessageWriter(output);
    const stop = () => (this.gone = true);
    output.on('error', stop);
    output.on('close', stop);
  }

  write(message: Message): Promise<void> {
    this.written?.(message);
    if (this.gone || this.output.destroyed) return Promise.resolve();
    this.pending++;
    return this.inner
      .write(wellFormed(message))
      .catch(() => {
        this.gone = true;
      })
      .finally(() => {
        if (--this.pending === 0) for (const resolve of this.waiting.splice(0)) resolve();
      });
  }

  /** Resolves once every message handed to `write` so far has been written (or dropped). */
  drained(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((resolve) => this.waiting.push(resolve));
  }

  end(): void {
    this.inner.end();
  }

  dispose(): void {
    this.inner.dispose();
    this.errors.dispose();
    this.closes.dispose();
  }
}

/**
 * The reader the connection listens to: it passes the messages on as they come until an
 * `initialize` request has passed, then holds the ones after it — in order, none lost — until
 * `release()`, after which they and every later one pass on. An `initialize` answered with an
 * error (params the LSP library cannot read) loads no server: what it held passes on at once
 * (`answered`), and a later `initialize` holds again — the server is never left deaf.
 *
 * Each message passes on by itself: one the connection cannot take is refused in words
 * (`refused`) and costs nothing else — held ones are passed on in one loop, and a throw there
 * would drop every message behind it, unanswered for good. vscode-jsonrpc reads a
 * `$/cancelRequest`'s id, and vscode-languageserver an `initialize`'s capabilities, before any
 * handler of ours: those are checked here.
 */
export class HeldReader implements MessageReader {
  private held: Message[] | undefined;
  /** The id of the `initialize` the held messages wait behind. */
  private initializeId: number | string | undefined;
  private released = false;
  private callback: DataCallback | undefined;

  constructor(
    private readonly reader: MessageReader,
    /** Told of a message not passed on, and why (an error code, and words the editor's user can act on). */
    private readonly refused: (message: Message, refusal: Refusal) => void = () => undefined,
  ) {}

  get onError() {
    return this.reader.onError;
  }
  get onClose() {
    return this.reader.onClose;
  }
  get onPartialMessage() {
    return this.reader.onPartialMessage;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    return this.reader.listen((message) => this.pass(message));
  }

  /** Passes on what was held, and from now on every message as it comes. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.flush();
  }

  /** A message written to the editor: an error answering the `initialize` waited behind lets the held ones go. */
  answered(message: Message): void {
    if (this.released || !this.held || !Message.isResponse(message) || message.id !== this.initializeId || !message.error) return;
    this.flush();
  }

  /** Held while an `initialize` is waited behind; else on, and an `initialize` starts the wait. */
  private pass(message: Message): void {
    if (this.held) return void this.held.push(message);
    const refusal = refusalOf(message);
    if (refusal) return this.refused(message, refusal);
    try {
      this.callback?.(message);
    } catch (error) {
      this.refused(message, { code: -32600, message: `${methodOf(message)} could not be taken (${(error as Error).message})` });
    }
    if (!this.released && Message.isRequest(message) && message.method === 'initialize') {
      this.held = [];
      this.initializeId = message.id ?? undefined;
    }
  }

  private flush(): void {
    const held = this.held ?? [];
    this.held = undefined;
    this.initializeId = undefined;
    // One may be another `initialize`: what comes after it is held again.
    for (const message of held) this.pass(message);
  }

  dispose(): void {
    this.reader.dispose();
  }
}

export interface Refusal {
  code: -32600 | -32602;
  message: string;
}

function methodOf(message: Message): string {
  return 'method' in message && typeof message.method === 'string' ? message.method : 'a response';
}

/** Why the connection could not take `message` (see HeldReader), or undefined. */
function refusalOf(message: Message): Refusal | undefined {
  if (Message.isRequest(message) && message.method === 'initialize') {
    const problems = initializeParamsProblems(message.params);
    return problems.length ? { code: -32602, message: `initialize's params are not as LSP says: ${problems.join('; ')}` } : undefined;
  }
  if (!Message.isNotification(message) || message.method !== '$/cancelRequest') return undefined;
  const id = (message.params as { id?: unknown } | null | undefined)?.id;
  // Its id is what names the request to cancel.
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? undefined : { code: -32600, message: '$/cancelRequest: params.id must be the id of a request, a number or a string' };
}
