/**
 * Keeps the editor connection's one coordinator session up: starts the embedded coordinator (if
 * no address is set) and the gRPC client, makes the session, and when it fails backs off (an
 * exponentially growing, jittered wait, trying again in the background) or — refused for who we
 * are — fails for good. Its state is one value (`SessionState`), and reconnecting is a wrapper
 * around calls (`calling`): a call the coordinator lost (it restarted) is made once more on a new
 * session, as nice-grpc's retry middleware does.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import { addressesOf } from '../../net.js';
import { FailedError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { seconds } from '../../text.js';
import { uriToPath } from '../../uri.js';
import { CoordinatorClient } from '../../wire/client.js';
import type { ServerCapabilities } from '../../wire/contract.js';
import { channelFor } from '../../wire/credentials.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import { describeConnectFailure, plainDetails, type Failure } from './failures.js';
import { identityFor, isRefusal, refusalError, type Identity } from './identity.js';
import { NO_AGENT_SUMMARY } from './preflight.js';

export type SessionState =
  | { kind: 'starting' }
  | { kind: 'ready'; sessionId: string; /** The connection broke since it was made: the next call makes a new one. */ stale: boolean }
  | { kind: 'backoff'; failure: Failure; failures: number; retryAt: number; /** The session it had, if any. */ sessionId?: string }
  /** A failure no retry mends (the coordinator refused our identity): calls fail at once with it. */
  | { kind: 'failed'; failure: Failure; sessionId?: string };

/** What a connection is made with: the settings, the environment, who the bridge is and where it works. */
export interface ConnectionOptions {
  config: Config;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  clientName: string;
  serverVersion: string;
  workspaceRoot?: string;
}

export interface SessionOptions extends ConnectionOptions {
  /** Called at each change of state. */
  changed(): void;
  /** Called once a session is made: the open files are told again. */
  established(): void;
}

export class SessionKeeper {
  state: SessionState = { kind: 'starting' };
  readonly mode: 'embedded' | 'remote';
  /** The coordinator in use: one of `addresses`. */
  address: string | undefined;
  /** The coordinators to try, in turn (a team's replicas): the configured ones, or the embedded one. */
  addresses: string[];
  capabilities: ServerCapabilities | undefined;
  agentDescription: string | undefined;
  /** The embedded coordinator's agent problem (none configured or found), which no reconnection mends. */
  agentProblem: Failure | undefined;
  /** Who the bridge is to the coordinator (the settings do not change under a connection). */
  readonly identity: Identity;
  /** Resolves once the first connection is up or has failed. */
  readonly settled: Promise<void>;
  client: CoordinatorClient | undefined;
  private secret: string | undefined;
  private embedded: { close(): Promise<void> } | undefined;
  /** A (re-)connection under way, shared by every caller that needs it. */
  private establishing: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** The connection broke while a session was being made: it may belong to the process that went away. */
  private brokeWhileEstablishing = false;
  /** The coordinator in use went away: the next connection tries the next one first. */
  private moveOn = false;
  private closed = false;

  constructor(private readonly options: SessionOptions) {
    this.addresses = addressesOf(options.config.coordinator.address);
    this.mode = this.addresses.length ? 'remote' : 'embedded';
    this.address = this.addresses[0];
    this.identity = identityFor(options.config);
    this.settled = this.setUp()
      .then(() => this.reestablish())
      .catch((error: unknown) => this.failed(error));
  }

  get sessionId(): string | undefined {
    return this.state.kind === 'starting' ? undefined : this.state.sessionId;
  }

  get callTimeoutMs(): number {
    return this.options.config.coordinator.callTimeoutMs;
  }

  /**
   * Makes a call on the session, within `signal`: waits for it, and when the coordinator lost
   * the call (it went away or restarted) connects anew and makes it once more — where `retry`
   * says it may (a stream that delivered nothing yet).
   */
  async calling<T>(signal: AbortSignal, attempt: (client: CoordinatorClient) => Promise<T>, retry: () => boolean = () => true): Promise<T> {
    const client = await this.usable(signal);
    try {
      return await attempt(client);
    } catch (error) {
      if (!isLost(error) || signal.aborted) throw error;
      this.lost(error);
      if (!retry()) throw error;
      return attempt(await this.ready(signal));
    }
  }

  /** Waits for the session and an agent; or says, as an FailedError, why there is none. */
  async usable(signal: AbortSignal): Promise<CoordinatorClient> {
    const client = await this.ready(signal);
    if (this.agentProblem && !this.agentDescription) throw FailedError.of(this.agentProblem);
    return client;
  }

  /** Waits (within the signal) for the connection and returns the client, or says why not. */
  async ready(signal: AbortSignal): Promise<CoordinatorClient> {
    const within = (promise: Promise<unknown>) => Promise.race([promise, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
    if (this.state.kind === 'starting') await within(this.settled);
    if (this.state.kind === 'failed') throw FailedError.of(this.state.failure);
    if (this.state.kind === 'ready' && this.state.stale && !signal.aborted) await within(this.reestablish());
    if (this.state.kind === 'backoff' && this.client && !signal.aborted) {
      // The circuit breaker: while it is open, fail fast instead of piling up.
      const wait = this.state.retryAt - Date.now();
      if (wait > 0) throw FailedError.of({ message: `${this.state.failure.message} (next try in ${seconds(wait)})`, summary: this.state.failure.summary });
      await within(this.reestablish());
    }
    if (signal.aborted) throw new CoordinatorError('connect', Status.CANCELLED, 'cancelled while connecting');
    const state = this.state as SessionState;
    if (state.kind === 'ready' && this.client) return this.client;
    throw FailedError.of(state.kind === 'backoff' || state.kind === 'failed' ? state.failure : { message: 'the coordinator is not available' });
  }

  /** A call refused for who we are: the session fails for good; the failure, to report. */
  refused(error: CoordinatorError): Failure {
    const failure = refusalError(this.address!, this.identity, error).failure;
    this.failedForGood(failure);
    return failure;
  }

  /**
   * Closes at once: a connection attempt under way is abandoned (its calls are cancelled with the
   * client), not waited for — `shutdown` must not wait for a coordinator that does not answer.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.client?.close();
    await this.embedded?.close();
  }

  /** Once: the embedded coordinator (if any) and the gRPC client. */
  private async setUp(): Promise<void> {
    if (this.mode === 'embedded') await this.startEmbedded();
    if (this.closed) throw new Error('closed while starting');
    this.use(this.address!);
  }

  /** A client for the coordinator at `address` (the one before it, if any, closed). */
  private use(address: string): void {
    this.client?.close();
    this.address = address;
    const channel = channelFor(address, this.options.config.coordinator.tls);
    const client = new CoordinatorClient({ address, agentId: this.identity.agentId, secret: this.secret, credentials: channel.credentials, channelOptions: channel.options });
    client.onDisconnect(() => {
      if (client === this.client) this.connectionBroke();
    });
    this.client = client;
  }

  private async startEmbedded(): Promise<void> {
    const { config, logger, env, workspaceRoot, serverVersion } = this.options;
    const { startEmbedded } = await import('./embedded.js');
    // Only this bridge may use it: it listens on loopback, where any local process could call.
    this.secret = randomBytes(32).toString('hex');
    const running = await startEmbedded({ config, env, cwd: workspaceRoot ? uriToPath(workspaceRoot) : undefined, clientVersion: serverVersion, secret: this.secret, logger });
    this.agentDescription = running.agentDescription;
    this.embedded = running;
    this.address = running.address;
    this.addresses = [running.address];
    if (this.closed) {
      await running.close();
      throw new Error('closed while starting');
    }
    if (running.agentProblem) {
      this.agentProblem = { message: running.agentProblem, summary: NO_AGENT_SUMMARY };
      logger.warn(running.agentProblem);
    }
  }

  /**
   * The connection broke: whatever comes back on this address may be another coordinator
   * process, which does not know our session. The next call connects anew first.
   */
  private connectionBroke(): void {
    if (this.closed) return;
    // Whenever a session exists, even one being set up: it may belong to the process that went away.
    if (this.establishing) this.brokeWhileEstablishing = true;
    this.moveOn = true;
    if (this.state.kind !== 'ready') return;
    this.state = { ...this.state, stale: true };
    this.options.logger.info(`the connection to the coordinator at ${this.address} broke; the next call starts a new session`);
  }

  /** (Re-)connects: capabilities, a new session, the open files. Shared by concurrent callers. */
  private reestablish(): Promise<void> {
    this.establishing ??= this.establish()
      .then((sessionId) => {
        this.state = { kind: 'ready', sessionId, stale: this.brokeWhileEstablishing };
        this.options.changed();
        this.options.established();
      })
      .catch((error: unknown) => this.failed(error))
      .finally(() => {
        this.establishing = undefined;
      });
    return this.establishing;
  }

  /**
   * A session on the coordinator in use, else on the next of the team's that answers (the one
   * that went away last is tried last); what went wrong with each, if none does.
   */
  private async establish(): Promise<string> {
    const count = this.addresses.length;
    const first = (this.addresses.indexOf(this.address!) + (this.moveOn && count > 1 ? 1 : 0)) % count;
    this.moveOn = false;
    const failures: string[] = [];
    for (let tried = 0; tried < count; tried++) {
      const address = this.addresses[(first + tried) % count]!;
      if (address !== this.address) this.use(address);
      try {
        return await this.establishHere();
      } catch (error) {
        if (count === 1 || (error instanceof FailedError && error.final) || isRefusal(error)) throw error;
        failures.push((error as Error).message);
        this.options.logger.warn(`${(error as Error).message}${tried + 1 < count ? '; trying the next coordinator' : ''}`);
      }
    }
    throw new FailedError(`none of the ${count} coordinators (buckley.coordinator.address) answers: ${failures.join('; ')}`, `none of the ${count} coordinators answers (see log)`);
  }

  private async establishHere(): Promise<string> {
    const client = this.client!;
    this.brokeWhileEstablishing = false;
    try {
      this.capabilities = await client.call.GetServerCapabilities({}, { timeoutMs: this.callTimeoutMs });
    } catch (error) {
      const failure = describeConnectFailure(this.mode, this.address!, error, this.options.config.coordinator.tls !== undefined);
      throw new FailedError(failure.message, failure.summary);
    }
    const { clientName, workspaceRoot, logger } = this.options;
    const metadata = { client: clientName, ...(workspaceRoot ? { workspace_root: workspaceRoot } : {}) };
    const session = await client.call.CreateSession({ agent_id: this.identity.agentId, metadata }, { timeoutMs: this.callTimeoutMs }).catch((error: unknown) => {
      throw isRefusal(error) ? refusalError(this.address!, this.identity, error) : error;
    });
    logger.info(`acting as agent id ${this.identity.agentId} (${this.identity.source})`);
    const { protocol_version, features } = this.capabilities;
    logger.info(`connected to the ${this.mode} coordinator at ${this.address} (protocol ${protocol_version || '?'}; features ${features.join(', ') || 'none'}); session ${session.session_id}`);
    return session.session_id;
  }

  /** A failed connection: backoff (the circuit breaker opens for a while), or failed for good. */
  private failed(error: unknown): void {
    if (this.closed) return;
    if (error instanceof FailedError && error.final) return this.failedForGood(error.failure);
    const failures = this.state.kind === 'backoff' ? this.state.failures + 1 : 1;
    const backoff = Math.min(30_000, 500 * 2 ** (failures - 1)) * (0.5 + Math.random());
    const message = error instanceof Error ? error.message : String(error);
    const failure = { message, summary: error instanceof FailedError ? error.summary : `cannot reach ${this.address ?? 'the coordinator'} (see log)` };
    this.state = { kind: 'backoff', failure, failures, retryAt: Date.now() + backoff, ...(this.sessionId ? { sessionId: this.sessionId } : {}) };
    this.options.logger.error(`${message} (next try in ${seconds(backoff)})`);
    this.options.changed();
    // Keep trying in the background, so the connection is back as soon as the coordinator is.
    if (this.client && !this.closed) {
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => void this.reestablish(), backoff);
      this.retryTimer.unref();
    }
  }

  /** A failure no retry mends: said once, no retries; every call fails at once with it. */
  private failedForGood(failure: Failure): void {
    clearTimeout(this.retryTimer);
    this.state = { kind: 'failed', failure, ...(this.sessionId ? { sessionId: this.sessionId } : {}) };
    this.options.logger.error(`${failure.message} (no retries: change the settings)`);
    this.options.changed();
  }

  /**
   * A call failed in a way that means the coordinator went away or forgot us (it restarted):
   * the next call connects anew, at once.
   */
  private lost(error: CoordinatorError): void {
    if (this.state.kind !== 'ready') return;
    const message = `the coordinator at ${this.address} went away: ${plainDetails(error.details)}`;
    this.state = { kind: 'backoff', failure: { message, summary: `the coordinator at ${this.address ?? ''} went away` }, failures: 0, retryAt: 0, sessionId: this.state.sessionId };
    this.options.logger.warn(`${message}; reconnecting${this.addresses.length > 1 ? ' to the next coordinator' : ''}`);
    this.moveOn = true;
    this.options.changed();
    void this.reestablish();
  }
}

/**
 * UNAVAILABLE: the coordinator went away (or restarted under us) — not its agent, model or store,
 * which it says (a model's HTTP 500 had the bridge reconnect and tell the user the coordinator
 * went away). Not NOT_FOUND: Buckley never says it for a session it does not know (it makes one),
 * and a restart shows as a broken connection first (connectionBroke).
 */
export function isLost(error: unknown): error is CoordinatorError {
  return error instanceof CoordinatorError && error.coordinatorGone;
}
