/**
 * Errors shared across the bridge that must not pull heavy modules (gRPC) into the startup
 * path: `initialize` is answered before the coordinator client is loaded.
 */

/** An ask the coordinator or agent could not complete, with a message for the user. */
export class AskFailedError extends Error {
  override readonly name = 'AskFailedError';
}
