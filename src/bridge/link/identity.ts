/**
 * Who the bridge is to the coordinator: the agent id it sends (`agent_id`, `x-buckley-agent-id`).
 * Buckley keys its sessions by agent id (two clients with one id share a session) and, over
 * mutual TLS, requires the id to be the client certificate's name (CN). So: the setting when
 * there is one; else the certificate's name; else an id of this server process's own.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { PEM_MAX_BYTES, readFileBounded } from '../../fileAccess.js';
import type { Config } from '../../config.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import { FailedError } from '../../errors.js';

export interface Identity {
  agentId: string;
  /** Where the id comes from, for the messages that name it. */
  source: 'setting' | 'certificate' | 'instance';
  /** The client certificate's name (CN), when there is a client certificate with one. */
  certificateName?: string;
}

/** One per server process (one per editor): never shared by accident. */
const INSTANCE_ID = `buckley-lsp-${randomBytes(4).toString('hex')}`;

export function identityFor(config: Config): Identity {
  const certificateName = config.coordinator.tls?.cert ? nameInCertificate(config.coordinator.tls.cert) : undefined;
  const named = certificateName ? { certificateName } : {};
  if (config.coordinator.agentId) return { agentId: config.coordinator.agentId, source: 'setting', ...named };
  if (certificateName) return { agentId: certificateName, source: 'certificate', certificateName };
  return { agentId: INSTANCE_ID, source: 'instance' };
}

/** The CN of a PEM certificate, or undefined (unreadable files are reported where they are read). */
export function nameInCertificate(path: string): string | undefined {
  try {
    const subject = new X509Certificate(readFileBounded(path, PEM_MAX_BYTES)).subject;
    return /(?:^|\n)CN=([^\n]*)/.exec(subject)?.[1] || undefined;
  } catch {
    return undefined;
  }
}

/** PERMISSION_DENIED or UNAUTHENTICATED: the coordinator refuses who we say we are. */
export function isRefusal(error: unknown): error is CoordinatorError {
  return error instanceof CoordinatorError && (error.code === Status.PERMISSION_DENIED || error.code === Status.UNAUTHENTICATED);
}

/**
 * A refusal as the configuration error it is: both names and the key to change. Retrying does
 * not mend it, so it is `final`.
 */
export function refusalError(address: string, identity: Identity, error: CoordinatorError): FailedError {
  const { agentId, source, certificateName } = identity;
  const actsAs =
    source === 'setting'
      ? `agent id "${agentId}" (buckley.coordinator.agentId)`
      : source === 'certificate'
        ? `agent id "${agentId}", its client certificate's name`
        : `agent id "${agentId}" (its own: neither buckley.coordinator.agentId nor a client certificate names one)`;
  const certificate = certificateName ? `its client certificate (buckley.coordinator.tls.cert) names "${certificateName}"` : 'it has no client certificate (buckley.coordinator.tls.cert and tls.key)';
  let fix: string;
  if (certificateName && certificateName !== agentId) fix = `unset buckley.coordinator.agentId, so that the certificate's name is used, or set it to "${certificateName}"`;
  else if (!certificateName) fix = 'set buckley.coordinator.tls.cert and tls.key to a client certificate the coordinator accepts; its name (CN) becomes the agent id';
  else fix = `the coordinator does not accept "${certificateName}": ask its administrator for a client certificate it accepts`;
  return new FailedError(
    `the coordinator at ${address} refused buckley-lsp's identity (${error.details}). buckley-lsp acts as ${actsAs}; ${certificate}. Buckley requires the agent id to be the client certificate's name: ${fix}.`,
    'agent id refused: see buckley.coordinator.agentId',
    { final: true },
  );
}
