/**
 * Chooses the agent driver of the embedded coordinator: the configured one, else (auto) an
 * ACP agent command, `buckley acp` when Buckley is on PATH, an Ollama server on loopback; or
 * none, with a message telling the user exactly how to configure one.
 */
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { OUR_ENVIRONMENT, splitCommandLine, type Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { isLoopbackHost } from '../../net.js';
import { AcpDriver } from './acp.js';
import { AgentPool } from './pool.js';
import { findOnPath } from './which.js';
import { knownByCommand } from './known.js';
import type { AgentDriver } from './driver.js';
import { OpenAiDriver } from './openai.js';
import { SessionStore } from './sessionStore.js';
import { stateDirectory } from '../../state.js';

export type Detection = { driver: AgentDriver; problem?: undefined } | { driver?: undefined; problem: string };

export const HOW_TO_CONFIGURE =
  'Set buckley.agent.command to an ACP agent (e.g. ["gemini", "--acp"] or ["buckley", "acp"]) or the BUCKLEY_AGENT environment variable, ' +
  'or set buckley.agent.driver to "openai" with buckley.agent.openai.baseUrl and model, ' +
  'or point buckley.coordinator.address (BUCKLEY_COORDINATOR) at a running coordinator.';

export interface DetectOptions {
  config: Config;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  cwd?: string;
  clientVersion: string;
  /** How long to wait for a local Ollama to answer. */
  probeTimeoutMs?: number;
}

export async function detectAgent(options: DetectOptions): Promise<Detection> {
  const { config, env, logger } = options;
  const agent = config.agent;
  const acpDriver = (command: string[]) => {
    const agentEnv = { ...knownByCommand(command)?.defaultEnv, ...agentEnvironment(env, agent.env) };
    const sessionStore = new SessionStore(join(stateDirectory(env), 'agent-sessions.json'), logger.child('sessions'));
    // One process per sandbox (asks, tasks; each workspace): pool.ts.
    return new AgentPool({
      command,
      env: agentEnv,
      logger: logger.child('acp'),
      cwd: options.cwd,
      sandbox: agent.sandbox,
      driver: (launch, cwd) =>
        new AcpDriver({
          command,
          launch,
          cwd,
          env: agentEnv,
          logger: logger.child('acp'),
          clientVersion: options.clientVersion,
          requestTimeoutMs: agent.requestTimeoutMs,
          cancelGraceMs: agent.cancelGraceMs,
          sessionStore,
          modes: agent.modes,
          maxIdleSessions: agent.maxIdleSessions,
          silenceMs: agent.silenceMs,
          wrapCommand: launch.wrap,
        }),
    });
  };
  const openAiDriver = (model: string) =>
    new OpenAiDriver({
      baseUrl: agent.openai.baseUrl,
      model,
      apiKey: env[agent.openai.apiKeyEnv],
      logger: logger.child('openai'),
    });

  if (agent.driver === 'acp' || (agent.driver === 'auto' && agent.command)) {
    if (!agent.command) return { problem: `buckley.agent.driver is "acp" but buckley.agent.command is not set. ${HOW_TO_CONFIGURE}` };
    const clash = profileInOurVariable(env, agent.command);
    if (clash) return { problem: clash };
    return { driver: acpDriver(agent.command) };
  }
  if (agent.driver === 'openai') {
    const model = agent.openai.model ?? (await firstModel(agent.openai.baseUrl, env[agent.openai.apiKeyEnv], options.probeTimeoutMs ?? 2_000));
    if (!model) {
      return { problem: `buckley.agent.openai.model is not set and ${agent.openai.baseUrl}/models lists none. Set buckley.agent.openai.model to the model to use.` };
    }
    return { driver: openAiDriver(model) };
  }
  const buckley = findOnPath('buckley', env.PATH ?? '');
  if (buckley) return { driver: acpDriver([buckley, 'acp']) };
  const ollama = ollamaBaseUrl(env);
  const model = ollama ? await firstModel(ollama, undefined, options.probeTimeoutMs ?? 500) : undefined;
  if (ollama && model) {
    return {
      driver: new OpenAiDriver({ baseUrl: ollama, model, logger: logger.child('openai') }),
    };
  }
  return { problem: `No agent found: buckley is not on PATH and no Ollama answers on ${ollama ?? '127.0.0.1:11434'}. ${HOW_TO_CONFIGURE}` };
}

/**
 * The agent's environment: the server's, without the variables buckley-lsp reads (they are ours:
 * `buckley acp` takes a BUCKLEY_AGENT of its own for its profile) and IS_SANDBOX, plus
 * buckley.agent.env.
 */
export function agentEnvironment(env: NodeJS.ProcessEnv, extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env };
  for (const name of OUR_ENVIRONMENT) delete result[name];
  // A machine's claim to be a sandbox is not the agent's sandbox: IS_SANDBOX makes Claude Code
  // offer "bypass permissions" even to root — and refuse to start as root unless it is "1".
  // The user can still give it to the agent (buckley.agent.env).
  for (const name of NOT_PASSED) delete result[name];
  return { ...result, ...extra };
}

/** Variables of the server's environment that are not the agent's business. */
const NOT_PASSED = ['IS_SANDBOX'];

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


async function firstModel(baseUrl: string, apiKey: string | undefined, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    const id = body.data?.find((model) => typeof model.id === 'string')?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
