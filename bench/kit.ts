/**
 * What every part of `npm run bench` shares: its options, the figures it records, the servers it
 * starts (each ended as the benchmark exits), and the time each part may take.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, ProgressType, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';

export const quick = process.argv.includes('--quick');
export const AskPartialResult = new ProgressType<{ answer: string }>();
/** `--only=latency,streaming`: run just those parts (while working on one figure). */
export const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
export const runs = (part: string) => !only || only.includes(part);
/** `--profile`: the bridge and coordinator processes write CPU profiles to bench/profiles/. */
export const PROFILE_ARGS = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${fileURLToPath(new URL('../bench/profiles/', import.meta.url))}`] : [];
export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const BIN = join(REPO, 'dist/buckley-lsp.js');
export const AGENT = `${process.execPath} ${join(REPO, 'fixtures/scripted-agent.mjs')}`;
export const OUT = join(REPO, 'bench/results');
export const ECHO_SERVER = join(REPO, 'dist/bench-echo-server.mjs');

export interface Figure {
  figure: string;
  value: number;
  unit: string;
  baseline: string;
  baselineValue: number;
  ratio: number;
  goal: string;
  met: boolean | null;
}
export const figures: Figure[] = [];
export const record = (figure: Omit<Figure, 'ratio' | 'met'> & { ratio?: number; met?: boolean | null }) => {
  const ratio = figure.ratio ?? figure.value / figure.baselineValue;
  figures.push({ ...figure, ratio, met: figure.met ?? null });
};
export const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
export const median = (values: number[]) => pct(values, 50);
export const now = () => performance.now();

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
}

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

export interface Lsp {
  child: ChildProcess;
  connection: MessageConnection;
  /** shutdown + exit, and waits for the process to end. */
  stop(): Promise<void>;
  /** Ends the process at once (startup runs need nothing more from it). */
  kill(): void;
}

/** The benchmark's temporary state directories, removed as it exits. */
export const temporary: string[] = [];
/** The processes it started and that still run: ended as it exits, however it exits (a part past its deadline too). */
export const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

export function tracked(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** How long one part may take before the benchmark fails, naming it: a part that waits for ever must not hold CI (the quick run's parts take under a minute each). */
export const PART_DEADLINE_MS = Number(process.env.BENCH_PART_DEADLINE_S ?? (quick ? 180 : 1800)) * 1000;

export async function part<T>(name: string, run: () => Promise<T> | T): Promise<T> {
  const t0 = now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`benchmark part "${name}" did not end within ${PART_DEADLINE_MS / 1000} s (run it alone: npm run bench -- --only=${name})`)), PART_DEADLINE_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(run), late]);
  } finally {
    clearTimeout(timer);
    console.log(`  ${name}: ${((now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** A task's progress shows a step of the agent's plan being worked on (the plan travels whole with the progress). */
export const showsPlanStep = (p: { status: string; plan?: Array<{ status: string }> }) => p.status === 'in_progress' && (p.plan?.some((step) => step.status === 'in_progress') ?? false);

export function spawnLsp(args: string[], env: Record<string, string | undefined> = {}): Lsp {
  const state = mkdtempSync(join(tmpdir(), 'buckley-bench-'));
  temporary.push(state);
  const child = tracked(spawn(process.execPath, [...PROFILE_ARGS, ...args], { env: { ...process.env, XDG_STATE_HOME: state, HOME: state, BUCKLEY_AGENT: AGENT, ...env } as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'ignore'] }));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
  connection.onRequest('window/showDocument', () => ({ success: true }));
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();
  let stopping = false;
  // A process that dies under the benchmark must fail it, not leave it waiting for ever.
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`benchmark failed: ${args.join(' ')} exited (${signal ?? code}) while in use`);
    process.exit(1);
  });
  return {
    child,
    connection,
    stop: async () => {
      stopping = true;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await connection.sendRequest('shutdown').catch(() => undefined);
      await connection.sendNotification('exit').catch(() => undefined);
      await exited;
      connection.dispose();
    },
    kill: () => {
      stopping = true;
      child.kill();
      connection.dispose();
    },
  };
}

export const initialize = (lsp: Lsp, capabilities: object = {}) =>
  lsp.connection.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(join(REPO, 'fixtures/workspace')).href, capabilities }).then(() =>
    lsp.connection.sendNotification('initialized', {}),
  );

export async function untilReady(lsp: Lsp): Promise<void> {
  for (;;) {
    const status = await lsp.connection.sendRequest<any>('buckley/status', {});
    if (status.coordinator.state === 'ready') return;
    if (status.coordinator.state === 'unavailable') throw new Error(`coordinator unavailable: ${status.coordinator.error}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

