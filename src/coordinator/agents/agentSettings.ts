/**
 * What an agent's own settings need from its sandbox: the variables they name and the servers
 * they point at.
 *
 * The variables: `${GITHUB_TOKEN}` in an MCP server's `env` (Claude Code's `~/.claude.json`,
 * Gemini CLI's and Qwen Code's `settings.json`, Copilot CLI's `mcp-config.json`), `{env:NAME}` in
 * opencode's and Kilo's config, `env_key`, `env_vars` and `bearer_token_env_var` in Codex's
 * `config.toml`. The agent needs them in its environment, though their names say secret:
 * withheld, its MCP server starts without its token, its model provider without its key.
 * The servers: its remote MCP servers' URLs (`url`, `httpUrl`, `serverUrl`), which its confined
 * network must reach as it reaches those `buckley.agent.mcpServers` names.
 *
 * Only the user's own settings count — those in the home that the sandbox keeps read-only, or puts
 * back after a turn (guardedState.ts), as they stood before the turns under way (the guard's
 * journal), so no turn adds a name — never a workspace's: a
 * repository cloned could name any variable to have it handed over, or any host to reach.
 */
import { statSync } from 'node:fs';
import { readFileBounded } from '../../fileAccess.js';
import { guardedValues } from './guardedState.js';
import type { BeforeTurns } from './guardJournal.js';
import type { KnownAgent } from './known.js';

/** Far more than any settings file holds: a file past it is not read for names. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

const NAME = '[A-Za-z_][A-Za-z0-9_]*';
/** How settings name a variable, each with the name as its first group. */
const REFERENCES = [
  // ${NAME}, ${NAME:-default} (Claude Code, Copilot CLI, Gemini CLI, Qwen Code)
  new RegExp(`\\$\\{(${NAME})(?::?-[^}]*)?\\}`, 'g'),
  // $NAME (Gemini CLI, Qwen Code)
  new RegExp(`\\$(${NAME})`, 'g'),
  // {env:NAME} (opencode, Kilo)
  new RegExp(`\\{env:(${NAME})\\}`, 'g'),
  // env_key = "NAME", bearer_token_env_var = "NAME" (Codex)
  new RegExp(`\\b(?:env_key|bearer_token_env_var)\\s*=\\s*"(${NAME})"`, 'g'),
];
/** env_vars = ["A", "B"] (Codex's MCP servers: the variables passed on to them). */
const NAME_LISTS = /\benv_vars\s*=\s*\[([^\]]*)\]/g;

/** A remote MCP server's URL: `"url": "https://…"` (JSON), `url = "https://…"` (TOML), `httpUrl` and `serverUrl` alike. */
const SERVER_URLS = /"?\b(?:url|httpUrl|serverUrl)"?\s*[:=]\s*"(https?:\/\/[^"\s]+)"/g;

/** A variable the agent's settings name, and the file that names it (for the log). */
export interface NamedVariable {
  name: string;
  file: string;
}

/** A settings file of the agent's, and what of it is the user's: all of it, or the values at its guarded keys. */
export interface SettingsText {
  file: string;
  text: string;
}

/**
 * The known agent's settings as the user wrote them: whole, those the sandbox keeps read-only
 * (`runsCode`); of a file it writes itself (`runsCodeIn`: `~/.claude.json`, opencode's config),
 * the values at its guarded keys only — the rest of it is the agent's to write, and a name it put
 * there would hand it that variable at its next start.
 */
export function settingsOf(known: KnownAgent | undefined, env: NodeJS.ProcessEnv, before: BeforeTurns = NO_TURNS): SettingsText[] {
  if (!known) return [];
  // While a turn is under way, as they were before it: a file it made is not the user's, nor a value it wrote.
  const whole = (known.runsCode?.(env) ?? []).filter((file) => !file.includes('*') && !before.absent.has(file) && isFile(file)).map((file) => ({ file, text: read(file) }));
  const keyed = (known.runsCodeIn?.(env) ?? [])
    .filter((guard) => !before.absent.has(guard.file) && isFile(guard.file))
    .map((guard) => ({ file: guard.file, text: (before.values.get(guard.file) ?? guardedValues(guard)).join('\n') }));
  return [...whole, ...keyed].filter(({ text }) => text);
}

const NO_TURNS: BeforeTurns = { absent: new Set(), values: new Map() };

/** The variables those settings name, each once (the first file naming it). */
export function namedVariables(settings: readonly SettingsText[]): NamedVariable[] {
  const found = new Map<string, string>();
  for (const { file, text } of settings) {
    for (const name of namesIn(text)) if (!found.has(name)) found.set(name, file);
  }
  return [...found].map(([name, file]) => ({ name, file }));
}

/** The URLs of the remote MCP servers those settings configure. */
export function serverUrls(settings: readonly SettingsText[]): string[] {
  return [...new Set(settings.flatMap(({ text }) => urlsIn(text)))];
}

/** The remote MCP servers' URLs in a settings text. */
export function urlsIn(text: string): string[] {
  return [...text.matchAll(SERVER_URLS)].map((match) => match[1]!);
}

/** The names a settings text refers to. */
export function namesIn(text: string): string[] {
  const names = REFERENCES.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]!));
  for (const list of text.matchAll(NAME_LISTS)) names.push(...[...list[1]!.matchAll(new RegExp(`"(${NAME})"`, 'g'))].map((match) => match[1]!));
  return [...new Set(names)];
}

function read(file: string): string {
  try {
    return readFileBounded(file, MAX_SETTINGS_BYTES).toString('utf8');
  } catch {
    return '';
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
