/**
 * A peer's newline-delimited JSON-RPC (ACP over stdio), a line at a time, none over a bound. The
 * ACP SDK's reader fails the whole stream on a message past its limit: one huge message (a paste
 * in a panel, a large file an agent writes) ended the connection — the session, or the agent. A
 * line over the bound is dropped as it comes (never held whole) and replaced so that only its
 * call fails: a request by a request of our extension method keeping its id and naming its
 * method and size, which the reading side answers with an error in words (`oversizedWords`); a
 * response by an error response to the same id; a notification by a notification of our method
 * (with the ACP session it names), which the reading side may say in its place (an agent's
 * update: a line in the answer). `dropped` hears of every line dropped.
 */
import * as z from './schema.js';

/** Our extension method, in the place of a request too large to read (`_` names an extension in ACP). */
export const OVERSIZED_METHOD = '_buckley/oversized';

/** The most a message of an ACP client may hold: a prompt's 20 MB of images, with room to spare. */
export const MAX_CLIENT_MESSAGE_BYTES = 48 * 1024 * 1024;

/** What is kept of a line too large: its start, where its id and method are. */
const HEAD_BYTES = 4096;
const NEWLINE = 0x0a;

export const oversizedParams = z.object({ method: z.string(), bytes: z.number(), sessionId: z.optional(z.string()) });

export interface Oversized {
  /** The request's or response's id, as it was (a number or a string); none for a notification. */
  id?: number | string;
  /** What it was: a request's or notification's method, else `an answer`. */
  method: string;
  /** It answered a request (a JSON-RPC response). */
  response: boolean;
  bytes: number;
  /** The ACP session it names (`params.sessionId`), where its start does. */
  sessionId?: string;
}

/**
 * The lines of `input`, each whole and within `limit`; a line past it replaced as said above
 * (`dropped` hears of each; `reader` names who reads, for the error a response becomes).
 */
export function boundedLines(input: ReadableStream<Uint8Array>, limit: number, reader: string, dropped?: (line: Oversized) => void): ReadableStream<Uint8Array> {
  let parts: Uint8Array[] = [];
  /** The line's first bytes and, once it is too large, its last: where its id and method are. */
  let start: Uint8Array[] = [];
  let end = new Uint8Array(0);
  let length = 0;
  let over = false;
  const endLine = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (over) {
      const line = oversizedOf(concat(start), end, length);
      dropped?.(line);
      controller.enqueue(new TextEncoder().encode(`${JSON.stringify(replacementOf(line, limit, reader))}\n`));
    } else {
      for (const part of parts) controller.enqueue(part);
      controller.enqueue(Uint8Array.of(NEWLINE));
    }
    parts = [];
    start = [];
    end = new Uint8Array(0);
    length = 0;
    over = false;
  };
  const keepEnd = (segment: Uint8Array) => {
    end = segment.length >= HEAD_BYTES ? segment.slice(-HEAD_BYTES) : concat([end, segment]).slice(-HEAD_BYTES);
  };
  const add = (segment: Uint8Array) => {
    // Copied: the chunk's buffer may be reused by the reader.
    if (length < HEAD_BYTES) start.push(segment.slice(0, HEAD_BYTES - length));
    length += segment.length;
    if (over) return keepEnd(segment);
    if (length <= limit) return void parts.push(segment.slice());
    over = true;
    for (const part of [...parts, segment]) keepEnd(part);
    parts = [];
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let at = 0;
        // A line begun in an earlier chunk ends at this one's first newline: held, or being dropped.
        if (length > 0 || over) {
          const end = chunk.indexOf(NEWLINE);
          add(chunk.subarray(0, end === -1 ? chunk.length : end));
          if (end === -1) return;
          endLine(controller);
          at = end + 1;
        }
        const last = chunk.lastIndexOf(NEWLINE);
        // The whole lines in it go on in one piece where none can be past the bound, else one by one.
        if (last >= at && last + 1 - at <= limit) {
          controller.enqueue(chunk.subarray(at, last + 1));
          at = last + 1;
        }
        for (let end = chunk.indexOf(NEWLINE, at); end !== -1 && end <= last; end = chunk.indexOf(NEWLINE, at)) {
          add(chunk.subarray(at, end));
          endLine(controller);
          at = end + 1;
        }
        if (at < chunk.length) add(chunk.subarray(at));
      },
      flush(controller) {
        if (length) endLine(controller);
      },
    }),
  );
}

/** What stands in for a line too large: a request of our method, or an error answering the same id. */
function replacementOf(line: Oversized, limit: number, reader: string): object {
  if (line.response) return { jsonrpc: '2.0', id: line.id, error: { code: INVALID_REQUEST, message: oversizedWords(line, limit, reader) } };
  const params = { method: line.method, bytes: line.bytes, ...(line.sessionId ? { sessionId: line.sessionId } : {}) };
  return { jsonrpc: '2.0', ...(line.id !== undefined ? { id: line.id } : {}), method: OVERSIZED_METHOD, params };
}

/** A top-level member among the last of an object: `"name": value`, then only short members up to its end. */
const lastMember = (name: string, value: string) => new RegExp(`"${name}"\\s*:\\s*(${value})\\s*(?:,\\s*"[a-z_]{1,20}"\\s*:\\s*(?:-?\\d+|"[^"\\\\]{0,200}")\\s*)*\\}\\s*$`);
const ID = '-?\\d+|"(?:[^"\\\\]|\\\\.){0,200}"';
const METHOD = '"[^"\\\\]{1,100}"';

/**
 * The id and method of a message from its start — JSON-RPC puts them first, as clients write them
 * — or else its end (`{"params": …, "method": …, "id": 7}`): a request misread as an answer
 * would be answered to no one, and the client would wait for ever.
 */
function oversizedOf(head: Uint8Array, tail: Uint8Array, bytes: number): Oversized {
  const text = new TextDecoder().decode(head);
  const last = new TextDecoder().decode(tail);
  const id = new RegExp(`^\\s*\\{[^{]*?"id"\\s*:\\s*(${ID})`).exec(text)?.[1] ?? lastMember('id', ID).exec(last)?.[1];
  const methodJson = new RegExp(`^\\s*\\{[^{]*?"method"\\s*:\\s*(${METHOD})`).exec(text)?.[1] ?? lastMember('method', METHOD).exec(last)?.[1];
  const method = methodJson ? (JSON.parse(methodJson) as string) : undefined;
  const sessionId = /"sessionId"\s*:\s*"([^"\\]{1,200})"/.exec(text)?.[1];
  return { ...(id !== undefined ? { id: JSON.parse(id) as number | string } : {}), method: method ?? 'answer', response: method === undefined && id !== undefined, bytes, ...(sessionId ? { sessionId } : {}) };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const whole = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let at = 0;
  for (const part of parts) {
    whole.set(part, at);
    at += part.length;
  }
  return whole;
}

/** JSON-RPC's code for a request that cannot be taken as it is. */
export const INVALID_REQUEST = -32600;

/** The words for a message too large to read (`reader`: who reads it, "buckley-lsp acp"). */
export function oversizedWords(line: { method: string; bytes: number }, limit: number, reader: string): string {
  const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
  const what = line.method === 'answer' ? 'an answer' : `the ${line.method} message`;
  return `${what} was ${mb(line.bytes)}, over the ${mb(limit)} ${reader} reads in one message: send less in it`;
}
