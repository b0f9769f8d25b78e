/**
 * The embedded coordinator's worker thread (see embedded.ts): finds the agent, serves the
 * coordinator on a loopback port, and reports its log lines and agent processes to the main
 * thread. It runs below the LSP thread's priority where the system allows it, so that on a
 * busy machine the editor's requests come first.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { detectAgent } from './agents/detect.js';
import { onGroupChange } from './agents/processes.js';
import { RootLogger, serveOnFaults } from '../logger.js';
import type { WorkerInput, WorkerMessage } from './embeddedMessages.js';
import { startCoordinator, type RunningCoordinator } from './server.js';
import { startTracing, stopTracing } from '../tracing.js';

/** How much lower than the LSP thread (a nice value: 0–19, higher is lower). */
const LOWER_PRIORITY = 5;

const input = workerData as WorkerInput;
const post = (message: WorkerMessage) => parentPort!.postMessage(message);
const logger = new RootLogger(input.logLevel, (level, line) => post({ kind: 'log', level, line }));

/** Linux schedules threads on their own: this thread's id is where /proc/thread-self points. */
function lowerThisThreadsPriority(): void {
  try {
    const threadId = Number(readlinkSync('/proc/thread-self').split('/').pop());
    setPriority(threadId, LOWER_PRIORITY);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}

async function main(): Promise<void> {
  lowerThisThreadsPriority();
  onGroupChange((pid, running) => post({ kind: 'group', pid, running }));
  // As in the main thread: a fault in one call is logged, and the coordinator serves on.
  serveOnFaults(logger, 'the embedded coordinator');
  const detection = await detectAgent({ config: input.config, env: input.env, logger: logger.child('agent'), cwd: input.cwd, clientVersion: input.clientVersion });
  let running: RunningCoordinator | undefined;
  parentPort!.on('message', (message: { kind: string }) => {
    if (message.kind !== 'close') return;
    void (running?.close() ?? Promise.resolve()).then(() => stopTracing()).finally(() => {
      post({ kind: 'closed' });
      parentPort!.close();
    });
  });
  await startTracing('buckley-lsp', input.clientVersion, input.env, (message) => logger.warn(message));
  running = await startCoordinator('127.0.0.1:0', { driver: detection.driver, agentProblem: detection.problem, logger: logger.child('embedded'), secret: input.secret });
  post({ kind: 'ready', address: running.address, agentDescription: detection.driver?.description, agentProblem: detection.problem });
}

main().catch((error: unknown) => post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }));
