/**
 * An agent the sandbox kept from writing, in our words. An agent that dies at start, or fails a
 * request, because a place it writes its state is read-only says so in its own words ("EROFS:
 * read-only file system, open '/home/u/.gemini/projects.json'", Go's "open log file: read-only
 * file system", Node's recursive mkdir's ENOENT): the user is told which path, that the sandbox
 * keeps it read-only, and the setting that allows it. Judged by the path — one the agent's output
 * names in a failure, outside what its sandbox lets it write — not by the error's code alone.
 * Likewise a read refused of what the sandbox hides (`~/.config/gh` for its `gh` commands): which
 * path, that the sandbox hides it, and the setting that shows it.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Logger } from '../../logger.js';
import { oneLine } from '../../text.js';
import { AgentError } from './driver.js';
import { guardedNow } from './guardedState.js';
import { hiddenPaths, writableIn, type SandboxPlan } from './sandbox.js';

export interface DeniedWrite {
  /** The path the agent could not write. */
  path: string;
  /** The folder to make writable for it. */
  folder: string;
}

/**
 * A failure to write: a read-only file system (what every write outside the writable places
 * meets), or a refusal of a call that only writes — Node's recursive mkdir on a read-only file
 * system says ENOENT. A refused open is left alone: it is how a hidden credential's read fails.
 */
const WRITE_FAILURE = /EROFS|read-only file system|(?:ENOENT|EACCES|EPERM|permission denied|operation not permitted)[^\n]*\b(?:mkdir|mkdtemp|rename|symlink|copyfile|appendfile|utime|unlink|rmdir)\b|\b(?:mkdir|mkdtemp)\b[^\n]*(?:ENOENT|EACCES|EPERM)/i;

/** Absolute paths (and `~/…`) in a line: quoted, or bare up to a space, quote or bracket. */
const PATHS = /(?:^|[\s'"`(=:,[])((?:~|\/)[^\s'"`()<>,;[\]]*[^\s'"`()<>,;[\].:])/g;

/** The first path a failure to write names that the sandbox keeps read-only; undefined where there is none. */
export function deniedWrite(lines: readonly string[], plan: SandboxPlan): DeniedWrite | undefined {
  const hidden = hiddenPaths(plan);
  for (const line of lines) {
    // bwrap's own words ("bwrap: Can't create file at …") are the sandbox's making failing, not a write of the agent's.
    if (!WRITE_FAILURE.test(line) || line.includes('bwrap: ')) continue;
    for (const match of line.matchAll(PATHS)) {
      const path = match[1]!.startsWith('~') ? join(plan.home, match[1]!.slice(1)) : match[1]!;
      if (path === '/' || path.startsWith('/dev/') || path.startsWith('/proc/')) continue;
      if (writableIn(plan, path) || hidden.some((secret) => path === secret || path.startsWith(`${secret}${sep}`))) continue;
      // What runs code later is allowed by its own name, not its folder's (sandboxPlans.ts guardedPlaces).
      const guarded = guardedNow(plan.guarded ?? []).find((place) => path === place || path.startsWith(`${place}${sep}`));
      return { path, folder: guarded ?? folderFor(path, plan.home) };
    }
  }
  return undefined;
}

/** A read refused: how a hidden credential's read fails (its cover is an unreadable file or folder). */
const READ_FAILURE = /EACCES|permission denied/i;

/** The first path a refused read names under what the sandbox hides, and the place hiding it; undefined where there is none. */
export function hiddenRead(lines: readonly string[], plan: SandboxPlan): { path: string; place: string } | undefined {
  const hidden = hiddenPaths(plan);
  for (const line of lines) {
    if (!READ_FAILURE.test(line)) continue;
    for (const match of line.matchAll(PATHS)) {
      const path = match[1]!.startsWith('~') ? join(plan.home, match[1]!.slice(1)) : match[1]!;
      const place = hidden.find((secret) => path === secret || path.startsWith(`${secret}${sep}`));
      if (place) return { path, place };
    }
  }
  return undefined;
}

/** The home's shared folders, whose subfolders are each an application's (XDG's defaults). */
const SHARED_IN_HOME = ['.config', '.cache', join('.local', 'share'), join('.local', 'state')];

/**
 * The folder to allow for a path: the application's folder of the home it is in (`~/.qwen` for
 * `~/.qwen/extensions`, `~/.cache/copilot` for `~/.cache/copilot/pkg`), else the path itself if
 * it is a folder, else its folder.
 */
function folderFor(path: string, home: string): string {
  const inHome = relative(home, path);
  if (inHome && !inHome.startsWith('..') && !inHome.startsWith(sep)) {
    const shared = SHARED_IN_HOME.find((folder) => inHome.startsWith(`${folder}${sep}`));
    return join(home, shared ?? '', (shared ? inHome.slice(shared.length + 1) : inHome).split(sep)[0]!);
  }
  try {
    if (existsSync(path) && statSync(path).isDirectory()) return path;
  } catch {
    // as a file
  }
  return dirname(path);
}

/** `/home/u/.qwen` → `~/.qwen` (as the setting may say it). */
export function tildePath(path: string, home: string): string {
  const inHome = relative(home, path);
  return inHome && !inHome.startsWith('..') && !inHome.startsWith(sep) ? `~/${inHome}` : path;
}

/** One line: which path, that the sandbox keeps it read-only, and the setting that allows it. */
export function deniedWriteLine(agent: string, denied: DeniedWrite, home: string): string {
  const folder = tildePath(denied.folder, home);
  return `${agent} could not write ${tildePath(denied.path, home)}: buckley-lsp's sandbox keeps ${folder} read-only for it. To let it write there, set buckley.agent.sandbox.writable: ["${folder}"]`;
}

/**
 * `error` as the user is told it: where it names a place the sandbox kept the agent from writing
 * (in its message, or the agent's last output), that place, in one line with the setting, and the
 * agent's own words in the log; any other error as it is.
 */
export function inSandboxWords(error: unknown, plan: SandboxPlan | undefined, agent: string, stderr: readonly string[], logger: Logger): unknown {
  if (!plan) return error;
  const message = error instanceof Error ? error.message : String(error);
  const output = [...(error instanceof AgentError ? error.output : []), ...stderr];
  const denied = deniedWrite([message, ...output], plan);
  const hidden = denied ? undefined : hiddenRead([message, ...output], plan);
  if (!denied && !hidden) return error;
  const ownWords = `its own words: ${oneLine(message, 2_000)}${output.length ? ` — its last output: ${oneLine(output.slice(-10).join(' | '), 4_000)}` : ''}`;
  logger.warn(`${agent} could not ${denied ? `write ${denied.path}` : `read ${hidden!.path}`} in its sandbox; ${ownWords}`);
  return new AgentError(denied ? deniedWriteLine(agent, denied, plan.home) : hiddenReadLine(agent, hidden!, plan.home), output);
}

/** One line: which path, that the sandbox hides it, and the setting that shows it. */
function hiddenReadLine(agent: string, hidden: { path: string; place: string }, home: string): string {
  const place = tildePath(hidden.place, home);
  return `${agent} could not read ${tildePath(hidden.path, home)}: buckley-lsp's sandbox hides ${place} from it, as it hides every credential. To give it that to read, set buckley.agent.sandbox.show: ["${place}"]`;
}
