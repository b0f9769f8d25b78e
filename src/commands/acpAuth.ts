/**
 * How the user of `buckley-lsp acp` gives the agent behind it its key, as ACP's `authMethods`
 * (the ACP Registry admits agents that offer them): the known agent's key variables and its own
 * login, or the key variable of the OpenAI-compatible model. `authenticate` checks the way chosen
 * and says, in words, what is missing. Nothing is offered for an agent nobody here knows, or for
 * the team's coordinator (its agents have their keys where they run).
 */
import type { AuthWay } from '../acp/face.js';
import type { Config } from '../config.js';
import { knownByCommand } from '../coordinator/agents/recognize.js';

const WHERE = "the agent server's environment (Zed: its \"env\" in agent_servers), then restart it";

export function authWaysOf(config: Config): AuthWay[] {
  if (config.coordinator.address) return [];
  if (config.agent.driver === 'openai') {
    const variable = config.agent.openai.apiKeyEnv;
    return [{ method: { id: 'model-api-key', name: 'API key', description: `Set ${variable} in ${WHERE}` }, missing: (env) => (env[variable] ? undefined : `${variable} is not set: set it in ${WHERE}`) }];
  }
  const known = knownByCommand(config.agent.command ?? []);
  if (!known) return [];
  const slug = known.title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const [first, ...others] = known.keys;
  const ways: AuthWay[] = [];
  if (first) {
    const names = others.length ? `${first} (or ${others.join(', ')})` : first;
    ways.push({
      method: { id: `${slug}-api-key`, name: `${known.title} API key`, description: `Set ${names} in ${WHERE}` },
      // Its cloud's login chosen (Gemini CLI on Vertex AI, Claude Code on Bedrock): its key is that login's.
      missing: (env) => (known.keys.some((name) => env[name]) || known.cloudLogins?.(env).length ? undefined : `${names} is not set: set it in ${WHERE}`),
    });
  }
  if (known.login) ways.push({ method: { id: `${slug}-login`, name: `${known.title} login`, description: `${known.login[0]!.toUpperCase()}${known.login.slice(1)}` }, missing: () => undefined, askTheAgent: true });
  return ways;
}
