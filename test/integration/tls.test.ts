/**
 * Remote coordinators, securely: our coordinator serving mutual TLS with certificates made at
 * test time; the bridge connecting with a good client certificate, none, one from another CA and
 * an expired one; plaintext refused to non-loopback addresses and on non-loopback listeners.
 */
import { spawnSync } from 'node:child_process';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { startCoordinatorProcess, type CoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients } from '../helpers/lspClient.js';
import { BIN, SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();
const running: CoordinatorProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

let certs: TestCerts;
beforeAll(() => {
  certs = makeCerts();
});

async function mtlsCoordinator(): Promise<CoordinatorProcess> {
  const coordinator = await startCoordinatorProcess([
    '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey, '--tls-client-ca', certs.ca,
    '--agent', process.execPath, SCRIPTED_AGENT,
  ]);
  running.push(coordinator);
  return coordinator;
}

const remote = (address: string, tls: Record<string, string>) => ({
  env: { BUCKLEY_AGENT: undefined },
  initialize: { initializationOptions: { coordinator: { address, tls, callTimeoutMs: 3000 } } },
});

describe('TLS', () => {
  it('asks through a coordinator that requires mutual TLS, with a good client certificate', async () => {
    const coordinator = await mtlsCoordinator();
    const client = await start(remote(coordinator.address, { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey }));
    const result = await client.request('buckley/ask', { question: 'Secure?' });
    expect(result.answer).toContain('You asked: Secure?');
    const status = await client.request('buckley/status', {});
    expect(status.coordinator).toMatchObject({ state: 'ready', mode: 'remote' });
  });

  it.each([
    ['no client certificate', () => ({ ca: certs.ca })],
    ['a client certificate from another CA', () => ({ ca: certs.ca, cert: certs.strangerCert, key: certs.strangerKey })],
    ['an expired client certificate', () => ({ ca: certs.ca, cert: certs.expiredCert, key: certs.expiredKey })],
  ])('is refused with %s, and says so', async (_name, tls) => {
    const coordinator = await mtlsCoordinator();
    const client = await start(remote(coordinator.address, tls()));
    await client.waitFor('window/showMessage', (p) => p.type === 2 && /^(TLS with|cannot reach) 127\.0\.0\.1:\d+/.test(p.message));
    const status = await client.request('buckley/status', {});
    expect(status.coordinator.state).toBe('unavailable');
    // grpc-js does not always say that the handshake failed; the message names both causes.
    expect(status.coordinator.error).toMatch(new RegExp(`(the TLS handshake with the coordinator at|cannot reach the coordinator at) ${coordinator.address.replace(/\./g, '\\.')}`));
    expect(status.coordinator.error).toContain('check buckley.coordinator.tls: ca must sign the coordinator\'s certificate, and cert + key must be a client certificate it accepts');
  });

  it('refuses plaintext to a coordinator that is not on loopback, before connecting', async () => {
    const client = await start({ env: { BUCKLEY_AGENT: undefined, BUCKLEY_COORDINATOR: 'buckley.invalid:50051' } });
    await client.waitFor('window/showMessage', (p) => p.type === 2);
    const status = await client.request('buckley/status', {});
    expect(status.coordinator.error).toBe(
      'refusing to talk to the coordinator at buckley.invalid:50051 without TLS: plaintext is only allowed to loopback addresses. Set buckley.coordinator.tls.ca (and tls.cert + tls.key for mutual TLS, as Buckley requires) to the PEM files.',
    );
  });

  it('will not listen in plaintext, or without client certificates, on a non-loopback address', () => {
    const plain = spawnSync(process.execPath, [BIN, 'coordinator', '--listen', '0.0.0.0:0'], { encoding: 'utf8' });
    expect(plain.status).toBe(1);
    expect(plain.stderr).toContain('refusing to listen on 0.0.0.0:0 without TLS');
    const noClientCa = spawnSync(process.execPath, [BIN, 'coordinator', '--listen', '0.0.0.0:0', '--tls-cert', certs.serverCert, '--tls-key', certs.serverKey], { encoding: 'utf8' });
    expect(noClientCa.status).toBe(1);
    expect(noClientCa.stderr).toContain('needs mutual TLS (--tls-client-ca)');
  });
});
