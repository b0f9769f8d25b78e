/**
 * Who calls our coordinator, as Buckley tells: over mutual TLS the client certificate's name, on
 * loopback plaintext the agent-id header; checked against each request's agent_id, and against
 * whoever started a task before an answer to its requests (approvals, files) is taken (tasks/rpc.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { AGENT_HEADER, BEHIND_TRAILER } from '../wire/contract.js';
import { AgentError } from './agents/driver.js';

/** Anything a call's caller is known by: its metadata and, over mutual TLS, its certificate. */
export type Caller = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext' | 'getPeer'>;

/**
 * Like Buckley: over mutual TLS the caller is its client certificate's Common Name; on loopback
 * plaintext, the `x-buckley-agent-id` header, else the request's agent_id, else "local".
 */
export function claimedIdentity(caller: Caller): string | undefined {
  return certifiedIdentity(caller) || caller.metadata.get(AGENT_HEADER)[0]?.toString() || undefined;
}

export function certifiedIdentity(caller: Caller): string | undefined {
  const cn = caller.getAuthContext?.()?.sslPeerCertificate?.subject?.CN;
  return (Array.isArray(cn) ? cn[0] : cn) || undefined;
}

export function identityOf(caller: Caller, fallback: string): string {
  return claimedIdentity(caller) || fallback || 'local';
}

/** Like Buckley: a request's agent_id must match the caller's identity. */
export function checkIdentity(caller: Caller, agentId: string): grpc.ServiceError | undefined {
  const identity = claimedIdentity(caller);
  if (identity && identity !== agentId) {
    return fail(grpc.status.PERMISSION_DENIED, `agent_id "${agentId}" does not match the caller identity "${identity}"`);
  }
  return undefined;
}

/** A call's failure; `behind`: what failed is the agent or the team's store, not this coordinator (BEHIND_TRAILER). */
export function fail(code: grpc.status, details: string, behind?: 'agent' | 'store'): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (behind) metadata.set(BEHIND_TRAILER, behind);
  return Object.assign(new Error(details), { code, details, metadata }) as grpc.ServiceError;
}

export function agentFailure(error: unknown): grpc.ServiceError {
  if (error instanceof AgentError) return fail(grpc.status.UNAVAILABLE, error.message, 'agent');
  return fail(grpc.status.INTERNAL, error instanceof Error ? error.message : String(error));
}
