/**
 * The operating-system sandbox our coordinator runs agents in, so that what an ask or a task may
 * touch is enforced, whatever the agent does (its own tools, shell commands it judges harmless,
 * modes that never ask): bubblewrap on Linux.
 *
 * - The whole filesystem is read-only; `/tmp` and `/run` are private and empty (other programs'
 *   sockets and temporary files are not the agent's), with the workspace and the agent's own
 *   program put back where they live there.
 * - Writable: in a **task**, the workspace (but for its git hooks and config, which run code
 *   later, and the project's editor settings: sandboxPlans.ts); in both, the agent's own state
 *   (its sessions and settings: `~/.claude`, `~/.codex`, … — known.ts) and what
 *   `buckley.agent.sandbox.writable` adds.
 *   In an **ask** nothing of the user's can be written.
 * - **Credentials** cannot be read: the user's (`~/.ssh`, cloud keys, …), the system's, and the
 *   workspace's by name (`.env`, keys) are covered by an empty, unreadable file or folder (a
 *   read says "Permission denied"). Their reads go through `fs/read_text_file`, which asks the
 *   user (files.ts).
 * - A home (and XDG folders) under `/tmp` or `/run` (containers, CI machines) stays visible,
 *   read-only as any home is, with the agent's state in it writable where it lives.
 * - A user namespace of its own, no capabilities (nothing in it can undo its mounts; root's agent
 *   is an ordinary user there), its own process namespace (its processes end with it, and it sees
 *   no other process's environment), and it dies with its parent.
 * - A network namespace of its own where socat runs (sandboxNetwork.ts): the agent reaches the
 *   hosts it may through our proxy, and neither the machine's loopback services nor its abstract
 *   Unix sockets; those bound at a path it would see are hidden (sandboxSockets.ts).
 *
 * Where bubblewrap cannot run (another OS, no user namespaces), `probeSandbox` says why: the user
 * is told once, `doctor` says so, and `buckley.ask.requireReadOnly` refuses asks.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, openSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { credentialPlaces } from '../../risk/paths.js';
import { guardedNow } from './guardedState.js';
import { launcherArgs, proxyEnvironment, type NetworkPlan } from './sandboxNetwork.js';

export interface SandboxPlan {
  /** The workspace: writable in a task, read-only in an ask. */
  workspace?: string;
  /** A task may write the workspace; an ask nothing of the user's. */
  writesWorkspace: boolean;
  /** Paths the agent may write whatever the intent: its own state, and the user's additions. */
  stateDirs: string[];
  /** State files of the agent's own (written in place when they exist). */
  stateFiles: string[];
  /** Where in its state a write runs code later (its settings' hooks, its plugins; `folder/*`: each folder in it): read-only where they exist. */
  guarded?: string[];
  /** Credential files and folders found in the workspace (credentialScan.ts). */
  workspaceCredentials: string[];
  /** Credential places the agent's cloud login needs (`~/.aws` for Amazon Bedrock): not hidden, read-only. */
  shown?: string[];
  /** The user's home, for its credential folders. */
  home: string;
  /** The agent's program and the files its command names: their top folder is put back when it is under `/tmp` or `/run`. */
  programPaths: string[];
  /** The agent's working directory. */
  cwd: string;
  /** Folders under `/tmp` or `/run` that stay visible, read-only (the home and XDG folders there). */
  visible?: string[];
  /** The confined network; none: the agent keeps the host's. */
  network?: NetworkPlan;
  /** The Unix sockets bound on this machine (sandboxSockets.ts): hidden where the sandbox would show them. */
  sockets?: string[];
}

export type SandboxProbe = { ok: true; bwrap: string } | { ok: false; reason: string };

const PRIVATE_ROOTS = ['/tmp', '/run'];

/** Places in a workspace where a write runs code later (what the risk rules call persistent): read-only even in a task. */
const PERSISTENT_IN_WORKSPACE = ['.git/hooks', '.git/config'];

/**
 * A user namespace of its own, no capabilities, its own processes, dead with its parent. Root runs
 * its agent as an ordinary user of the namespace (uid 1000, its files still root's outside): the
 * agent has no root powers, and a sandbox the agent sets up for its own commands (Codex's
 * bubblewrap) can still make its namespaces, as it can for any other user.
 */
const ISOLATION = ['--unshare-user', ...(process.getuid?.() === 0 ? ['--uid', '1000', '--gid', '1000'] : []), '--unshare-pid', '--die-with-parent', '--cap-drop', 'ALL'];

/**
 * For a sandbox another process starts (an ACP client's terminal): a session of its own, so that
 * nothing in it can type into the terminal it was started from (the TIOCSTI ioctl) — a terminal
 * editor's plugin may run it in the user's. Ours start in a session of their own already
 * (processes.ts), where the agent's process group still gets our stop's SIGTERM.
 */
const CLIENT_ISOLATION = ['--new-session'];

let probed: Promise<SandboxProbe> | undefined;
let probedNetwork: Promise<string | undefined> | undefined;

/** Whether bubblewrap runs here (cached): it must start a sandbox as `sandboxArgs` builds one. */
export function probeSandbox(bwrap = 'bwrap'): Promise<SandboxProbe> {
  if (process.platform !== 'linux') return Promise.resolve({ ok: false, reason: `no sandbox on ${process.platform}: buckley-lsp sandboxes agents with bubblewrap, which runs on Linux only` });
  probed ??= runProbe(bwrap, []).then((failure): SandboxProbe => {
    if (!failure) return { ok: true, bwrap };
    if (failure.missing) return { ok: false, reason: 'bubblewrap (bwrap) is not installed: install it (Debian, Ubuntu: `apt install bubblewrap`; Fedora: `dnf install bubblewrap`)' };
    if (failure.said.startsWith('bubblewrap cannot start')) return { ok: false, reason: failure.said };
    return { ok: false, reason: `bubblewrap cannot set up a sandbox here: ${failure.said} (user namespaces may be turned off: kernel.unprivileged_userns_clone, or an AppArmor rule)` };
  });
  return probed;
}

/** Why a sandbox cannot have a network of its own here (undefined: it can), cached. */
export function probeNetworkNamespace(bwrap = 'bwrap'): Promise<string | undefined> {
  probedNetwork ??= runProbe(bwrap, ['--unshare-net']).then((failure) => failure && `bubblewrap cannot give the sandbox a network of its own here: ${failure.said}`);
  return probedNetwork;
}

/** Runs `true` in a sandbox with `extra` options: undefined, or how it failed (its last line of stderr). */
function runProbe(bwrap: string, extra: string[]): Promise<{ missing: boolean; said: string } | undefined> {
  return new Promise((done) => {
    const child = spawn(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...extra, ...ISOLATION, 'true'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4096)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done({ missing: error.code === 'ENOENT', said: `bubblewrap cannot start: ${error.message}` });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      done(code === 0 ? undefined : { missing: false, said: stderr.trim().split('\n').at(-1) || `exit ${code}` });
    });
  });
}

/**
 * The descriptor a sandbox reads its hidden files' (empty) content from: /dev/null, given to
 * bubblewrap as descriptor 3 (`sandboxStdio`), so that nothing is left on disk.
 */
const EMPTY_FD = 3;

/** The stdio of a process started with `sandboxArgs`: the three given, and /dev/null as descriptor 3. Close the last once spawned. */
export function sandboxStdio<T>(stdio: T[]): (T | number)[] {
  return [...stdio, openSync('/dev/null', 'r')];
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean | undefined {
  try {
    return statSync(path).isDirectory();
  } catch {
    return undefined;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

const under = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/**
 * The bwrap arguments that run `command` under the plan (to be spawned as `bwrap …args`). With
 * `client` — for another process to spawn (an ACP client's terminal) — no descriptor of ours is
 * read (hidden files are /dev/null bound over them) and the environment is `client.env` alone.
 */
export function sandboxArgs(plan: SandboxPlan, command: readonly string[], client?: { env: Record<string, string> }): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  if (client) {
    args.push('--clearenv');
    for (const [name, value] of Object.entries(client.env)) args.push('--setenv', name, value);
  }
  for (const root of PRIVATE_ROOTS) if (existsSync(root)) args.push('--tmpfs', root);
  // What must stay visible under the private roots: the program (its whole top folder: a package
  // reads its dependencies beside it), the workspace and the working directory, what DNS reads.
  const keep = [...plan.programPaths.flatMap(topFolders), ...(plan.workspace ? [plan.workspace] : []), plan.cwd, ...(plan.visible ?? []), ...resolverPaths()];
  for (const path of new Set(keep.filter((path): path is string => Boolean(path) && isAbsolute(path!) && existsSync(path!)).map(real))) {
    if (PRIVATE_ROOTS.some((root) => under(path, root))) args.push('--ro-bind', path, path);
  }
  if (plan.workspace && plan.writesWorkspace) {
    args.push('--bind', real(plan.workspace), real(plan.workspace));
    // What git runs later (its hooks, its config's commands) stays as the user has it.
    for (const path of PERSISTENT_IN_WORKSPACE.map((relative) => join(plan.workspace!, relative))) if (existsSync(path)) args.push('--ro-bind', real(path), real(path));
  }
  for (const path of [...plan.stateDirs, ...plan.stateFiles]) if (existsSync(path)) args.push('--bind', real(path), real(path));
  // Its settings' hooks, its plugins: code the user runs later, outside any sandbox (guardedState.ts moves aside one made in a turn).
  // (A link to nothing binds nothing: the link's target, made in a turn, is moved aside after it.)
  for (const path of guardedNow(plan.guarded ?? [])) if (existsSync(path)) args.push('--ro-bind', real(path), real(path));
  // Credentials last: on top of everything, writable places included.
  for (const path of hiddenPaths(plan)) {
    const directory = isDirectory(path);
    if (directory === undefined) continue;
    if (directory) args.push('--perms', '0000', '--tmpfs', path);
    else if (client) args.push('--ro-bind', '/dev/null', path);
    else args.push('--perms', '0000', '--ro-bind-data', String(EMPTY_FD), path);
  }
  if (plan.network) {
    // Our sockets, where socat inside relays to them; the proxy in the agent's environment.
    args.push('--unshare-net', '--bind', plan.network.socketDir, plan.network.socketDir);
    const proxy = proxyEnvironment(plan.network);
    for (const name of proxy.unset) args.push('--unsetenv', name);
    for (const [name, value] of Object.entries(proxy.set)) args.push('--setenv', name, value);
  }
  args.push(...ISOLATION, ...(client ? CLIENT_ISOLATION : []), '--chdir', plan.cwd, '--', ...(plan.network ? launcherArgs(plan.network, command) : command));
  return args;
}

/**
 * Whether the agent may write `path` in the sandbox: its state (but for what runs code later), the
 * workspace in a task (but for what git runs), what `buckley.agent.sandbox.writable` adds, and
 * the sandbox's own `/tmp` and `/run` outside what is shown there read-only.
 */
export function writableIn(plan: SandboxPlan, path: string): boolean {
  const resolved = resolve(path);
  if (guardedNow(plan.guarded ?? []).some((place) => under(resolved, resolve(place)) || under(real(resolved), real(place)))) return false;
  if ([...plan.stateDirs, ...plan.stateFiles].some((place) => under(resolved, resolve(place)) || under(real(resolved), real(place)))) return true;
  if (plan.workspace && plan.writesWorkspace && under(resolved, resolve(plan.workspace))) return !PERSISTENT_IN_WORKSPACE.some((relative) => under(resolved, join(plan.workspace!, relative)));
  const shown = [...(plan.workspace ? [plan.workspace] : []), plan.cwd, ...(plan.visible ?? []), ...plan.programPaths.flatMap(topFolders)].filter((place): place is string => Boolean(place));
  return PRIVATE_ROOTS.some((root) => under(resolved, root)) && !shown.some((place) => under(resolved, resolve(place)));
}

/**
 * What to hide: the user's and the system's credentials that exist, the workspace's, and — where
 * the network is confined — the machine's Unix sockets the sandbox would show (not those in its
 * private `/tmp` and `/run`, nor our own relays').
 */
export function hiddenPaths(plan: Pick<SandboxPlan, 'home' | 'workspaceCredentials' | 'shown' | 'stateDirs' | 'workspace' | 'sockets' | 'network' | 'cwd' | 'visible' | 'programPaths'>): string[] {
  const places = credentialPlaces(plan.home)
    .map((place) => place.path)
    // `/root` is a credential as someone else's home; as the agent's own (root's) home, its state lives there.
    .filter((path) => !under(real(plan.home), real(path)) && !(plan.workspace && under(real(plan.workspace), real(path))));
  const shown = (plan.shown ?? []).filter((path) => existsSync(path)).map(real);
  const credentials = [...new Set([...places, ...plan.workspaceCredentials].filter((path) => existsSync(path)).map(real))].filter((path) => !shown.some((place) => under(path, place)));
  // A socket in a folder hidden whole (`~/.gnupg`'s agent) is gone with it.
  const folders = credentials.filter((path) => isDirectory(path));
  // The machine's services are the network's: an agent whose network is not confined keeps them.
  const network = plan.network;
  const sockets = (network ? (plan.sockets ?? []) : [])
    .map(real)
    // Gone since it was listed: a mount on it would stop the sandbox from starting.
    .filter((path) => shownIn(plan, path) && !under(path, real(network!.socketDir)) && !folders.some((folder) => under(path, folder)) && isSocket(path));
  return [...new Set([...credentials, ...sockets])];
}

/**
 * What a running agent is given a new sandbox for, when it changes between turns: what the sandbox
 * hides, but for the machine's sockets outside the home and the workspace — they come and go with
 * other programs (another project's, another user's), and are hidden from the next sandbox made —
 * and which file each of its binds of a single file holds. A file replaced on the host (an editor
 * saving `.env` by renaming a new one over it, git rewriting `.git/config`, a service making its
 * socket again) takes that bind away in the sandbox: what it hid is shown, what it kept read-only
 * is the agent's to write (its folder's bind is what remains), its own state file read-only.
 * With the key, those files (what is hidden is looked for once).
 */
export function sandboxCover(plan: CoverPlan): { key: string; files: CoveredFile[] } {
  const hidden = keptHidden(plan);
  const files = coveredFiles(plan, hidden);
  return { key: [...hidden, ...files.map((file) => `${file.path}@${file.id}`)].join('\0'), files };
}

type CoverPlan = Parameters<typeof hiddenPaths>[0] & Pick<SandboxPlan, 'stateFiles' | 'guarded' | 'writesWorkspace'>;

/** A file the sandbox binds alone, what the bind does, and which file it holds (`dev:ino`). */
export interface CoveredFile {
  path: string;
  id: string;
  covers: 'hidden' | 'read-only' | 'state';
}

/** What the sandbox hides, but for the machine's sockets outside the home and the workspace (see sandboxCover). */
function keptHidden(plan: CoverPlan): string[] {
  const sockets = new Set((plan.sockets ?? []).map(real));
  const mine = [plan.home, ...(plan.workspace ? [plan.workspace] : [])].map(real);
  return hiddenPaths(plan).filter((path) => !sockets.has(path) || mine.some((place) => under(path, place)));
}

/** The files (not folders: a folder's bind holds whatever it holds) the sandbox binds alone. */
function coveredFiles(plan: CoverPlan, hidden: readonly string[]): CoveredFile[] {
  const readOnly = [...guardedNow(plan.guarded ?? []), ...(plan.workspace && plan.writesWorkspace ? PERSISTENT_IN_WORKSPACE.map((relative) => join(plan.workspace!, relative)) : [])];
  const binds: (readonly [string, CoveredFile['covers']])[] = [...hidden.map((path) => [path, 'hidden'] as const), ...readOnly.map((path) => [path, 'read-only'] as const), ...plan.stateFiles.map((path) => [path, 'state'] as const)];
  const seen = new Set<string>();
  return binds.flatMap(([path, covers]) => {
    const resolved = real(path);
    const id = fileId(resolved);
    if (id === undefined || seen.has(resolved)) return [];
    seen.add(resolved);
    return [{ path: resolved, id, covers }];
  });
}

/** `dev:ino` of a file that is not a folder, or undefined. */
export function fileId(path: string): string | undefined {
  try {
    const stats = statSync(path);
    return stats.isDirectory() ? undefined : `${stats.dev}:${stats.ino}`;
  } catch {
    return undefined;
  }
}

/** What differs between two sandboxes' keys, by path: what was hidden or bound, and is not, or is another file now. */
export function sandboxChanges(before: string, after: string): string[] {
  const [was, is] = [new Set(before.split('\0')), new Set(after.split('\0'))];
  const changed = [...[...was].filter((entry) => !is.has(entry)), ...[...is].filter((entry) => !was.has(entry))];
  return [...new Set(changed.filter(Boolean).map((entry) => entry.replace(/@\d+:\d+$/, '')))];
}

/** Whether the sandbox shows `path` (resolved): anything outside its private roots, and what it puts back there. */
function shownIn(plan: Pick<SandboxPlan, 'workspace' | 'cwd' | 'visible' | 'programPaths' | 'stateDirs'>, path: string): boolean {
  if (!PRIVATE_ROOTS.some((root) => under(path, root))) return true;
  const shown = [...(plan.workspace ? [plan.workspace] : []), plan.cwd, ...(plan.visible ?? []), ...plan.programPaths.flatMap(topFolders), ...plan.stateDirs];
  return shown.some((place) => under(path, real(place)));
}

/**
 * `/tmp/agents/node_modules/x/bin.js` → `/tmp/agents`: the top folders under a private root that a
 * path goes through, as named and as its links resolve (a link in one, its target in another).
 */
function topFolders(path: string): string[] {
  const tops = [resolve(path), real(path)].flatMap((resolved) => {
    const root = PRIVATE_ROOTS.find((candidate) => under(resolved, candidate) && resolved !== candidate);
    return root ? [join(root, resolved.slice(root.length + 1).split(sep)[0]!)] : [];
  });
  return [...new Set(tops)];
}

/** Where name resolution reads from when /etc/resolv.conf points into /run (systemd-resolved). */
function resolverPaths(): string[] {
  const resolvConf = real('/etc/resolv.conf');
  return resolvConf === '/etc/resolv.conf' ? [] : [dirname(resolvConf)];
}

/** Starts of one process at most, where what its sandbox mounts keeps going away as it is made (see vanishedMount). */
export const SANDBOX_STARTS = 3;

/**
 * The path a bubblewrap that could not make its sandbox names, where nothing is there now: what it
 * was to mount (over) went away between the plan and the mount — another program's socket
 * removed, a file deleted. Its lines read "bwrap: Can't create file at /home/u/x.sock: …", "Can't
 * mkdir parents for …", "Can't find source path …", with paths inside its roots as /newroot/….
 */
export function vanishedMount(output: readonly string[]): string | undefined {
  for (const line of output) {
    const failure = /bwrap: Can't (.*)$/.exec(line)?.[1];
    if (!failure) continue;
    for (const [named] of failure.matchAll(/\/[^:\s]+/g)) {
      const path = named.replace(/^\/(?:newroot|oldroot)(?=\/)/, '');
      if (path !== '/dev/null' && !existsSync(path)) return path;
    }
  }
  return undefined;
}
