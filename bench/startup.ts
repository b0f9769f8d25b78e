/**
 * Startup and idle, side by side: the bridge (embedded coordinator, an agent configured, as users
 * start it), a bare vscode-languageserver server bundled the same way, and GitHub's Copilot
 * language server when it is installed (`npm run install-agents -- --copilot`), interleaved round
 * by round so that the machine's moods fall on all of them alike. For each: spawn → `initialize`
 * answered; then, once the process tree has gone idle (its CPU time unchanged for a second), the
 * tree's RSS and the CPU it used to get there (exited children included).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';

export interface StartupServer {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  /** What its editor sends it in `initialize` (Copilot's wants to know the editor). */
  initializationOptions?: object;
}

export interface StartupSample {
  /** spawn → `initialize` answered, ms. */
  initialize: number;
  /** The process tree's RSS once idle, MB. */
  idleRss: number;
  /** CPU (user + system) of the tree, waited-for children included, until idle, ms. */
  cpuToIdle: number;
}

/** How long the tree's CPU time must stay unchanged to count as idle, and how long to wait at most. */
const IDLE_FOR_MS = 1_000;
const IDLE_AT_MOST_MS = 20_000;
const POLL_MS = 50;
/** A server that has not answered `initialize` by then fails the benchmark, named. */
const INITIALIZE_WITHIN_MS = 30_000;

/** Where `npm run install-agents -- --copilot` puts GitHub's Copilot language server. */
export function copilotServer(repo: string): StartupServer | undefined {
  const bin = process.env.BUCKLEY_BENCH_COPILOT ?? join(repo, '.copilot/node_modules/.bin/copilot-language-server');
  if (!existsSync(bin)) return undefined;
  const initializationOptions = { editorInfo: { name: 'Neovim', version: '0.10.4' }, editorPluginInfo: { name: 'buckley-lsp-bench', version: '1.0.0' } };
  return { name: "GitHub Copilot's language server", command: bin, args: ['--stdio'], initializationOptions };
}

/** Each server once per round, `rounds` rounds; the samples per server, in order. */
export async function measureStartups(servers: StartupServer[], rounds: number, workspace: string): Promise<Map<string, StartupSample[]>> {
  const samples = new Map(servers.map((server) => [server.name, [] as StartupSample[]]));
  for (let round = 0; round < rounds; round++) {
    for (const server of servers) samples.get(server.name)!.push(await measureOne(server, workspace));
  }
  return samples;
}

async function measureOne(server: StartupServer, workspace: string): Promise<StartupSample> {
  const home = mkdtempSync(join(tmpdir(), 'buckley-bench-startup-'));
  const started = performance.now();
  const child = spawn(server.command, server.args, {
    env: { ...process.env, HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home, ...server.env } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true,
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  // Whatever a server asks of its editor is answered at once, as an editor with nothing to say would.
  connection.onRequest((method, params) => (method === 'workspace/configuration' ? ((params as { items?: unknown[] }).items ?? []).map(() => null) : null));
  connection.onNotification(() => undefined);
  connection.listen();
  try {
    const rootUri = pathToFileURL(workspace).href;
    const answered = connection.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Neovim', version: '0.10.4' },
      rootUri,
      workspaceFolders: [{ uri: rootUri, name: 'workspace' }],
      capabilities: { window: { workDoneProgress: true, showMessage: {} }, workspace: { configuration: true, workspaceFolders: true } },
      initializationOptions: server.initializationOptions,
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${server.name} did not answer initialize within ${INITIALIZE_WITHIN_MS / 1000} s`)), INITIALIZE_WITHIN_MS)));
    await Promise.race([answered, late]).finally(() => clearTimeout(timer));
    const initialize = performance.now() - started;
    await connection.sendNotification('initialized', {});
    const cpuToIdle = await untilIdle(child.pid!);
    return { initialize, idleRss: treeRssMb(child.pid!), cpuToIdle };
  } finally {
    connection.dispose();
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
    rmSync(home, { recursive: true, force: true });
  }
}

/** Polls the tree's CPU time until it has not changed for IDLE_FOR_MS; returns it. */
async function untilIdle(pid: number): Promise<number> {
  const since = performance.now();
  let last = treeCpuMs(pid);
  let unchangedSince = performance.now();
  while (performance.now() - unchangedSince < IDLE_FOR_MS && performance.now() - since < IDLE_AT_MOST_MS) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const cpu = treeCpuMs(pid);
    if (cpu !== last) {
      last = cpu;
      unchangedSince = performance.now();
    }
  }
  return last;
}

function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)) if (task) children.push(Number(task));
  } catch {
    children = [];
  }
  return [pid, ...children.flatMap(descendants)];
}

/** utime + stime + cutime + cstime of each live process of the tree, in ms (clock ticks of 10 ms). */
function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const member of descendants(pid)) {
    try {
      const fields = readFileSync(`/proc/${member}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited meanwhile: its time is its parent's cutime once waited for
    }
  }
  return ticks * 10;
}

function treeRssMb(pid: number): number {
  let kb = 0;
  for (const member of descendants(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${member}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return kb / 1024;
}
