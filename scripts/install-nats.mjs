#!/usr/bin/env node
// Installs the NATS server the team coordinator's tests run (a real nats-server with JetStream,
// alone and as a 3-node cluster), at the version pinned here, into a folder of the project's own
// (default `.nats/bin/`, where the tests look):
//
//   node scripts/install-nats.mjs [--dest DIR]
//
// Debian's nats-server (2.9) is older than the JetStream client needs (2.10: consumers with
// several subjects), so it is built from the Go module proxy with the machine's Go. A server of
// the pinned version already there is kept.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const NATS_SERVER_VERSION = '2.15.2';

const args = process.argv.slice(2);
const destAt = args.indexOf('--dest');
const dest = resolve(destAt === -1 ? '.nats' : args[destAt + 1]);
const bin = join(dest, 'bin');
const server = join(bin, 'nats-server');

const version = (program) => spawnSync(program, ['--version'], { encoding: 'utf8' }).stdout?.trim();
if (existsSync(server) && version(server) === `nats-server: v${NATS_SERVER_VERSION}`) {
  process.stdout.write(`nats-server ${NATS_SERVER_VERSION} ${server}\n`);
  process.exit(0);
}
if (spawnSync('go', ['version'], { encoding: 'utf8' }).status !== 0) {
  process.stderr.write(`install-nats: Go is not installed, and it builds nats-server ${NATS_SERVER_VERSION} (Debian: apt install golang); the NATS tests will be skipped\n`);
  process.exit(1);
}
mkdirSync(bin, { recursive: true });
const built = spawnSync('go', ['install', `github.com/nats-io/nats-server/v2@v${NATS_SERVER_VERSION}`], {
  env: { ...process.env, GOBIN: bin, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (built.status !== 0 || !existsSync(server)) {
  process.stderr.write(`install-nats: building nats-server ${NATS_SERVER_VERSION} failed (exit ${built.status ?? built.signal}); the NATS tests will be skipped\n`);
  process.exit(1);
}
process.stdout.write(`nats-server ${NATS_SERVER_VERSION} ${server}\n`);
