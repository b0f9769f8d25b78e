/**
 * What the sandbox of an agent holds, from what is known of the agent (known.ts) and the user's
 * settings: its environment (without the user's secrets: secrets.ts), the places it writes its
 * state (made first, so they can be bound), the home and XDG folders kept visible under `/tmp`
 * and `/run`, and the hosts its network may reach (egress.ts).
 */
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { OUR_ENVIRONMENT, type McpServerSetting } from '../../config.js';
import type { Logger } from '../../logger.js';
import { stateDirectory } from '../../state.js';
import type { GuardedKeys } from './guardedState.js';
import { endpointOf, ruleOf, type EgressRule } from './egress.js';
import { PROVIDER_HOSTS, type KnownAgent } from './known.js';
import { looksSecret, nameMatcher, withoutSecrets, type AgentEnvironment } from './secrets.js';
import { namedVariables, serverUrls, settingsOf, type SettingsText } from './agentSettings.js';

/** Variables of the server's environment that are not the agent's business. */
const NOT_PASSED = ['IS_SANDBOX'];

export interface EnvironmentSettings {
  /** buckley.agent.env: given to the agent as it is. */
  env?: Record<string, string>;
  /** buckley.agent.passEnv: secret-looking variables passed on all the same. */
  passEnv?: readonly string[];
}

/**
 * The agent's environment: the server's, without the variables buckley-lsp reads (they are ours:
 * `buckley acp` takes a BUCKLEY_AGENT of its own for its profile), IS_SANDBOX, and the secrets —
 * but for the agent's own key variables, those its own settings name (agentSettings.ts) and
 * `passEnv`; its defaults under, `buckley.agent.env` over.
 */
export function agentEnvironmentFor(serverEnv: NodeJS.ProcessEnv, settings: EnvironmentSettings, known: KnownAgent | undefined, agentSettings: readonly SettingsText[] = settingsOf(known, serverEnv)): AgentEnvironment {
  const base: NodeJS.ProcessEnv = { ...serverEnv };
  // A machine's claim to be a sandbox is not the agent's sandbox: IS_SANDBOX makes Claude Code
  // offer "bypass permissions" even to root. The user can still give it (buckley.agent.env).
  for (const name of [...OUR_ENVIRONMENT, ...NOT_PASSED]) delete base[name];
  const clouds = known?.cloudLogins?.({ ...base, ...settings.env }) ?? [];
  const passed = nameMatcher([...(known?.keys ?? []), ...clouds.flatMap((cloud) => cloud.keys), ...(settings.passEnv ?? [])]);
  // What its own settings name (an MCP server's token, a provider's key): it needs them as much.
  const named = namedVariables(agentSettings).filter(({ name }) => base[name] !== undefined && !passed(name) && looksSecret(name, base[name]));
  const byName = new Set(named.map(({ name }) => name));
  const { env, withheld } = withoutSecrets(base, (name) => passed(name) || byName.has(name), settings.env ?? {});
  return { env: { ...known?.defaultEnv, ...env }, withheld, ...(named.length ? { named: named.filter(({ name }) => !settings.env?.[name]) } : {}) };
}

/** `~/x` → `/home/u/x`; a relative path against the working directory. */
export function expandHome(path: string, env: NodeJS.ProcessEnv): string {
  return resolve(path.replace(/^~(?=\/|$)/, env.HOME || homedir()));
}

/**
 * The places the agent writes its state, made where they are missing (a folder, or a file with
 * what a new one holds): a bind needs something there. Those the sandbox then makes writable.
 */
export function statePlaces(known: KnownAgent | undefined, env: NodeJS.ProcessEnv, command: readonly string[], writable: readonly string[], logger: Logger): { stateDirs: string[]; stateFiles: string[] } {
  // A cloud login's token cache is written where it is (an SSO token refreshed), never made.
  const caches = (known?.cloudLogins?.(env) ?? []).flatMap((cloud) => cloud.writable).filter((path) => existsSync(path));
  const stateDirs = [...(known?.stateDirs(env) ?? []), ...caches, ...writable.map((path) => expandHome(path, env))];
  const files = (known?.stateFiles?.(env, command) ?? []).map((file) => ({ ...file, path: expandHome(file.path, env) }));
  for (const path of stateDirs) {
    // A `writable` entry that is not there yet is a folder to be; one that is (a file too) is bound as it is.
    if (existsSync(path)) continue;
    try {
      mkdirSync(path, { recursive: true });
    } catch (error) {
      logger.warn(`cannot make ${path} for the agent's state: ${(error as Error).message}`);
    }
  }
  for (const file of files) {
    try {
      if (!existsSync(file.path)) {
        mkdirSync(resolve(file.path, '..'), { recursive: true });
        writeFileSync(file.path, file.initial, { mode: 0o600, flag: 'wx' });
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') logger.warn(`cannot make ${file.path} for the agent's state: ${(error as Error).message}`);
    }
  }
  return { stateDirs, stateFiles: files.map((file) => file.path).filter((path) => existsSync(path)) };
}

/**
 * Where a write runs code later: in the agent's state (known.ts `runsCode`), and the user's own
 * startup files where a task's `workspace` or `writable` holds them — but for what the user's
 * `buckley.agent.sandbox.writable` names itself (`~/.gemini/extensions`, or a folder in it): the
 * agent's whole state folder, or the home, named there does not open these.
 */
export function guardedPlaces(known: KnownAgent | undefined, env: NodeJS.ProcessEnv, writable: readonly string[], workspace?: string): string[] {
  const allowed = writable.map((path) => expandHome(path, env));
  // The user's own only where the agent could write them: watched elsewhere, one the user makes meanwhile would be moved aside.
  const roots = [...allowed, ...(workspace ? [workspace] : [])].map(realOrResolved);
  const startup = userStartupPlaces(env).filter((place) => roots.some((root) => within(realOrResolved(dirname(place)) + '/' + basename(place), root)));
  const project = workspace ? PROJECT_STARTUP.map((name) => join(workspace, name)) : [];
  return [...(known?.runsCode?.(env) ?? []), ...startup, ...project].filter((guarded) => {
    const path = guarded.replace(/\/\*$/, '');
    return !allowed.some((place) => place === path || place.startsWith(`${path}/`));
  });
}

/**
 * In a task's workspace: the project's settings that the user's editor applies when it opens the
 * folder (Zed as soon as they change) — the language servers and tasks they name, and
 * buckley-lsp's own settings, which say what an agent may do unasked. (Its git hooks and config
 * are read-only in the sandbox as well: sandbox.ts.) What risk/paths.ts judges a write of.
 */
const PROJECT_STARTUP = ['.zed', '.helix', '.vscode/settings.json', '.vscode/tasks.json', '.nvim.lua', '.nvimrc', '.exrc', '.dir-locals.el', '.dir-locals-2.el'];

/** In the home: what the user's shells, login, desktop, git and editors run, and the folders on their PATH. */
const STARTUP_IN_HOME = [
  '.profile', '.bash_profile', '.bash_login', '.bashrc', '.bash_logout', '.bash_aliases', '.zshenv', '.zprofile', '.zshrc', '.zlogin', '.zlogout',
  '.xprofile', '.xinitrc', '.xsession', '.xsessionrc', '.pam_environment', '.gitconfig', '.vimrc', '.vim', '.emacs', '.emacs.el', '.emacs.d', 'bin', '.local/bin',
];
/**
 * In the XDG config folder: the same for fish, the desktop's autostart, systemd's user units, git,
 * Neovim, Emacs — and buckley-lsp's own settings, which say what an agent may do.
 */
const STARTUP_IN_CONFIG = ['fish', 'autostart', 'systemd', 'environment.d', 'git', 'nvim', 'emacs', 'buckley-lsp'];

/**
 * What runs code later for the user, whatever the agent, and what buckley-lsp keeps to decide what
 * agents may do (its state folder: the trust you gave, the guard's journal) — guarded as an agent's
 * own settings are. It matters where a task may write the home (its workspace is the home or holds
 * it, or `writable` names a folder that does): ~/.bashrc written there would run outside any sandbox.
 */
function userStartupPlaces(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const config = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : `${home}/.config`;
  return [...STARTUP_IN_HOME.map((name) => `${home}/${name}`), ...STARTUP_IN_CONFIG.map((name) => `${config}/${name}`), stateDirectory(env)];
}

const within = (path: string, root: string) => path === root || path.startsWith(root === '/' ? '/' : `${root}/`);

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The system's folders at the top of the file system (a project at the top, `/app`, `/workspace`, is not one). */
const SYSTEM_FOLDERS = new Set(['/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt', '/proc', '/root', '/run', '/sbin', '/snap', '/srv', '/sys', '/tmp', '/usr', '/var']);

/**
 * Why a task may not write its workspace, where it holds the system: `/`, one of the system's
 * folders (`/usr`, `/etc`, `/home`), or a folder holding the user's home — but the home itself.
 */
export function holdsTheSystem(workspace: string, env: NodeJS.ProcessEnv): string | undefined {
  const [path, home] = [workspace, env.HOME || homedir()].map(realOrResolved) as [string, string];
  if (path === home) return undefined;
  if (path === '/') return 'it is the whole file system';
  if (home.startsWith(`${path}/`)) return `it holds your home (${home}) and what is beside it`;
  if (SYSTEM_FOLDERS.has(path)) return `${path} is one of the system's folders`;
  return undefined;
}

/** The keys of its state files that run code later (known.ts `runsCodeIn`), but for a file `writable` names itself. */
export function guardedKeys(known: KnownAgent | undefined, env: NodeJS.ProcessEnv, writable: readonly string[]): GuardedKeys[] {
  const allowed = new Set(writable.map((path) => expandHome(path, env)));
  return (known?.runsCodeIn?.(env) ?? []).filter((guard) => !allowed.has(guard.file));
}

const PRIVATE_ROOTS = ['/tmp', '/run'];

/** The home and XDG folders that live under `/tmp` or `/run`, which the sandbox replaces: shown again, read-only. */
export function visibleFolders(env: NodeJS.ProcessEnv): string[] {
  const folders = [env.HOME || homedir(), env.XDG_CONFIG_HOME, env.XDG_DATA_HOME, env.XDG_STATE_HOME, env.XDG_CACHE_HOME];
  return folders.filter((folder): folder is string => Boolean(folder) && isAbsolute(folder!) && PRIVATE_ROOTS.some((root) => folder!.startsWith(`${root}/`)) && existsSync(folder!));
}

export interface EgressSettings {
  /** buckley.agent.sandbox.network.allow: for asks and tasks. */
  allow: readonly string[];
  /** buckley.agent.sandbox.network.allowInTasks: more, for a task's sandbox (its commands). */
  allowInTasks: readonly string[];
}

/**
 * The hosts an agent's network reaches: its model's API and login (its known hosts; those of the
 * providers whose key it has), the endpoints its configuration names (its variables, its settings
 * files, every URL `buckley.agent.env` gives it), its MCP servers (ours to give it, and the remote
 * ones its own settings configure), our editor MCP server, and the
 * user's additions — for a task, its own too.
 */
export function egressRules(options: {
  known: KnownAgent | undefined;
  env: NodeJS.ProcessEnv;
  given: Record<string, string> | undefined;
  mcpServers: Record<string, McpServerSetting> | undefined;
  editorMcp: string | undefined;
  settings: EgressSettings;
  task: boolean;
  /** The agent's own settings (agentSettings.ts), as they stood before the turns under way. */
  agentSettings?: readonly SettingsText[];
}): EgressRule[] {
  const { known, env } = options;
  const clouds = known?.cloudLogins?.(env) ?? [];
  const hosts = [...(known?.hosts ?? []), ...clouds.flatMap((cloud) => cloud.hosts), ...Object.keys(PROVIDER_HOSTS).flatMap((key) => (env[key] ? PROVIDER_HOSTS[key]! : []))];
  const urls = [
    ...(known?.endpoints?.(env) ?? []),
    // The remote MCP servers its own settings configure.
    ...serverUrls(options.agentSettings ?? settingsOf(known, env)),
    ...Object.values(options.given ?? {}).filter((value) => /^(https?|wss?):\/\//i.test(value.trim())),
    ...Object.values(options.mcpServers ?? {}).flatMap((server) => ('url' in server ? [server.url] : Object.values(server.env).filter((value) => /^https?:\/\//i.test(value.trim())))),
    ...(options.editorMcp ? [options.editorMcp] : []),
  ];
  const endpoints = urls.flatMap((url) => {
    const endpoint = endpointOf(url);
    return endpoint ? [`${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`] : [];
  });
  const entries = [...hosts, ...endpoints, ...options.settings.allow, ...(options.task ? options.settings.allowInTasks : [])];
  return entries.flatMap((entry) => {
    const rule = ruleOf(entry);
    return rule ? [rule] : [];
  });
}
