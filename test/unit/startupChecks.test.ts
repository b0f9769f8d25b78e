/**
 * Startup without the coordinator: the embedded one (a worker thread, gRPC) is not started until
 * it is first needed, and cheap checks say at once what is wrong with its agent; a remote one is
 * connected to at once (only a call tells whether it takes our certificate and agent id).
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfig, type Config } from '../../src/config.js';
import { CoordinatorLink } from '../../src/bridge/link/link.js';
import type { PreflightProblem } from '../../src/bridge/link/preflight.js';
import { RootLogger } from '../../src/logger.js';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

function configOf(values: object): Config {
  const result = resolveConfig([{ name: 'test', values }]);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/** A port that refuses connections: one that listened a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function openPort(): Promise<number> {
  const server = createServer((socket) => socket.destroy());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function started(values: object, env: NodeJS.ProcessEnv = {}) {
  const problems: PreflightProblem[] = [];
  const lines: string[] = [];
  const logger = new RootLogger('debug');
  logger.setSink((level, line) => lines.push(`${level} ${line}`));
  const link = new CoordinatorLink({
    logger,
    env: { PATH: '/nonexistent', ...env },
    serverVersion: 'test',
    config: () => configOf(values),
    clientName: () => 'test',
    workspaceRoot: () => undefined,
    openDocuments: () => [],
    onStateChange: () => undefined,
    onPreflight: (problem) => problem && problems.push(problem),
    initialSettings: () => Promise.resolve(),
  });
  await link.start();
  return { link, problems, lines };
}

describe('startup, before the coordinator is needed', () => {
  it('starts no embedded coordinator for an agent that is there, and says when it will start', async () => {
    const { link, problems, lines } = await started({ agent: { command: [process.execPath, '--version'] } });
    expect(problems).toEqual([]);
    expect(link.connecting).toBe(false);
    expect(link.current).toBeUndefined();
    expect(lines).toContain('info the embedded coordinator starts when first needed (an ask, a task, a completion, the status)');
  });

  it("says at once that the agent's command is not there, as the coordinator would when asked", async () => {
    const { link, problems } = await started({ agent: { command: ['no-such-agent', '--acp'] } });
    expect(link.connecting).toBe(false);
    expect(problems).toEqual([
      {
        message: 'cannot start ACP agent `no-such-agent --acp`: no-such-agent is not found on PATH. Check that the command exists and is executable (setting buckley.agent.command or BUCKLEY_AGENT).',
        summary: 'no-such-agent not found: fix buckley.agent.command',
        agentMissing: true,
      },
    ]);
  });

  it('says there is no agent where Buckley is not on PATH and no Ollama listens, and takes an Ollama that does', async () => {
    const none = await started({}, { OLLAMA_HOST: `127.0.0.1:${await closedPort()}` });
    expect(none.problems).toHaveLength(1);
    expect(none.problems[0]).toMatchObject({ summary: 'set buckley.agent.command to an ACP agent', agentMissing: true });
    expect(none.problems[0]!.message).toMatch(/^No agent found: buckley is not on PATH and no Ollama answers on http:\/\/127\.0\.0\.1:\d+\/v1\. Set buckley\.agent\.command/);
    const ollama = await started({}, { OLLAMA_HOST: `127.0.0.1:${await openPort()}` });
    expect(ollama.problems).toEqual([]);
    expect(ollama.link.connecting).toBe(false);
  });

  it('says a model server that does not accept connections is not there, naming its setting', async () => {
    const port = await closedPort();
    const { problems } = await started({ agent: { driver: 'openai', openai: { baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm' } } });
    expect(problems).toEqual([
      {
        message: `the model server at http://127.0.0.1:${port}/v1 (buckley.agent.openai.baseUrl) does not accept connections: connect ECONNREFUSED 127.0.0.1:${port}`,
        summary: `no model server at 127.0.0.1:${port} (see log)`,
        agentMissing: false,
      },
    ]);
  });

  it('connects to a remote coordinator at once', async () => {
    const { link, problems } = await started({ coordinator: { address: `127.0.0.1:${await closedPort()}` } });
    expect(problems).toEqual([]);
    expect(link.connecting).toBe(true);
    await link.close();
  });
});
