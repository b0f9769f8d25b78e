/**
 * Builds the agent driver of the embedded coordinator from the agent chosen (choose.ts): the ACP
 * agent's pool, or an OpenAI-compatible model (a local Ollama's first model when auto-detected);
 * or none, with a message telling the user exactly how to configure one.
 */
import { join } from 'node:path';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { AcpDriver } from './acp.js';
import { chooseAgent, noAgentFound } from './choose.js';
import { AgentPool } from './pool.js';
import type { AgentDriver } from './driver.js';
import { OpenAiDriver } from './openai.js';
import { boundedText } from './httpBodies.js';
import { SessionStore } from './sessionStore.js';
import { AgentChoices } from './choices.js';
import { EditorMcpServer } from './editorMcp.js';
import { stateDirectory } from '../../state.js';

export type Detection = { driver: AgentDriver; problem?: undefined } | { driver?: undefined; problem: string };

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
  const choice = chooseAgent(config, env);
  switch (choice.kind) {
    case 'none':
      return { problem: choice.problem };
    case 'acp':
      return { driver: acpPool(choice.command, options) };
    case 'openai': {
      const model = choice.model ?? (await firstModel(choice.baseUrl, env[agent.openai.apiKeyEnv], options.probeTimeoutMs ?? 2_000));
      if (!model) {
        return { problem: `buckley.agent.openai.model is not set and ${choice.baseUrl}/models lists none. Set buckley.agent.openai.model to the model to use.` };
      }
      return { driver: new OpenAiDriver({ baseUrl: choice.baseUrl, model, apiKey: env[agent.openai.apiKeyEnv], logger: logger.child('openai') }) };
    }
    case 'ollama': {
      const model = await firstModel(choice.baseUrl, undefined, options.probeTimeoutMs ?? 500);
      if (!model) return { problem: noAgentFound(choice.baseUrl) };
      return { driver: new OpenAiDriver({ baseUrl: choice.baseUrl, model, logger: logger.child('openai') }) };
    }
  }
}

/** The ACP agent: one process per sandbox (asks, tasks; each workspace), pool.ts. */
function acpPool(command: string[], options: DetectOptions): AgentDriver {
  const { env, logger } = options;
  const agent = options.config.agent;
  const sessionStore = new SessionStore(join(stateDirectory(env), 'agent-sessions.json'), logger.child('sessions'));
  const choices = new AgentChoices({ agent: command.join(' '), setting: agent.model, modeSetting: agent.mode, modeSettings: agent.modes, file: join(stateDirectory(env), 'agent-models.json'), logger: logger.child('acp') });
  const editorMcp = agent.editorTools ? new EditorMcpServer(logger.child('acp'), options.clientVersion) : undefined;
  return new AgentPool({
    choices,
    editorMcp,
    command,
    env,
    environment: { env: agent.env, passEnv: agent.passEnv },
    logger: logger.child('acp'),
    cwd: options.cwd,
    sandbox: agent.sandbox,
    mcpServers: agent.mcpServers,
    driver: (launch, cwd, startGate) =>
      new AcpDriver({
        startGate,
        command,
        launch,
        cwd,
        env: launch.env,
        logger: logger.child('acp'),
        clientVersion: options.clientVersion,
        requestTimeoutMs: agent.requestTimeoutMs,
        cancelGraceMs: agent.cancelGraceMs,
        sessionStore,
        choices,
        mcpServers: agent.mcpServers,
        editorMcp,
        maxIdleSessions: agent.maxIdleSessions,
        silenceMs: agent.silenceMs,
      }),
  });
}

async function firstModel(baseUrl: string, apiKey: string | undefined, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!response.ok) return undefined;
    const text = await boundedText(response);
    if (text === undefined) return undefined;
    const body = JSON.parse(text) as { data?: { id?: unknown }[] } | null;
    const id = body?.data?.find((model) => typeof model.id === 'string')?.id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
