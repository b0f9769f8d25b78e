/**
 * `buckley-lsp acp`: the ACP face (src/acp/) on stdin and stdout, for an ACP client that runs it
 * as its agent. Its settings come from the environment, a settings file (`--settings FILE`, else
 * `$XDG_CONFIG_HOME/buckley-lsp/settings.json` where there is one: ACP has no settings channel)
 * and the flags, as `doctor` reads them; its coordinator is the embedded one, or
 * `coordinator.address`'s. It runs until the client closes its input, then stops the agents.
 */
import { Readable, Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { configFromEnv, describeProblems, resolveConfig, type Config, type ConfigInput, type ConfigSource, type McpServerSetting } from '../config.js';
import type { NewSessionRequest } from '@agentclientprotocol/sdk';
import { serveOnFaults, type RootLogger } from '../logger.js';
import { acpSettingsFile, readSettingsFile } from '../settingsFile.js';
import { startTracing, stopTracing } from '../tracing.js';
import { CoordinatorLink } from '../bridge/link/link.js';
import { authWaysOf } from './acpAuth.js';
import { AcpFace, tooLarge } from '../acp/face.js';
import { boundedLines, MAX_CLIENT_MESSAGE_BYTES } from '../jsonLines.js';
import { wordedErrors } from '../invalidParams.js';
import { SessionHistory } from '../acp/history.js';

export interface AcpOptions {
  cliConfig: ConfigInput;
  settingsFile?: string;
  env: NodeJS.ProcessEnv;
  logger: RootLogger;
  version: string;
}

function settingsOf(options: AcpOptions): Config {
  const sources: ConfigSource[] = [{ name: 'environment', values: configFromEnv(options.env) }];
  const file = acpSettingsFile(options.settingsFile, options.env);
  if (file) {
    const read = readSettingsFile(file);
    if ('problem' in read) throw new Error(read.problem);
    sources.push({ name: file, values: read.values });
  }
  sources.push({ name: 'command line', values: options.cliConfig });
  const resolved = resolveConfig(sources);
  if (!resolved.ok) throw new Error(`invalid settings: ${describeProblems(resolved.problems)}`);
  return resolved.config;
}

/** What answers behind the face, in a few words, for the client's agent list. */
function behind(config: Config): string {
  if (config.coordinator.address) return `the coordinator at ${config.coordinator.address}`;
  if (config.agent.driver === 'openai') return config.agent.openai.model ?? 'an OpenAI-compatible model';
  const words = config.agent.command ?? [];
  return words.length ? words.map((word) => word.split('/').pop()).join(' ') : 'the agent found on PATH';
}

export async function runAcp(options: AcpOptions): Promise<void> {
  const { logger, env, version } = options;
  let config = settingsOf(options);
  logger.setLevel(config.log.level);
  serveOnFaults(logger);
  void startTracing('buckley-lsp', version, env, (message) => logger.warn(message));
  let clientName = 'an ACP client';
  let workspace: string | undefined;
  const link = new CoordinatorLink({
    logger: logger.child('coordinator'),
    env,
    serverVersion: version,
    config: () => config,
    clientName: () => clientName,
    workspaceRoot: () => (workspace ? pathToFileURL(workspace).href : undefined),
    openDocuments: () => [],
    onStateChange: (connection) => connection.error && logger.warn(connection.error),
    onPreflight: (problem) => problem && logger.warn(problem.message),
    initialSettings: async () => undefined,
  });
  const face = new AcpFace({
    config: () => config,
    logger: logger.child('acp'),
    version,
    behind: () => behind(config),
    coordinator: () => link.get(),
    clientNamed: (name) => (clientName = name),
    workspaceChosen: (cwd) => (workspace = cwd),
    mcpServersGiven: (servers) => {
      // The team's coordinator runs its agents with its own settings: the client's servers stay here.
      if (config.coordinator.address) return logger.warn(`the client's MCP servers (${servers.map((server) => server.name).join(', ')}) are not passed to the coordinator at ${config.coordinator.address}: set them in its buckley.agent.mcpServers`);
      config = { ...config, agent: { ...config.agent, mcpServers: { ...mcpServersOf(servers), ...config.agent.mcpServers } } };
      logger.info(`the agent gets the client's MCP servers: ${servers.map((server) => server.name).join(', ')}`);
    },
    history: new SessionHistory(env, logger.child('acp')),
    auth: authWaysOf(config),
    env,
  });
  // The ACP SDK is the one build of it the coordinator loads too (vendor-acp-sdk.js).
  const sdk = await import('@agentclientprotocol/sdk');
  // A message too large to read costs its request (an error in words), not the connection.
  const input = boundedLines(Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>, MAX_CLIENT_MESSAGE_BYTES, 'buckley-lsp acp', (line) => logger.warn(`${tooLarge(line)}${line.id === undefined ? ' (a notification: dropped)' : ''}`));
  // Params not as ACP says are answered in words, not "Invalid params" alone.
  const stream = wordedErrors(sdk.ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, input, { maxMessageBytes: 2 * MAX_CLIENT_MESSAGE_BYTES }));
  const connection = face.register(sdk.agent({ name: 'buckley-lsp' })).connect(stream);
  // Stopped by a signal as by the end of input: the turns cancelled, the agents stopped.
  let why = 'the client closed the connection';
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.once(signal, () => {
      why = signal;
      connection.close();
    });
  }
  await connection.closed.catch((error: unknown) => (why = `the connection to the client failed (${(error as Error).message})`));
  logger.info(`${why}: stopping`);
  face.stop();
  await link.close();
  await stopTracing();
}

/** ACP's MCP servers as `buckley.agent.mcpServers` (by name; the settings' own win). */
function mcpServersOf(servers: NewSessionRequest['mcpServers']): Record<string, McpServerSetting> {
  const pairs = (list: { name: string; value: string }[] | undefined) => Object.fromEntries((list ?? []).map((pair) => [pair.name, pair.value]));
  const settingOf = (server: NewSessionRequest['mcpServers'][number]): McpServerSetting =>
    'url' in server ? { url: server.url, type: server.type === 'sse' ? 'sse' : 'http', headers: pairs(server.headers) } : { command: server.command, args: server.args, env: pairs(server.env) };
  return Object.fromEntries(servers.map((server) => [server.name, settingOf(server)]));
}
