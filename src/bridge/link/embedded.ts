/**
 * The embedded coordinator runs in a worker thread of its own: the agent's stream of updates
 * (parsing, validating, batching) then never holds up the editor's messages on the LSP thread,
 * and the LSP thread's work never slows the stream. The worker is `embeddedWorker.ts`, bundled
 * as dist/buckley-lsp-embedded.js next to the chunk that loads this module.
 */
import { Worker } from 'node:worker_threads';
import { adoptGroup } from '../../coordinator/agents/processes.js';
import type { Config, LogLevel } from '../../config.js';
import type { WorkerInput, WorkerMessage } from '../../coordinator/embeddedMessages.js';
import type { Logger } from '../../logger.js';

export interface EmbeddedOptions {
  config: Config;
  env: NodeJS.ProcessEnv;
  /** Where the agent starts. */
  cwd?: string;
  clientVersion: string;
  /** Callers must send it (`authorization: Bearer`): the coordinator listens on loopback. */
  secret: string;
  logger: Logger;
}

export interface EmbeddedCoordinator {
  address: string;
  agentDescription?: string;
  /** Why there is no agent (none configured or found), with how to configure one. */
  agentProblem?: string;
  /** Stops the agents and the worker. */
  close(): Promise<void>;
}

/** How long the worker may take to stop its agents before it is terminated. */
const CLOSE_DEADLINE_MS = 5_000;

const LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error'];

export function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedCoordinator> {
  const { logger } = options;
  const input: WorkerInput = {
    config: options.config,
    env: { ...options.env },
    cwd: options.cwd,
    clientVersion: options.clientVersion,
    secret: options.secret,
    // The most detailed level the log takes now: lines below it are not even sent.
    logLevel: LEVELS.find((level) => logger.enabled(level)) ?? 'error',
  };
  const worker = new Worker(new URL('./buckley-lsp-embedded.js', import.meta.url), { workerData: input, env: options.env, stdout: false, stderr: false });
  let closed: (() => void) | undefined;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return new Promise<EmbeddedCoordinator>((resolve, reject) => {
    worker.on('message', (message: WorkerMessage) => {
      switch (message.kind) {
        case 'log':
          logger[message.level](message.line);
          break;
        case 'group':
          adoptGroup(message.pid, message.running);
          break;
        case 'ready':
          resolve({
            address: message.address,
            agentDescription: message.agentDescription,
            agentProblem: message.agentProblem,
            close: async () => {
              const done = new Promise<void>((resolveClose) => (closed = resolveClose));
              worker.postMessage({ kind: 'close' });
              const deadline = new Promise<void>((resolveDeadline) => setTimeout(resolveDeadline, CLOSE_DEADLINE_MS).unref());
              await Promise.race([done, exited, deadline]);
              await worker.terminate();
            },
          });
          break;
        case 'failed':
          reject(new Error(message.message));
          void worker.terminate();
          break;
        case 'closed':
          closed?.();
          break;
      }
    });
    worker.on('error', (error) => {
      // After `ready` the coordinator is gone: calls to it fail as unreachable and say so.
      logger.error(`the embedded coordinator stopped: ${error.stack ?? error.message}`);
      reject(error);
    });
    void exited.then(() => reject(new Error('the embedded coordinator exited while starting')));
  });
}
