/**
 * Real NATS servers with JetStream for the team coordinator's tests: one, or a 3-node cluster, on
 * loopback, each with a store folder of its own — stopped, killed (SIGKILL) and started again on
 * the same folder and ports. The server is the one `npm run install-nats` builds into `.nats/bin/`
 * (BUCKLEY_NATS_SERVER for another); without it these tests are skipped with a line saying so,
 * and in CI its absence is an error.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO } from './paths.js';
import { tempDir } from './temp.js';

export const NATS_SERVER = process.env.BUCKLEY_NATS_SERVER ?? join(REPO, '.nats', 'bin', 'nats-server');

export function natsInstalled(): boolean {
  return existsSync(NATS_SERVER);
}

export const missingNatsLine = () => `nats-server not found at ${NATS_SERVER}: install it with \`npm run install-nats\` (it builds the pinned version with Go)`;

/** For a test file: whether to run its NATS tests (CI must have the server). */
export function requireNats(): boolean {
  const ok = natsInstalled();
  if (!ok && process.env.CI) throw new Error(`${missingNatsLine()} — CI must install it (.ci/run)`);
  if (!ok) process.stdout.write(`NATS tests skipped: ${missingNatsLine()}\n`);
  return ok;
}

export interface NatsServer {
  url: string;
  name: string;
  /** Stops it (SIGTERM) and waits for it to end. */
  stop(): Promise<void>;
  /** Kills it (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and store. */
  start(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every server started by a test file, stopped at its end (afterAll in the file). */
const started = new Set<ChildProcess>();
export async function stopAllNats(): Promise<void> {
  await Promise.all([...started].map((child) => ended(child, 'SIGKILL')));
}

function ended(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

function server(name: string, args: string[]): NatsServer {
  let child: ChildProcess | undefined;
  const port = Number(args[args.indexOf('-p') + 1]);
  return {
    url: `nats://127.0.0.1:${port}`,
    name,
    start: async () => {
      child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      started.add(child);
      child.once('exit', () => started.delete(child!));
      let said = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`nats-server ${name} did not say it was ready within 15 s: ${said.slice(-2000)}`)), 15_000);
        child!.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
          said += chunk;
          if (said.includes('Server is ready')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child!.once('exit', (code) => reject(new Error(`nats-server ${name} exited (${code}): ${said.slice(-2000)}`)));
      });
    },
    stop: async () => child && ended(child, 'SIGTERM'),
    kill: async () => child && ended(child, 'SIGKILL'),
  };
}

/**
 * One server with JetStream (without, where `jetstream` is false), started; `config`: more of its
 * configuration, in nats-server's own format (its users and their permissions, TLS), beside the flags.
 */
export async function startNats(config?: string, jetstream = true): Promise<NatsServer> {
  const extra: string[] = [];
  if (config) {
    const file = join(tempDir('buckley-nats-conf'), 'nats.conf');
    writeFileSync(file, config);
    extra.push('-c', file);
  }
  const one = server('n1', [...extra, ...(jetstream ? ['-js'] : []), '-a', '127.0.0.1', '-p', String(await freePort()), '-sd', tempDir('buckley-nats'), '-n', 'n1']);
  await one.start();
  return one;
}

/** A cluster of `size` servers with JetStream on loopback, started (its meta leader elected by the time a client asks). */
export async function startNatsCluster(size = 3): Promise<NatsServer[]> {
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), cluster: await freePort() })));
  const routes = ports.map((port) => `nats://127.0.0.1:${port.cluster}`).join(',');
  const servers = ports.map((port, index) =>
    server(`n${index + 1}`, ['-js', '-a', '127.0.0.1', '-p', String(port.client), '-sd', tempDir('buckley-nats'), '-n', `n${index + 1}`, '--cluster_name', 'buckley', '--cluster', `nats://127.0.0.1:${port.cluster}`, '--routes', routes]),
  );
  await Promise.all(servers.map((one) => one.start()));
  return servers;
}
