/**
 * What the bridge checks at startup instead of starting the embedded coordinator — which starts,
 * with gRPC and its worker thread, when it is first needed (an ask, a task, a completion, the
 * status): cheap checks, so that what is wrong with its agent is still said at once. The agent
 * is chosen as the coordinator will choose it; its command resolves; a model server (or a local
 * Ollama) accepts a connection.
 */
import { connect } from 'node:net';
import { basename } from 'node:path';
import type { Config } from '../../config.js';
import type { Failure } from '../../errors.js';
import { agentNotFound, agentProgram, chooseAgent, noAgentFound } from '../../coordinator/agents/choose.js';

/** What is wrong, and whether it is that there is no agent to run (a bad agent setting says more). */
export type PreflightProblem = Failure & { agentMissing: boolean };

/** What is said of an embedded coordinator without an agent, in a few words. */
export const NO_AGENT_SUMMARY = 'set buckley.agent.command to an ACP agent';

/** How long a model server's address may take to resolve and accept a connection. */
const CONNECT_TIMEOUT_MS = 2_000;

export async function preflight(config: Config, env: NodeJS.ProcessEnv, timeoutMs = CONNECT_TIMEOUT_MS): Promise<PreflightProblem | undefined> {
  const choice = chooseAgent(config, env);
  switch (choice.kind) {
    case 'none':
      return { message: choice.problem, summary: NO_AGENT_SUMMARY, agentMissing: true };
    case 'acp':
      // The agent's PATH: the server's, or what buckley.agent.env gives it.
      if (agentProgram(choice.command, { ...env, ...config.agent.env })) return undefined;
      // The summary fits a one-line message: the program's name, then the setting to fix.
      return { message: agentNotFound(choice.command), summary: `${basename(choice.command[0]!)} not found: fix buckley.agent.command`, agentMissing: true };
    case 'ollama':
      if (!(await refusal(new URL(choice.baseUrl), timeoutMs))) return undefined;
      return { message: noAgentFound(choice.baseUrl), summary: NO_AGENT_SUMMARY, agentMissing: true };
    case 'openai': {
      const url = new URL(choice.baseUrl);
      const refused = await refusal(url, timeoutMs);
      if (!refused) return undefined;
      return {
        message: `the model server at ${choice.baseUrl} (buckley.agent.openai.baseUrl) does not accept connections: ${refused}`,
        summary: `no model server at ${url.host} (see log)`,
        agentMissing: false,
      };
    }
  }
}

const TIMED_OUT = 'no connection in time';

/** Why the host and port do not accept a TCP connection (the name resolved first); undefined: they do. */
function refusal(url: URL, timeoutMs: number): Promise<string | undefined> {
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    let ended = false;
    const done = (why: string | undefined) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(TIMED_OUT), timeoutMs);
    socket.once('connect', () => done(undefined));
    // For the socket's whole life: an error after the check has ended must not go uncaught.
    socket.on('error', (error) => done(error.message));
  });
}
