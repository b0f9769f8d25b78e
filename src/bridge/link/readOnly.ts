/**
 * What the user is told about a coordinator that does not keep asks read-only: it does not
 * announce `ask_read_only` — Buckley runs its tools without approval; our coordinator, where it
 * cannot sandbox its agent, says why in its capabilities' notes. Kept apart from the connection so
 * the server can say it without loading gRPC before `initialize` is answered.
 */
/** Said once per coordinator that does not keep asks read-only, before the first ask. */
export const ASKS_NOT_READ_ONLY = (address: string, why?: string) =>
  why
    ? `asks are not read-only here: ${why}. While answering a question the agent may edit files or run commands without asking you. Set buckley.ask.requireReadOnly to true to refuse asks.`
    : `the coordinator at ${address} does not keep asks read-only (it does not announce ask_read_only): while answering a question it may edit files or run commands without asking you ` +
      '(Buckley runs its tools without approval). Set buckley.ask.requireReadOnly to true to refuse asks there.';

/** Why an ask is refused where the coordinator does not keep asks read-only, and what to do. */
export const NOT_READ_ONLY = (address: string, why?: string) =>
  why
    ? `asks are not read-only here (${why}), and buckley.ask.requireReadOnly is true, so asks are refused; set it to false to ask all the same, or fix what keeps the agent from its sandbox (\`buckley-lsp doctor\` says what).`
    : `the coordinator at ${address} does not keep asks read-only (it does not announce ask_read_only): while answering, it may edit files or run commands without asking. ` +
      'buckley.ask.requireReadOnly is true, so asks are refused here; set it to false to ask all the same, or use a coordinator that keeps asks read-only (the embedded one: unset buckley.coordinator.address).';
