/**
 * Which known agent (known.ts) a command runs, however it is started: by its program's name
 * (`claude-agent-acp`, `gemini --acp`), as a package run by npx, bunx, `pnpm dlx` or `yarn dlx`
 * (`npx -y @zed-industries/codex-acp@0.16.0`), or as a file inside its installed package (`node
 * …/node_modules/@google/gemini-cli/bundle/gemini.js --acp`). Behind a wrapper script, the script
 * says it where it runs the agent (`exec opencode acp "$@"`): it is read before the agent starts,
 * since some agents die at once without their state. Behind anything else (a compiled launcher),
 * the agent's ACP `agentInfo` says it after `initialize` (pool.ts then starts it again in the
 * sandbox it needs).
 */
import { openSync, readSync, closeSync } from 'node:fs';
import { basename } from 'node:path';
import { KNOWN_AGENTS, type KnownAgent } from './known.js';

/** Programs that run a package named after them. */
const PACKAGE_RUNNERS: readonly (readonly string[])[] = [['npx'], ['bunx'], ['pnpx'], ['pnpm', 'dlx'], ['yarn', 'dlx'], ['npm', 'exec'], ['bun', 'x']];

/** `@scope/name@1.2.3` → `@scope/name`; `name@latest` → `name`. */
function packageName(spec: string): string {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at > 0 ? spec.slice(0, at) : spec;
}

/** The package a package runner in `command` runs (the first word after it that is not a flag), if any. */
function packageRun(command: readonly string[]): string | undefined {
  for (let index = 0; index < command.length; index++) {
    const runner = PACKAGE_RUNNERS.find((words) => words.every((word, offset) => basename(command[index + offset] ?? '') === word || (offset > 0 && command[index + offset] === word)));
    if (!runner) continue;
    let at = index + runner.length;
    // `npx -y pkg`, `npx --package=pkg bin`, `npm exec --yes -- pkg`
    for (; at < command.length; at++) {
      const word = command[at]!;
      if (word.startsWith('--package=')) return packageName(word.slice('--package='.length));
      if ((word === '--package' || word === '-p') && command[at + 1]) return packageName(command[at + 1]!);
      if (word === '--' || word.startsWith('-')) continue;
      return packageName(word);
    }
  }
  return undefined;
}

/** `gemini.js` → `gemini`: a program's name without a script's or Windows' extension. */
function programName(word: string): string {
  return basename(word).replace(/\.(m?js|cjs|exe)$/, '');
}

/** The known agent a command runs; undefined where nothing in it says which. */
export function knownByCommand(command: readonly string[]): KnownAgent | undefined {
  const runs = packageRun(command);
  if (runs) {
    const byPackage = KNOWN_AGENTS.find((agent) => agent.packages.includes(runs));
    if (byPackage) return byPackage;
  }
  // A file inside an installed package: `…/node_modules/@google/gemini-cli/…`.
  const inPackage = KNOWN_AGENTS.find((agent) => agent.packages.some((name) => command.some((word) => word.includes(`/node_modules/${name}/`))));
  if (inPackage) return inPackage;
  const program = programOf(command);
  return program === undefined ? undefined : KNOWN_AGENTS.find((agent) => agent.bins.test(programName(program)));
}

/**
 * The word of the command that is the program: the first that is not an interpreter, its flag or
 * an `env` assignment (`node --no-warnings /x/gemini.js --acp` → `/x/gemini.js`). The agent's own
 * arguments (a folder that happens to be called `codex`) say nothing.
 */
function programOf(command: readonly string[]): string | undefined {
  return command.find((word) => !INTERPRETERS.has(basename(word)) && !word.startsWith('-') && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word));
}

/** The known agent an ACP `agentInfo.name` names. */
export function knownByAcpName(name: string | undefined): KnownAgent | undefined {
  return name ? KNOWN_AGENTS.find((agent) => agent.acpNames.test(name)) : undefined;
}

/** The most of a wrapper script that is read: wrappers are a few lines. */
const SCRIPT_BYTES = 16 * 1024;

/**
 * The known agent a wrapper script runs: a text file starting with `#!` whose lines run one
 * (`exec /usr/bin/opencode acp "$@"`, `npx -y @google/gemini-cli --acp`); undefined for anything else.
 */
export function knownByScript(path: string | undefined): KnownAgent | undefined {
  for (const words of scriptLines(path)) {
    const known = words.length ? knownByCommand(words) : undefined;
    if (known) return known;
  }
  return undefined;
}

/** The absolute paths a wrapper script's lines name (`exec node /tmp/x/agent.js "$@"`): what it runs needs them. */
export function pathsInScript(path: string | undefined): string[] {
  return scriptLines(path).flatMap((words) => words.filter((word) => word.startsWith('/')));
}

/** A wrapper script's lines as words (comments left out); none for anything but a text file starting with `#!`. */
function scriptLines(path: string | undefined): string[][] {
  if (!path) return [];
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(SCRIPT_BYTES);
      text = buffer.subarray(0, readSync(fd, buffer, 0, SCRIPT_BYTES, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return [];
  }
  if (!text.startsWith('#!') || text.includes('\0')) return [];
  return text
    .split('\n')
    .slice(1)
    .map((line) => [...line.replace(/#.*$/, '').matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]!));
}

/** Words before the program: interpreters, and what runs a program as it is (`exec`, `nohup`). */
const INTERPRETERS = new Set(['node', 'nodejs', 'npx', 'bun', 'bunx', 'pnpx', 'deno', 'python', 'python3', 'uvx', 'sh', 'bash', 'env', 'exec', 'nohup', 'command']);

/** `node /x/agent.js` → `agent.js`; `/usr/bin/gemini --acp` → `gemini`. */
export function shortCommandName(command: string[]): string {
  const words = command.map((word) => basename(word));
  const program = words.find((word) => !INTERPRETERS.has(word) && !word.startsWith('-'));
  return program ?? words[0] ?? 'agent';
}
