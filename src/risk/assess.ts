/**
 * How risky a tool call is, from what it does — never from the name or kind the agent gives it.
 * The call's input is searched, whatever its shape, for what real agents put there (the tool
 * schemas of claude-code-acp, codex-acp, gemini-cli and `buckley acp`): shell commands under any
 * command-like key or as an argv array, paths under any path-like key, in `changes` maps, in
 * patches and in ACP `locations` and diffs, URLs. Then:
 *
 * - a call holding a shell command is at least `high` whatever its kind (commands.ts says when
 *   it is `destructive`);
 * - reads are `low` inside the workspace, `medium` outside it, `high` for credentials;
 * - writes (edits, diffs, patches, write-like parameters) are `medium` inside the workspace and
 *   `destructive` outside it; deletes are `destructive`;
 * - fetching is `medium` (`high` for cloud metadata endpoints); switching the agent's mode `high`;
 * - a kind the rules do not understand is `medium`, and its paths count as writes.
 *
 * Table-tested in test/unit/risk.test.ts with the tool-call shapes of those agents.
 */
import { homedir } from 'node:os';
import { assessCommand } from './commands.js';
import { Findings, maxRisk, RISKS, type Assessment, type Risk } from './findings.js';
import { describePath, resolvePath, type Place } from './paths.js';

export { maxRisk, riskAtMost, RISKS, type Assessment, type Risk } from './findings.js';

export interface ToolCallFacts {
  /** ACP tool kind as the agent gives it: read, edit, delete, move, search, execute, think, fetch, switch_mode, other. */
  kind: string;
  /** The tool's input as the agent sent it (ACP rawInput), or the wire's flat map of strings (nested values as JSON). */
  input: unknown;
  /** Paths from ACP `locations`. */
  locations?: string[];
  /** Paths the call writes, from ACP `diff` content. */
  writes?: string[];
  /** The title the agent gives the call: where some put the command alone (Gemini CLI's shell). */
  title?: string;
}

export interface Where {
  /** Absolute path of the workspace: writes outside it are destructive, reads outside it medium. */
  workspaceRoot?: string;
  /** The user's home, for `~` (default: this process's). */
  home?: string;
}

export function classifyRisk(call: ToolCallFacts, where: Where = {}): Risk {
  return assessRisk(call, where).risk;
}

const READS = new Set(['read', 'search', 'think']);
const WRITES = new Set(['edit', 'move', 'delete']);
const METADATA_HOSTS = /^(169\.254\.169\.254|metadata\.google\.internal|metadata|100\.100\.100\.200|\[?fd00:ec2::254\]?)$/i;

export function assessRisk(call: ToolCallFacts, where: Where = {}): Assessment {
  const input = readInput(call.input);
  const place: Place = { workspaceRoot: where.workspaceRoot, home: where.home ?? homedir(), cwd: input.cwd };
  const findings = new Findings();
  const kind = call.kind || 'other';
  const writes = [...(call.writes ?? []), ...input.writes];
  const known = READS.has(kind) || WRITES.has(kind) || kind === 'execute' || kind === 'fetch' || kind === 'switch_mode';

  const commands = commandsIn(call, input);
  for (const command of commands) findings.merge(assessCommand(command, place));
  if (kind === 'execute' && commands.length === 0) findings.add('high', 'runs a command');
  if (kind === 'delete' || input.deletes.length > 0) findings.add('destructive', `deletes ${[...input.deletes].join(', ') || 'files'}`);
  if (kind === 'fetch' || input.urls.length > 0) findings.add('medium', 'fetches from the network');
  for (const url of input.urls) {
    const host = hostOf(url);
    if (host && METADATA_HOSTS.test(host)) findings.add('high', `fetches ${url} (cloud credentials)`);
  }
  if (kind === 'switch_mode') findings.add('high', "changes the agent's permission mode");
  if (!known) findings.add('medium', `a tool of a kind the rules do not know (${kind})`);

  // What the call writes: writes of its own, or every path of a call that edits or may edit.
  // New content next to a path is a write, whatever the kind says (a to-do list's `content` is not).
  const carriesContent = input.writeKeys.length > 0 && (input.paths.length > 0 || (call.locations?.length ?? 0) > 0);
  const writing = WRITES.has(kind) || !known || writes.length > 0 || carriesContent;
  if ((carriesContent || writes.length > 0) && READS.has(kind)) findings.add('medium', `writes files although it says it ${kind}s (${input.writeKeys.join(', ') || 'diff'})`);
  if (WRITES.has(kind) || writes.length > 0) findings.add('medium', 'edits files');

  const paths = new Map<string, boolean>(); // path → written
  for (const path of [...input.paths, ...(call.locations ?? [])]) paths.set(path, paths.get(path) || writing);
  for (const path of writes) paths.set(path, true);
  findings.opaque = opacity(kind, known, commands.length, paths.size + input.urls.length + input.deletes.length);
  // What it reads or changes is not said: the worst it could be, short of what a command could do.
  if (findings.opaque && WRITES.has(kind)) findings.add('high', `changes files it does not name`);
  else if (findings.opaque && READS.has(kind) && kind !== 'think') findings.add('medium', `${kind === 'search' ? 'searches' : 'reads'} files it does not name`);
  for (const [written, isWrite] of paths) {
    const facts = describePath(written, place);
    const verb = isWrite ? 'writes' : 'reads';
    if (!facts.resolved) findings.add(isWrite ? 'destructive' : 'medium', `${verb} ${written}, a place only known when it runs`);
    else if (!facts.inside) findings.add(isWrite ? 'destructive' : 'medium', `${verb} ${written} outside the workspace`);
    if (facts.credential) findings.add(isWrite && !facts.inside ? 'destructive' : 'high', `${verb} ${written} (${facts.credential})`);
    if (facts.persistent && isWrite) findings.add(facts.inside ? 'high' : 'destructive', `writes ${written}: ${facts.persistent}`);
  }
  return findings.result();
}

/**
 * Why the rules cannot see what a call does, when they cannot: a command with no command line, a
 * read or change of no path, a tool of a kind they do not know that names nothing. Such a call is
 * never approved without asking above `low` (approvals.ts), whatever the auto-approval level.
 */
function opacity(kind: string, known: boolean, commands: number, targets: number): string | undefined {
  if (kind === 'execute' && commands === 0) return 'it runs a command it does not show';
  if ((READS.has(kind) && kind !== 'think') || WRITES.has(kind)) return targets === 0 ? `it names no file it ${kind === 'search' ? 'searches' : `${kind}s`}` : undefined;
  if (!known && commands === 0 && targets === 0) return `it is a tool of a kind the rules do not know (${kind}) and names nothing it touches`;
  return undefined;
}

/** The shell commands a call holds (in its input under any key, or its title for a command kind). */
export function commandsOf(call: ToolCallFacts): (string | string[])[] {
  return commandsIn(call, readInput(call.input));
}

/** A command found nowhere in the input may be the title: Gemini CLI sends its shell's so, alone. */
function commandsIn(call: ToolCallFacts, input: InputFacts): (string | string[])[] {
  return input.commands.length === 0 && call.kind === 'execute' && call.title?.trim() ? [call.title.trim()] : input.commands;
}

/** The paths a call names (its input, locations, diffs, patches), resolved where they can be: what an approval of it covers. */
export function pathsOf(call: ToolCallFacts, where: Where = {}): string[] {
  const input = readInput(call.input);
  const place: Place = { workspaceRoot: where.workspaceRoot, home: where.home ?? homedir(), cwd: input.cwd };
  const named = [...input.paths, ...input.writes, ...input.deletes, ...(call.locations ?? []), ...(call.writes ?? [])];
  return [...new Set(named.flatMap((path) => resolvePath(path, place) ?? []))];
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

interface InputFacts {
  commands: (string | string[])[];
  paths: string[];
  /** Paths written by patches and change maps. */
  writes: string[];
  deletes: string[];
  urls: string[];
  /** Keys that carry new file content (`content`, `new_string`, …). */
  writeKeys: string[];
  /** The directory the tool works in (`cwd`, `directory`, `workdir`). */
  cwd?: string;
}

/** Keys are compared lower-case without `_` and `-`: `file_path`, `filePath` and `FILE-PATH` are one key. */
const normal = (key: string) => key.toLowerCase().replace(/[-_]/g, '');
const COMMAND_KEYS = new Set(['command', 'commands', 'cmd', 'cmdline', 'commandline', 'script', 'shell', 'shellcommand', 'bash', 'sh', 'argv', 'exec', 'runcommand', 'terminalcommand']);
const PATH_KEYS = new Set(['path', 'paths', 'file', 'files', 'filename', 'filenames', 'target', 'targets', 'destination', 'dest', 'source', 'src', 'from', 'to', 'uri', 'cwd', 'dir', 'directory', 'folder', 'workdir', 'workingdirectory', 'root', 'location', 'locations', 'movepath', 'grantroot']);
const PATH_SUFFIXES = ['path', 'paths', 'file', 'files', 'dir', 'directory', 'folder'];
const NOT_PATHS = ['content', 'text', 'pattern', 'glob', 'regex', 'query', 'description', 'prompt'];
const URL_KEYS = new Set(['url', 'urls', 'uri', 'href', 'link', 'endpoint']);
const CWD_KEYS = new Set(['cwd', 'workdir', 'workingdirectory', 'directory']);
const WRITE_KEYS = new Set(['content', 'contents', 'newstring', 'newstr', 'newtext', 'filetext', 'newsource', 'patch', 'diff', 'edits', 'replacement', 'inserttext', 'append', 'changes']);
/** Maps whose keys are the paths they change (codex-acp's patch approvals). */
const PATH_MAPS = new Set(['changes', 'filechanges']);

const MAX_NODES = 2_000;
const MAX_JSON_CHARS = 256 * 1024;

function isPathKey(key: string): boolean {
  if (NOT_PATHS.some((word) => key.includes(word))) return false;
  return PATH_KEYS.has(key) || PATH_SUFFIXES.some((suffix) => key.endsWith(suffix));
}

function readInput(input: unknown): InputFacts {
  const facts: InputFacts = { commands: [], paths: [], writes: [], deletes: [], urls: [], writeKeys: [] };
  let nodes = 0;
  const visit = (value: unknown, key: string, depth: number): void => {
    if (++nodes > MAX_NODES || depth > 8 || value === null || value === undefined) return;
    if (typeof value === 'string') return visitString(value, key, depth);
    if (Array.isArray(value)) {
      // Strings under a command key: one argv (["rm", "-rf", "x"]), or command lines each
      // (Cline's {"commands": ["ls", "rm -rf x"]}: a plural key, or a program name with a space).
      const lines = key === 'commands' || (typeof value[0] === 'string' && /\s/.test(value[0].trim()));
      if (COMMAND_KEYS.has(key) && !lines && value.length > 0 && value.every((item) => typeof item === 'string')) facts.commands.push(value as string[]);
      else for (const item of value) visit(item, COMMAND_KEYS.has(key) ? 'command' : key, depth + 1);
      return;
    }
    if (typeof value !== 'object') return;
    const entries = Object.entries(value as Record<string, unknown>);
    if (PATH_MAPS.has(key)) {
      for (const [path, change] of entries) {
        // {"delete": {…}} (codex-acp), {"type": "delete"}: the change's tag, never its text.
        const tag = typeof change === 'object' && change !== null ? [...Object.keys(change), (change as { type?: unknown }).type, (change as { kind?: unknown }).kind].join(' ') : String(change);
        (/\bdelete\b/.test(tag) ? facts.deletes : facts.writes).push(path);
        visit(change, 'change', depth + 1);
      }
      return;
    }
    const args = entries.find(([name]) => normal(name) === 'args')?.[1];
    for (const [name, item] of entries) {
      const normalized = normal(name);
      if (COMMAND_KEYS.has(normalized) && typeof item === 'string' && Array.isArray(args)) {
        facts.commands.push([item, ...args.map(String)]);
        continue;
      }
      visit(item, normalized, depth + 1);
    }
  };
  const visitString = (value: string, key: string, depth: number): void => {
    const text = value.trim();
    if (!text) return;
    // The wire carries nested values as JSON text: read them as the values they were.
    if (/^[[{]/.test(text) && text.length <= MAX_JSON_CHARS) {
      try {
        return visit(JSON.parse(text), key, depth + 1);
      } catch {
        // not JSON: a string like any other
      }
    }
    if (WRITE_KEYS.has(key)) facts.writeKeys.push(key);
    if (COMMAND_KEYS.has(key)) facts.commands.push(value);
    else if (URL_KEYS.has(key) && /^[a-z][a-z0-9+.-]*:\/\//i.test(text) && !/^file:/i.test(text)) facts.urls.push(text);
    else if (/^file:\/\//i.test(text)) facts.paths.push(text);
    else if (isPathKey(key) && !/\n/.test(text) && text.length < 4096) facts.paths.push(text);
    if (CWD_KEYS.has(key) && !/\n/.test(text)) facts.cwd = text;
    if (/^\*\*\* Begin Patch|^diff --git |^--- \S/m.test(value)) readPatch(value, facts);
  };
  visit(input, '', 0);
  return facts;
}

/** Paths a patch changes: `*** Update File: x` (apply_patch), `+++ b/x` (unified diff). */
function readPatch(patch: string, facts: InputFacts): void {
  for (const match of patch.matchAll(/^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$|^\+\+\+ (?:b\/)?(.+)$|^--- (?:a\/)?(.+)$/gm)) {
    const path = (match[2] ?? match[3] ?? match[4] ?? match[5])!.trim();
    if (path === '/dev/null') continue;
    (match[1] === 'Delete' ? facts.deletes : facts.writes).push(path);
  }
}

/** The highest of the risks given (for the bridge, which also has the coordinator's word). */
export function highestRisk(...risks: (Risk | undefined)[]): Risk {
  return risks.reduce<Risk>((highest, risk) => (risk && RISKS.includes(risk) ? maxRisk(highest, risk) : highest), 'low');
}
