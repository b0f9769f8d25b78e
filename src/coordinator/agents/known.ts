/**
 * What buckley-lsp knows of the ACP agents people run, by name: where each keeps its own state
 * (writable in the sandbox, so it can run at all), the modes an ask and a task run in, and which
 * environment variable holds its key (to say which one to set when the model's API says 401).
 * An agent is recognised before it starts by its command (`claude-agent-acp`, `npx
 * @zed-industries/codex-acp`, `gemini --acp`) and after `initialize` by its ACP `agentInfo`.
 * Every other agent gets the general rules: modes by what they are called (modes.ts), no state
 * directory but `buckley.agent.sandbox.writable`.
 */
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

export interface KnownAgent {
  /** As people call it. */
  title: string;
  /** Words of its command (or package names) that say it is this agent. */
  commands: RegExp;
  /** Its ACP `agentInfo.name`. */
  acpNames: RegExp;
  /** The mode ids an ask and a task run in (the agent's own read-only mode; the one that asks before changes). */
  modes: { ask: string; task: string };
  /** Where it keeps its state (sessions, settings, logs), in the agent's environment. */
  stateDirs(env: NodeJS.ProcessEnv): string[];
  /** State files of its own in the home directory, and what a new one holds (it must exist to be written in the sandbox). */
  stateFiles?(env: NodeJS.ProcessEnv): { path: string; initial: string }[];
  /** The variables that hold its API key, the first the one to suggest. */
  keys: string[];
  /** How its users log in otherwise, for "needs authentication". */
  login?: string;
  /** Its environment unless the user's says otherwise. */
  defaultEnv?: Record<string, string>;
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();

export const KNOWN_AGENTS: readonly KnownAgent[] = [
  {
    title: 'Claude Code',
    commands: /claude-(agent|code)-acp|^claude$/,
    acpNames: /claude-(agent|code)-acp/,
    // `plan` is its read-only mode; `default` asks before edits and commands it does not judge safe.
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [env.CLAUDE_CONFIG_DIR || join(home(env), '.claude')],
    // Its settings file beside the folder: without it, Claude Code's CLI stops before answering.
    stateFiles: (env) => [{ path: join(env.CLAUDE_CONFIG_DIR || home(env), '.claude.json'), initial: '{}\n' }],
    keys: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
    login: 'run `claude /login` in a terminal',
    // It retries a failed request (a refused key too) for minutes without a word over ACP: two
    // retries get past a passing failure and bring a lasting one to the editor in seconds.
    defaultEnv: { CLAUDE_CODE_MAX_RETRIES: '2' },
  },
  {
    title: 'Codex',
    commands: /codex-acp|^codex$/,
    acpNames: /codex-acp/,
    // Codex has no mode that asks before every command: `read-only` asks before every edit and
    // every command that leaves its own sandbox, for asks and tasks alike.
    modes: { ask: 'read-only', task: 'read-only' },
    stateDirs: (env) => [env.CODEX_HOME || join(home(env), '.codex')],
    keys: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    login: 'run `codex login` in a terminal',
  },
  {
    title: 'Gemini CLI',
    commands: /gemini(-cli)?$/,
    acpNames: /gemini-cli/,
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [join(env.GEMINI_CLI_HOME || home(env), '.gemini')],
    keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    login: 'run `gemini` in a terminal and log in',
  },
  {
    title: 'Qwen Code',
    commands: /qwen(-code)?$/,
    acpNames: /qwen-code/,
    // Qwen starts in `auto`, where its own classifier lets tools run unasked.
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [join(home(env), '.qwen')],
    keys: ['OPENAI_API_KEY', 'DASHSCOPE_API_KEY'],
    login: 'run `qwen` in a terminal and choose how to authenticate',
  },
];

/** The known agent a command runs (any of its words, or their last path segment, names it). */
export function knownByCommand(command: readonly string[]): KnownAgent | undefined {
  const words = command.flatMap((word) => [word, basename(word), word.replace(/@[\d.]+$/, '').split('/').pop() ?? word]);
  return KNOWN_AGENTS.find((agent) => words.some((word) => agent.commands.test(word)));
}

/** The known agent an ACP `agentInfo.name` names. */
export function knownByAcpName(name: string | undefined): KnownAgent | undefined {
  return name ? KNOWN_AGENTS.find((agent) => agent.acpNames.test(name)) : undefined;
}

const INTERPRETERS = new Set(['node', 'nodejs', 'npx', 'bun', 'bunx', 'deno', 'python', 'python3', 'uvx', 'sh', 'bash', 'env']);

/** `node /x/agent.js` → `agent.js`; `/usr/bin/gemini --acp` → `gemini`. */
export function shortCommandName(command: string[]): string {
  const words = command.map((word) => basename(word));
  const program = words.find((word) => !INTERPRETERS.has(word) && !word.startsWith('-'));
  return program ?? words[0] ?? 'agent';
}
