/**
 * Which agent the embedded coordinator runs — the configured one, else (auto) `buckley acp` when
 * Buckley is on PATH, else an Ollama on loopback — decided without starting or loading anything:
 * the bridge checks the choice at startup (link/preflight.ts) and detect.ts builds its driver.
 */
import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { splitCommandLine, type Config } from '../../config.js';
import { isLoopbackHost } from '../../net.js';
import { findOnPath } from './which.js';

export type AgentChoice =
  | { kind: 'acp'; command: string[] }
  | { kind: 'openai'; baseUrl: string; model?: string }
  /** An Ollama may listen there: it is the agent if it answers with a model. */
  | { kind: 'ollama'; baseUrl: string }
  | { kind: 'none'; problem: string };

export const HOW_TO_CONFIGURE =
  'Set buckley.agent.command to an ACP agent (e.g. ["gemini", "--acp"] or ["buckley", "acp"]) or the BUCKLEY_AGENT environment variable, ' +
  'or set buckley.agent.driver to "openai" with buckley.agent.openai.baseUrl and model, ' +
  'or point buckley.coordinator.address (BUCKLEY_COORDINATOR) at a running coordinator.';

export function chooseAgent(config: Config, env: NodeJS.ProcessEnv): AgentChoice {
  const { agent } = config;
  if (agent.driver === 'acp' || (agent.driver === 'auto' && agent.command)) {
    if (!agent.command) return { kind: 'none', problem: `buckley.agent.driver is "acp" but buckley.agent.command is not set. ${HOW_TO_CONFIGURE}` };
    const clash = profileInOurVariable(env, agent.command);
    return clash ? { kind: 'none', problem: clash } : { kind: 'acp', command: agent.command };
  }
  if (agent.driver === 'openai') return { kind: 'openai', baseUrl: agent.openai.baseUrl, model: agent.openai.model };
  const buckley = findOnPath('buckley', env.PATH ?? '');
  if (buckley) return { kind: 'acp', command: [buckley, 'acp'] };
  const ollama = ollamaBaseUrl(env);
  return ollama ? { kind: 'ollama', baseUrl: ollama } : { kind: 'none', problem: noAgentFound(undefined) };
}

/** Neither Buckley on PATH nor an Ollama that answers. */
export function noAgentFound(ollama: string | undefined): string {
  return `No agent found: buckley is not on PATH and no Ollama answers on ${ollama ?? '127.0.0.1:11434'}. ${HOW_TO_CONFIGURE}`;
}

/** The agent's program as it will run: its path (found on the agent's PATH); undefined when there is none. */
export function agentProgram(command: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  const name = command[0]!;
  if (!name.includes('/')) return findOnPath(name, env.PATH ?? '');
  try {
    accessSync(name, constants.X_OK);
    return resolve(name);
  } catch {
    return undefined;
  }
}

/** What is said when the agent's program is not there. */
export function agentNotFound(command: readonly string[]): string {
  const name = command[0]!;
  return `cannot start ACP agent \`${command.join(' ')}\`: ${name} is not found${name.includes('/') ? '' : ' on PATH'}. Check that the command exists and is executable (setting buckley.agent.command or BUCKLEY_AGENT).`;
}

/**
 * BUCKLEY_AGENT holding what looks like `buckley acp`'s agent profile (a YAML/JSON/TOML file, or
 * any file that is not a program) rather than the command buckley-lsp takes it for: say so.
 */
export function profileInOurVariable(env: NodeJS.ProcessEnv, command: string[]): string | undefined {
  const value = env.BUCKLEY_AGENT?.trim();
  if (!value || splitCommandLine(value).join('\0') !== command.join('\0')) return undefined;
  const program = command[0]!;
  const looksLikeProfile = /\.(ya?ml|json|toml)$/i.test(program) || (program.includes('/') && isFileButNotProgram(program));
  if (!looksLikeProfile) return undefined;
  return (
    `BUCKLEY_AGENT is "${value}", which buckley-lsp reads as the command of its ACP agent, but it is a file, not a program: ` +
    'it looks like the agent profile `buckley acp` reads from a variable of the same name. ' +
    'Set buckley.agent.command instead (e.g. ["buckley", "acp"]) and give the agent its profile with ' +
    `buckley.agent.env: {"BUCKLEY_AGENT": "${value}"} — buckley-lsp passes none of its own BUCKLEY_* variables to agents.`
  );
}

function isFileButNotProgram(path: string): boolean {
  try {
    accessSync(path, constants.F_OK);
  } catch {
    return false;
  }
  try {
    accessSync(path, constants.X_OK);
    return false;
  } catch {
    return true;
  }
}

/**
 * Where a local Ollama would listen: OLLAMA_HOST (Ollama's own setting) or its default port,
 * on loopback only — auto-detection never sends the user's code to another machine.
 */
export function ollamaBaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const configured = env.OLLAMA_HOST?.trim();
  if (!configured) return 'http://127.0.0.1:11434/v1';
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(configured) ? configured : `http://${configured}`);
  } catch {
    return undefined;
  }
  const host = url.hostname === '0.0.0.0' || url.hostname === '' ? '127.0.0.1' : url.hostname;
  if (!isLoopbackHost(host)) return undefined;
  return `${url.protocol}//${host}:${url.port || '11434'}/v1`;
}
