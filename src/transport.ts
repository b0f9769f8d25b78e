/**
 * The stdio transport's guard. vscode-jsonrpc reads `Content-Length` frames and stops reading
 * for good at the first frame it cannot parse — one stray write to the server's stdin and it
 * would live on, deaf. This Transform sits in front of the reader: it passes well-formed frames
 * through unchanged, answers a body that is not JSON with a Parse error (-32700) and a JSON body
 * that is not a JSON-RPC 2.0 message with Invalid Request (-32600), skips oversized bodies, and
 * resynchronises on the next header after garbage. The server lives on and keeps answering.
 *
 * Bodies above CHECKED_BYTES (a didOpen of a big file) are not parsed here, so they are not parsed
 * twice; vscode-jsonrpc skips a bad one of those itself, and the caller answers its reader error.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Larger bodies are skipped unread (a 5 MB document is 1/20 of this). */
export const MAX_MESSAGE_BYTES = 100 * 1024 * 1024;
/** Bodies up to this size are checked here (parsing them twice costs microseconds). */
export const CHECKED_BYTES = 64 * 1024;

export interface FramingError {
  code: -32700 | -32600;
  message: string;
  /** The request id, when the message had one we could read. */
  id: number | string | null;
}

const SEPARATOR = Buffer.from('\r\n\r\n');
const HEADER = /^content-length:/i;

export class FramingGuard extends Transform {
  private buffer: Buffer = Buffer.alloc(0);
  /** Bytes of an oversized body still to drop. */
  private skipping = 0;

  constructor(
    private readonly onError: (error: FramingError) => void,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.drain();
    done();
  }

  private drain(): void {
    for (;;) {
      if (this.skipping > 0) {
        const dropped = Math.min(this.skipping, this.buffer.length);
        this.buffer = this.buffer.subarray(dropped);
        this.skipping -= dropped;
        if (this.skipping > 0) return;
      }
      const headerEnd = this.buffer.indexOf(SEPARATOR);
      if (headerEnd === -1) {
        // Keep waiting for the rest of a header, but not for ever on garbage.
        if (this.buffer.length > 8192) this.resync('a header longer than 8 KiB');
        return;
      }
      const header = this.buffer.subarray(0, headerEnd).toString('ascii');
      const length = contentLength(header);
      if (length === undefined) {
        this.resync(`a header without Content-Length: ${JSON.stringify(header.slice(0, 60))}`);
        continue;
      }
      const bodyStart = headerEnd + SEPARATOR.length;
      if (length > this.maxBytes) {
        this.onError({ code: -32600, message: `message of ${length} bytes is larger than the ${this.maxBytes}-byte limit; skipped`, id: null });
        this.buffer = this.buffer.subarray(bodyStart);
        this.skipping = length;
        continue;
      }
      if (this.buffer.length < bodyStart + length) return;
      const frame = this.buffer.subarray(0, bodyStart + length);
      const body = frame.subarray(bodyStart);
      this.buffer = this.buffer.subarray(bodyStart + length);
      const problem = body.length <= CHECKED_BYTES ? check(body) : undefined;
      if (problem) this.onError(problem);
      else this.push(frame);
    }
  }

  /** Drops bytes up to the next thing that looks like a header. */
  private resync(what: string): void {
    this.onError({ code: -32700, message: `Parse error: ${what}; skipped to the next message`, id: null });
    const text = this.buffer.toString('latin1');
    const next = text.slice(1).search(/content-length:/i);
    this.buffer = next === -1 ? Buffer.alloc(0) : this.buffer.subarray(next + 1);
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
