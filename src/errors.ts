/**
 * Errors shared across the bridge that must not pull heavy modules (gRPC) into the startup
 * path: `initialize` is answered before the coordinator client is loaded.
 */

/** An ask the coordinator or agent could not complete, with a message for the user. */
export class AskFailedError extends Error {
  override readonly name = 'AskFailedError';
  constructor(
    message: string,
    /** What to do, in a few words for a one-line message ("set buckley.agent.command"). */
    readonly summary?: string,
  ) {
    super(message);
  }
}

/**
 * A connection that cannot be made as configured (a TLS file missing, nothing listening), with
 * what to do in a few words for a one-line message.
 */
export class SetupError extends Error {
  override readonly name = 'SetupError';
  /** Trying again cannot mend it (only a change of settings can): no retries. */
  readonly final: boolean;
  constructor(
    message: string,
    /** Key or fix first: "buckley.coordinator.tls.ca: no such file". */
    readonly summary: string,
    options: { final?: boolean } = {},
  ) {
    super(message);
    this.final = options.final ?? false;
  }
}
