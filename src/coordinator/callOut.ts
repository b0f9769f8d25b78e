/**
 * A server stream's one way out to its caller. grpc-js never sends a call's status when a message
 * is written after `end()` while an earlier one is still on its way: the caller waits out its
 * deadline. A task's stream has more than one writer (its records, the news of its place in the
 * queue), and under load one of them wrote as the other ended it — a caller in two thousand hung.
 * So every write, end and error of a stream goes through here: after the first end or error, or
 * once the caller has gone, nothing more is written.
 */
import type * as grpc from '@grpc/grpc-js';

export class CallOut {
  private closed = false;

  constructor(private readonly call: grpc.ServerWritableStream<unknown, unknown>) {}

  /** Still writable: not ended, not failed, its caller still there. */
  get open(): boolean {
    return !this.closed && !this.call.cancelled;
  }

  get cancelled(): boolean {
    return this.call.cancelled;
  }

  /** Calls `gone` when the caller leaves (at once if it has). */
  onCancelled(gone: () => void): void {
    this.call.on('cancelled', gone);
    if (this.call.cancelled) gone();
  }

  write(message: unknown): void {
    if (this.open) this.call.write(message);
  }

  /** Ends the stream with OK, once its messages are sent. */
  end(): void {
    if (!this.open) return;
    this.closed = true;
    this.call.end();
  }

  /** Ends the stream with `error`. */
  fail(error: grpc.ServiceError): void {
    if (!this.open) return;
    this.closed = true;
    this.call.emit('error', error);
  }
}
