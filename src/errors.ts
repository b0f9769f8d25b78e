/**
 * The one shape of a failure the user is told of: what went wrong in full, with how to fix it,
 * and the same in a few words for a one-line message (key or fix first). Shared across the
 * bridge without pulling heavy modules (gRPC) into the startup path: `initialize` is answered
 * before the coordinator client is loaded.
 */

export interface Failure {
  message: string;
  /** Key or fix first, for a one-line message: "buckley.coordinator.tls.ca: no such file". */
  summary?: string;
}

/** A failure where code throws (a connection that cannot be made as configured, a store that cannot be read). */
export class FailedError extends Error {
  override readonly name = 'FailedError';
  /** Trying again cannot mend it (only a change of settings can): no retries. */
  readonly final: boolean;
  constructor(
    message: string,
    readonly summary?: string,
    options: { final?: boolean } = {},
  ) {
    super(message);
    this.final = options.final ?? false;
  }

  get failure(): Failure {
    return { message: this.message, ...(this.summary ? { summary: this.summary } : {}) };
  }

  static of(failure: Failure): FailedError {
    return new FailedError(failure.message, failure.summary);
  }
}
