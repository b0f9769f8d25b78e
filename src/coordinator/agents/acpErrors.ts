/**
 * An agent's failures in words the user can act on. Agents put the reason in different places:
 * the JSON-RPC error's `data` (Qwen Code, Codex: `{"message": "Internal error", "data":
 * {"details": "…401…"}}`), the model API's JSON inside the message (Gemini CLI), their stderr
 * (a missing module, a refused start), or nowhere (Claude Code retries a 401 in silence). Here
 * they become one line: the reason, and what to do about it — which key to set and where — never
 * "Internal error" and never the agent's whole command line.
 */
import type { KnownAgent } from './known.js';
import { knownByAcpName, knownByCommand } from './recognize.js';
import { oneLine } from '../../text.js';

/** The line of an agent's stderr that says what went wrong: the error itself (`Error: Cannot find
 * module …`, `ModuleNotFoundError: …`, `panic: …`), not the stack trace below it or the runtime's
 * version after it; else the last line that is not part of a trace. */
export function errorLine(lines: readonly string[]): string | undefined {
  const error = /^\s*(?:Uncaught\s+)?(?:[A-Z]\w*(?:Error|Exception)\b(?:\s*\[[\w-]+\])?:|panic:|fatal:|error:|Error:)\s*\S/i;
  const errors = lines.filter((line) => error.test(line));
  if (errors.length) return errors.at(-1)!.trim();
  const noise = /^\s+at\s|^\s*File "|^Node\.js v|^\s*[{}\]^]+\s*$|^\s*\w+: .*,$|^\s*(throw|raise)\b|^node:internal|^Require stack|^- /;
  return lines.filter((line) => line.trim() && !noise.test(line)).at(-1)?.trim();
}

const GENERIC = /^(internal error|unknown error|error|failed|request failed)\.?$/i;

/**
 * The text of an error as the agent gave it: the message, with the JSON-RPC error's `data` where
 * the message says nothing ("Internal error") or adds to it, and the `message` of a model API's
 * JSON error found inside it.
 */
export function errorText(error: unknown): string {
  const given = error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error) ? String((error as { message: unknown }).message) : String(error);
  // "Internal error: Invalid API key" (Claude Code's adapter) says only what follows.
  const message = given.replace(/^internal error:\s*(?=\S)/i, '');
  const data = typeof error === 'object' && error !== null && 'data' in error ? dataText((error as { data: unknown }).data) : undefined;
  const text = data && !message.includes(data) ? (GENERIC.test(message.trim()) ? data : `${message}: ${data}`) : message;
  return apiMessage(text) ?? text;
}

function dataText(data: unknown): string | undefined {
  if (data === undefined || data === null) return undefined;
  if (typeof data === 'string') return data.trim() || undefined;
  if (typeof data === 'object') {
    for (const key of ['details', 'message', 'error', 'reason']) {
      const value = (data as Record<string, unknown>)[key];
      if (typeof value === 'string' && value.trim()) return value.trim();
      if (typeof value === 'object' && value !== null) return dataText(value);
    }
  }
  const json = JSON.stringify(data);
  return json && json !== '{}' ? json.slice(0, 500) : undefined;
}

/**
 * A model API's error inside a text (`…: {"error":{"code":401,"message":"API key not valid",
 * "status":"UNAUTHENTICATED"}}`, Anthropic's `{"type":"error","error":{"type":…,"message":…}}`):
 * its status and message, with what came before the JSON; undefined when there is none.
 */
function apiMessage(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  for (let end = text.lastIndexOf('}'); end > start; end = text.lastIndexOf('}', end - 1)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.slice(start, end + 1));
    } catch {
      continue;
    }
    const error = (parsed as { error?: unknown })?.error ?? parsed;
    if (typeof error !== 'object' || error === null) return undefined;
    const { message, code, status, type } = error as Record<string, unknown>;
    if (typeof message !== 'string') return undefined;
    const before = text.slice(0, start).replace(/[\s:[(]+$/, '').trim();
    const label = [code, status ?? type].filter((part) => part !== undefined && part !== '').join(' ');
    return `${before ? `${before}: ` : ''}${label ? `${label} ` : ''}${message}`.trim();
  }
  return undefined;
}

const UNAUTHORIZED = /\b401\b|unauthori[sz]ed|authentication[_ ]error|unauthenticated|invalid[ _-]?(x-)?api[ _-]?key|api key not valid|incorrect api key|no api key|api[ _-]?key (is )?(missing|required|not set)/i;

export interface AgentIdentity {
  /** Its ACP `agentInfo.name`, once it answered initialize. */
  acpName?: string;
  command: readonly string[];
  /** How the user knows it: "Claude Code", "Codex". */
  title: string;
  /** Its environment: of its key variables, the one set is the one its model's API refused. */
  env?: NodeJS.ProcessEnv;
}

/** The agent's key variables, those set in its environment first (an agent of several providers uses the one it has a key for). */
export function keysOf(agent: AgentIdentity): string[] {
  const keys = knownOf(agent)?.keys ?? [];
  const set = keys.filter((key) => agent.env?.[key]);
  return [...set, ...keys.filter((key) => !set.includes(key))];
}

/** The known agent behind an identity. */
export function knownOf(agent: AgentIdentity): KnownAgent | undefined {
  return knownByAcpName(agent.acpName) ?? knownByCommand(agent.command);
}

const MISSING_VARIABLE = /missing (?:environment )?variable:?\s*`?([A-Za-z_][A-Za-z0-9_]*)`?|([A-Z][A-Z0-9_]*_(?:KEY|TOKEN)) (?:is )?(?:not set|missing)/i;

/** What to do about an error: a 401 names the key and where to give it, as does a variable it misses; undefined when there is nothing to add. */
export function remedy(text: string, agent: AgentIdentity): string | undefined {
  const missing = MISSING_VARIABLE.exec(text);
  const variable = missing?.[1] ?? missing?.[2];
  if (variable) return `give ${agent.title} ${variable} with buckley.agent.env (e.g. {"${variable}": "…"}) or in the environment buckley-lsp starts in`;
  if (!UNAUTHORIZED.test(text)) return undefined;
  const known = knownOf(agent);
  const keys = keysOf(agent);
  const key = keys.length ? `${keys[0]}${keys.length > 1 ? ` (or ${keys.slice(1).join(', ')})` : ''}` : "the agent's API key";
  return `the model's API refused ${agent.title}'s key: give it ${key} with buckley.agent.env (e.g. {"${keys[0] ?? 'API_KEY'}": "…"}) or in the environment buckley-lsp starts in${known?.login ? `, or ${known.login}` : ''}`;
}

/** One line: what failed, why (the agent's own reason), and what to do. */
export function inWords(what: string, error: unknown, agent: AgentIdentity): string {
  const reason = oneLine(errorText(error), 400);
  const fix = remedy(reason, agent);
  return fix ? `${what}: ${reason.replace(/[.\s]+$/, '')}. To fix it, ${fix}` : `${what}: ${reason}`;
}

/** A log line without its terminal colours (Codex's log is coloured). */
export function withoutEscapes(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

