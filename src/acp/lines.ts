/**
 * The client's input, a line (one JSON-RPC message) at a time, none over a bound. The ACP SDK's
 * reader fails the whole stream on a message past its limit, which ended the session: a huge
 * paste must cost one request, not the connection. A line over the bound is dropped as it comes
 * (never held whole) and replaced by a request of our own extension method that keeps the
 * request's id and names its method and size; the face answers it with an error in words
 * (`oversizedError`). A notification over the bound is dropped and said in the log.
 */
import * as z from '../schema.js';

/** Our extension method, in the place of a request too large to read (`_` names an extension in ACP). */
export const OVERSIZED_METHOD = '_buckley/oversized';

/** The most a message of the client may hold: a prompt's 20 MB of images, with room to spare. */
export const MAX_CLIENT_MESSAGE_BYTES = 48 * 1024 * 1024;

/** What is kept of a line too large: its start, where its id and method are. */
const HEAD_BYTES = 4096;
const NEWLINE = 0x0a;

export const oversizedParams = z.object({ method: z.string(), bytes: z.number() });

export interface Oversized {
  /** The request's id, as it was (a number or a string); none for a notification. */
  id?: number | string;
  method: string;
  bytes: number;
}

/** The lines of `input`, each whole and within `limit`; a line past it replaced as said above (`dropped` hears of each). */
export function boundedLines(input: ReadableStream<Uint8Array>, limit = MAX_CLIENT_MESSAGE_BYTES, dropped?: (line: Oversized) => void): ReadableStream<Uint8Array> {
  let parts: Uint8Array[] = [];
  /** The line's first bytes, kept to name a line too large. */
  let start: Uint8Array[] = [];
  let length = 0;
  let over = false;
  const endLine = (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (over) {
      const line = oversizedOf(concat(start), length);
      dropped?.(line);
      if (line.id !== undefined) controller.enqueue(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: '2.0', id: line.id, method: OVERSIZED_METHOD, params: { method: line.method, bytes: line.bytes } })}\n`));
    } else {
      for (const part of parts) controller.enqueue(part);
      controller.enqueue(Uint8Array.of(NEWLINE));
    }
    parts = [];
    start = [];
    length = 0;
    over = false;
  };
  const add = (segment: Uint8Array) => {
    // Copied: the chunk's buffer may be reused by the reader.
    if (length < HEAD_BYTES) start.push(segment.slice(0, HEAD_BYTES - length));
    length += segment.length;
    if (over) return;
    if (length <= limit) parts.push(segment.slice());
    else {
      over = true;
      parts = [];
    }
  };
  return input.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (let start = 0; start < chunk.length; ) {
          const end = chunk.indexOf(NEWLINE, start);
          add(chunk.subarray(start, end === -1 ? chunk.length : end));
          if (end === -1) break;
          endLine(controller);
          start = end + 1;
        }
      },
      flush(controller) {
        if (length) endLine(controller);
      },
    }),
  );
}

/** The id and method of a message from its start, where they are there (JSON-RPC puts them first, as clients write them). */
function oversizedOf(head: Uint8Array, bytes: number): Oversized {
  const text = new TextDecoder().decode(head);
  const id = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")/.exec(text)?.[1];
  const method = /"method"\s*:\s*"([^"\\]{1,100})"/.exec(text)?.[1] ?? 'a message';
  return { ...(id !== undefined ? { id: JSON.parse(id) as number | string } : {}), method, bytes };
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

/** The words for a request too large to read. */
export function oversizedWords(line: { method: string; bytes: number }, limit = MAX_CLIENT_MESSAGE_BYTES): string {
  const mb = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`;
  return `the ${line.method} message was ${mb(line.bytes)}, over the ${mb(limit)} buckley-lsp acp reads in one message: send less in it (a prompt carries at most 20 MB of images; attach large files by link)`;
}
