/**
 * What a failure of the coordinator means to the user, said in one place: one ordered chain of
 * readings (the first that knows the error says what it means, in full and in a few words), as
 * vscode-eslint's error handlers are; and what a failed connection means, from what gRPC said.
 */
import { FailedError, type Failure } from '../../errors.js';
import { seconds } from '../../text.js';
import { CoordinatorError, MalformedReply } from '../../wire/errors.js';
import { isRefusal, refusalError, type Identity } from './identity.js';

export type { Failure } from '../../errors.js';

export interface FailureContext {
  address: string;
  identity: Identity;
  /** What was under way: an ask answered with SendMessage, a streamed call (a task, an ask our coordinator streams), or another call. */
  call: 'ask' | 'stream' | 'call';
  timeoutMs?: number;
  /** The setting that sets `timeoutMs`, named when it runs out. */
  timeoutSetting?: string;
}

type Reading = (error: unknown, context: FailureContext) => Failure | undefined;

/** The readings, in order. */
const READINGS: readonly Reading[] = [
  // Ours say it for people already.
  (error) => (error instanceof FailedError ? error.failure : undefined),
  // Refused for who we are (the caller fails the link for good: no retry mends it).
  (error, { address, identity }) => (isRefusal(error) ? refusalError(address, identity, error).failure : undefined),
  (error, context) => (error instanceof CoordinatorError && error.deadlineExceeded ? outOfTime(context) : undefined),
  // Not as the wire says: another version of it, or another program at that address.
  (error, { address }) =>
    error instanceof MalformedReply
      ? {
          message: `the coordinator at ${address} sent ${error.what} of ${error.method} that buckley-lsp cannot read (${error.problems}): it speaks buckley.acp.v1 otherwise than this buckley-lsp — update whichever is older, or check that a Buckley or buckley-lsp coordinator listens there`,
          summary: `${address} sent what buckley-lsp cannot read (see log)`,
        }
      : undefined,
  (error, { address, call }) =>
    error instanceof CoordinatorError && error.coordinatorGone && call === 'stream'
      ? { message: `the coordinator at ${address} went away during the task (${plainDetails(error.details)}); start it again once the coordinator is back`, summary: `the coordinator at ${address} went away` }
      : undefined,
  (error) => (error instanceof CoordinatorError ? { message: plainDetails(error.details) } : undefined),
];

/** What a failed call means, by the first reading that knows it. */
export function failureOf(error: unknown, context: FailureContext): Failure {
  for (const reading of READINGS) {
    const failure = reading(error, context);
    if (failure) return failure;
  }
  return { message: error instanceof Error ? error.message : String(error) };
}

function outOfTime({ call, timeoutMs, timeoutSetting }: FailureContext): Failure | undefined {
  if (timeoutMs === undefined || !timeoutSetting) return undefined;
  const after = seconds(timeoutMs);
  if (call === 'ask') return { message: `no answer within ${after} (setting ${timeoutSetting})`, summary: `no answer in ${after}: raise ${timeoutSetting}` };
  return { message: `timed out after ${after} (setting ${timeoutSetting})`, summary: `timed out: raise ${timeoutSetting}` };
}

/** What a failed connection means, in full and in a few words, from what gRPC said. */
export function describeConnectFailure(mode: 'embedded' | 'remote', address: string, error: unknown, secure: boolean): ConnectFailure {
  const detail = plainDetails(error instanceof CoordinatorError ? error.details : String(error));
  if (mode === 'embedded') return { message: `the embedded coordinator at ${address} did not answer: ${detail}`, summary: 'the embedded coordinator did not answer' };
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  const setting = 'buckley.coordinator.address or BUCKLEY_COORDINATOR';
  const start = `start it (\`buckley serve\` or \`buckley-lsp coordinator --listen ${address}\`) or unset ${setting} to use the embedded coordinator`;
  const tlsHint =
    "check buckley.coordinator.tls: ca must sign the coordinator's certificate, and cert + key must be a client certificate it accepts (signed by its client CA, not expired)";
  if (error instanceof CoordinatorError && error.deadlineExceeded) {
    return {
      message: `the coordinator at ${address} (from ${setting}) did not answer in time (${detail}): is it ${secure ? 'expecting other TLS settings than buckley.coordinator.tls, or ' : ''}busy or stopped? Otherwise ${start}.`,
      summary: `${address} does not answer (see log)`,
    };
  }
  if (/ENOTFOUND|EAI_AGAIN|name resolution failed|getaddrinfo/i.test(detail)) {
    return { message: `the host ${host} of the coordinator address ${address} does not resolve (${detail}): fix ${setting}`, summary: `${host} does not resolve (buckley.coordinator.address)` };
  }
  if (/certificate|ssl|tls|handshake|alert/i.test(detail)) {
    return { message: `the TLS handshake with the coordinator at ${address} failed: ${detail}. To fix it, ${tlsHint}.`, summary: `TLS with ${address} failed: see buckley.coordinator.tls` };
  }
  if (/ECONNREFUSED|connection refused/i.test(detail)) {
    return { message: `nothing listens at ${address} (from ${setting}): ${start}.`, summary: `nothing listens at ${address}: start the coordinator` };
  }
  return {
    message: `cannot reach the coordinator at ${address} (from ${setting}): ${detail}. ${secure ? `Either it is not running — ${start} — or it refused the TLS handshake: ${tlsHint}.` : `${start[0]!.toUpperCase()}${start.slice(1)}.`}`,
    summary: `cannot reach ${address} (see log)`,
  };
}

/** A failed connection in words: always with a summary. */
export type ConnectFailure = Required<Pick<Failure, 'message' | 'summary'>>;

/** gRPC's details without its internals ("Resolution note: .", "Last error:"), for people. */
export function plainDetails(details: string): string {
  return details
    // "Deadline exceeded after 5.005s,name resolution: 0.010s,…,Waiting for LB pick"
    .replace(/^Deadline exceeded after ([\d.]+)s\b.*$/is, (_, seconds: string) => `waited ${Number(seconds).toFixed(1)} s`)
    .replace(/\s*Resolution note:[^\n]*$/i, '')
    .replace(/^No connection established\.\s*Last error:\s*/i, '')
    .replace(/^Error:\s*/, '')
    .replace(/\s*\(\d{1,3}(\.\d{1,3}){3}:\d+\)[\s.]*$/, '')
    .replace(/[\s.,]+$/, '')
    .trim() || 'no details';
}
