/**
 * `buckley-lsp coordinator`: our coordinator as a standalone process, until SIGINT, SIGTERM or
 * SIGHUP (its terminal closed); then it stops its agents and what they started.
 */
import { configFromEnv, describeProblems, resolveConfig, type ConfigInput } from '../config.js';
import { serveOnFaults, type RootLogger } from '../logger.js';
import { detectAgent } from '../coordinator/agents/detect.js';
import { startCoordinator } from '../coordinator/server.js';
import { hostname } from 'node:os';
import { startTracing, stopTracing } from '../tracing.js';
import { natsAccessOf } from '../coordinator/tasks/natsAccess.js';

export async function runCoordinator(options: {
  listen: string;
  tls?: { cert: string; key: string; clientCa?: string };
  /** A replica of a team's coordinator (--nats …). */
  team?: { nats?: string[]; natsCreds?: string; replicas?: number; natsWaitS?: number; replica?: string; maxRunning?: number; roots?: string[]; metrics?: string };
  cliConfig: ConfigInput;
  env: NodeJS.ProcessEnv;
  logger: RootLogger;
  version: string;
}): Promise<void> {
  const { logger } = options;
  serveOnFaults(logger);
  const resolved = resolveConfig([
    { name: 'environment', values: configFromEnv(options.env) },
    { name: 'command line', values: options.cliConfig },
  ]);
  if (!resolved.ok) throw new Error(`invalid settings: ${describeProblems(resolved.problems)}`);
  logger.setLevel(resolved.config.log.level);
  const detection = await detectAgent({ config: resolved.config, env: options.env, logger: logger.child('agent'), clientVersion: options.version });
  if (detection.problem) logger.warn(detection.problem);
  await startTracing('buckley-lsp coordinator', options.version, options.env, (message) => logger.warn(message));
  const team = options.team ?? {};
  const replica = team.replica ?? `${hostname()}:${process.pid}`;
  // The team's engine is loaded only for a team: a coordinator alone keeps its tasks in memory.
  const engine = team.nats?.length ? await teamEngine(team as typeof team & { nats: string[] }, replica, options.env, logger) : undefined;
  const running = await startCoordinator(options.listen, {
    driver: detection.driver,
    agentProblem: detection.problem,
    logger: logger.child('coordinator'),
    tls: options.tls,
    ...(engine ? { engine } : {}),
    replica,
    ...(team.maxRunning !== undefined ? { maxRunning: team.maxRunning } : {}),
    ...(team.roots ? { roots: team.roots } : {}),
    ...(team.metrics ? { metrics: team.metrics } : {}),
  });
  // Tests and scripts wait for this line on stderr to learn the port.
  process.stderr.write(`buckley-lsp coordinator listening on ${running.address}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, stop);
  });
  await running.close();
  await stopTracing();
}

/** A replica's engine on the team's NATS, logged in as NATS's own tools would be (natsAccess.ts). */
async function teamEngine(team: NonNullable<Parameters<typeof runCoordinator>[0]['team']> & { nats: string[] }, replica: string, env: NodeJS.ProcessEnv, logger: RootLogger) {
  const access = natsAccessOf(team.nats, env, team.natsCreds);
  if ('problem' in access) throw new Error(access.problem);
  const { natsEngine } = await import('../coordinator/tasks/nats.js');
  const engine = await natsEngine({ servers: access.servers, auth: access.auth, replicas: team.replicas ?? (access.servers.length >= 3 ? 3 : 1), name: `buckley-lsp coordinator ${replica}`, replica, logger: logger.child('nats'), ...(team.natsWaitS ? { patienceMs: team.natsWaitS * 1000 } : {}) });
  logger.info(`replica ${replica} of the team on NATS ${access.servers.join(', ')} (${access.how})`);
  return engine;
}
