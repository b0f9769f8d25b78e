/** What the bridge and the embedded coordinator's worker thread (embeddedWorker.ts) say to each other. */
import type { Config, LogLevel } from '../config.js';

/** What the worker is given (structured-cloned). */
export interface WorkerInput {
  config: Config;
  env: NodeJS.ProcessEnv;
  cwd?: string;
  clientVersion: string;
  secret: string;
  logLevel: LogLevel;
}

/** What the worker says. */
export type WorkerMessage =
  | { kind: 'log'; level: LogLevel; line: string }
  | { kind: 'ready'; address: string; agentDescription?: string; agentProblem?: string }
  | { kind: 'failed'; message: string }
  | { kind: 'group'; pid: number; running: boolean }
  | { kind: 'closed' };
