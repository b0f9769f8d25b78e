/**
 * `session/update` notifications taken off an agent's output before the ACP SDK sees it. The
 * SDK's client parses every update against the whole ACP union in a router of its own — one we
 * do not use, and cannot turn off — and that parse was the largest cost of a chatty agent
 * (`npm run bench`, streaming). Updates are validated here instead, at the same boundary, by the
 * narrow schema of what the driver reads (acp.ts); every other line goes to the SDK untouched.
 */

import { OVERSIZED_METHOD } from '../../jsonLines.js';

const NEWLINE = 0x0a;

export interface UpdateHandler {
  (params: unknown): void;
}

/**
 * The agent's output without its session/update lines, which go to `onUpdate` in order, as they
 * are read. A line longer than `maxLineBytes` is passed on as it is (the SDK refuses it).
 */
export function takeSessionUpdates(output: ReadableStream<Uint8Array>, onUpdate: UpdateHandler, maxLineBytes: number, onOversized?: (update: { sessionId: string; bytes: number }) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  /** The line read so far, in pieces (joined once it is complete). */
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  /** The current line is too long to look at: it goes on as it comes. */
  let passingThrough = false;

  const isUpdate = (line: Uint8Array): boolean => {
    const text = decoder.decode(line);
    if (!text.includes('"session/update"')) return false;
    let message: { method?: unknown; id?: unknown; params?: unknown };
    try {
      message = JSON.parse(text);
    } catch {
      return false; // the SDK says what is wrong with it
    }
    // An update too large to read (../../jsonLines.ts), said in its place, in order with the others.
    if (message?.method === OVERSIZED_METHOD && message.id === undefined) {
      const params = message.params as { method?: unknown; sessionId?: unknown; bytes?: unknown } | undefined;
      if (params?.method !== 'session/update' || typeof params.sessionId !== 'string') return false;
      onOversized?.({ sessionId: params.sessionId, bytes: Number(params.bytes) || 0 });
      return true;
    }
    if (message?.method !== 'session/update' || message.id !== undefined) return false;
    onUpdate(message.params);
    return true;
  };

  return output.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        let start = 0;
        for (let end = chunk.indexOf(NEWLINE); end !== -1; start = end + 1, end = chunk.indexOf(NEWLINE, start)) {
          const piece = chunk.subarray(start, end + 1);
          if (passingThrough) {
            controller.enqueue(piece);
            passingThrough = false;
            continue;
          }
          const line = pending.length ? concat([...pending, piece], pendingBytes + piece.length) : piece;
          pending = [];
          pendingBytes = 0;
          if (!isUpdate(line)) controller.enqueue(line);
        }
        const rest = chunk.subarray(start);
        if (!rest.length) return;
        if (passingThrough) return controller.enqueue(rest);
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > maxLineBytes) {
          for (const part of pending) controller.enqueue(part);
          pending = [];
          pendingBytes = 0;
          passingThrough = true;
        }
      },
      flush(controller) {
        for (const part of pending) controller.enqueue(part);
      },
    }),
  );
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}
