/**
 * The processes our coordinator starts (agents), each in a process group of its own, so that
 * stopping an agent stops what it started too (its MCP servers, shells, test runs). Stopping
 * is SIGTERM (with SIGCONT, so a stopped process can act on it) to the whole group, then
 * SIGKILL to the group once the grace period is over or the agent has exited. Whatever is
 * still running when this process exits — however it exits — is killed then.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** How long an agent may take to exit after SIGTERM before its group is killed. */
export const STOP_GRACE_MS = 1_000;

/** Leaders of the process groups we started whose groups may still be running. */
const groups = new Set<ChildProcess>();
/** Groups another thread of this process started (the embedded coordinator's worker), by leader pid. */
const adopted = new Set<number>();
/** Told when a group starts or is gone (the worker tells the main thread, which outlives it). */
let groupListener: ((pid: number, running: boolean) => void) | undefined;

/** Reports the groups this thread starts and stops (see `adoptGroup`). */
export function onGroupChange(listener: (pid: number, running: boolean) => void): void {
  groupListener = listener;
}

/**
 * A group another thread started (running) or stopped: killed when this process exits, since a
 * worker thread's own exit hook does not run when the process ends under it.
 */
export function adoptGroup(pid: number, running: boolean): void {
  if (running) {
    adopted.add(pid);
    installExitHook();
  } else adopted.delete(pid);
}

/** The agents among the groups (the others are commands they run). */
const agents = new WeakSet<ChildProcess>();

/** How many agents this thread started are running (a coordinator's metrics). */
export function agentsRunning(): number {
  let count = 0;
  for (const child of groups) if (agents.has(child)) count++;
  return count;
}

/** Spawns `program` as the leader of a new process group (a session of its own): an agent, or a command one runs. */
export function spawnGroup(program: string, args: string[], options: Omit<SpawnOptions, 'detached'>, role: 'agent' | 'command' = 'command'): ChildProcess {
  const child = spawn(program, args, { ...options, detached: true });
  if (child.pid !== undefined) {
    groups.add(child);
    if (role === 'agent') agents.add(child);
    groupListener?.(child.pid, true);
    installExitHook();
    // An agent that exits by itself may leave children behind: they go with it.
    child.once('exit', () => {
      signalGroup(child, 'SIGKILL');
      forget(child);
    });
  }
  return child;
}

/** Closes the descriptors of ours that a spawn's stdio held (the child has its own copies now). */
export function closeOwnDescriptors(stdio: readonly unknown[]): void {
  for (const item of stdio) if (typeof item === 'number' && item > 2) closeSync(item);
}

/** Stops the group led by `child`: SIGTERM, then SIGKILL after `graceMs` or once the leader exited. */
export async function stopGroup(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (!groups.has(child)) return;
  signalGroup(child, 'SIGTERM');
  signalGroup(child, 'SIGCONT');
  if (child.exitCode === null && child.signalCode === null) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  signalGroup(child, 'SIGKILL');
  forget(child);
}

function forget(child: ChildProcess): void {
  if (groups.delete(child) && child.pid !== undefined) groupListener?.(child.pid, false);
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid !== undefined) killGroup(child.pid, signal);
}

function killGroup(leader: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-leader, signal);
  } catch {
    // ESRCH: the whole group is gone already.
  }
}

let hooked = false;

function installExitHook(): void {
  if (hooked) return;
  hooked = true;
  // Synchronous, so it also runs on process.exit() from anywhere (the LSP `exit` notification).
  process.on('exit', () => {
    for (const child of groups) signalGroup(child, 'SIGKILL');
    for (const pid of adopted) killGroup(pid, 'SIGKILL');
    groups.clear();
    adopted.clear();
  });
}

/**
 * How many processes the tree under `pid` holds (it and its descendants), from /proc; undefined
 * where there is no /proc to read (another OS). The sandbox's network relays (socat) are ours, not
 * the agent's: they are not counted.
 */
export function processTreeSize(pid: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const children = new Map<number, number[]>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The parent is the 4th field, after the command name in parentheses (which may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'socat') continue;
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  let count = 0;
  for (const queue = [pid]; queue.length > 0; count++) queue.push(...(children.get(queue.shift()!) ?? []));
  return count;
}
