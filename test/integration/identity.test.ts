/**
 * Identity against Buckley (the double in test/helpers/coordinators.ts does what the real one
 * was seen doing: sessions keyed by agent id; over mutual TLS the caller is its certificate's CN,
 * which must be the agent_id, else PERMISSION_DENIED).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { startFakeBuckley, type FakeBuckley, type FakeBuckleyOptions } from '../helpers/coordinators.js';
import { startingClients } from '../helpers/lspClient.js';

const start = startingClients();
const doubles: FakeBuckley[] = [];
afterEach(async () => {
  await Promise.all(doubles.splice(0).map((buckley) => buckley.stop()));
});
async function buckley(options: FakeBuckleyOptions = {}): Promise<FakeBuckley> {
  const started = await startFakeBuckley(options);
  doubles.push(started);
  return started;
}

let certs: TestCerts;
beforeAll(() => {
  certs = makeCerts('alice');
});

const overTls = (address: string, coordinator: Record<string, unknown> = {}) => ({
  env: { BUCKLEY_AGENT: undefined },
  initialize: { initializationOptions: { coordinator: { address, tls: { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey, serverName: 'localhost' }, ...coordinator } } },
});

describe('identity', () => {
  it('gives two editors on one Buckley their own agent ids, so they never share a Buckley session', async () => {
    const shared = await buckley();
    const first = await start({ env: { BUCKLEY_COORDINATOR: shared.address } });
    const second = await start({ env: { BUCKLEY_COORDINATOR: shared.address } });
    const [a, b] = await Promise.all(
      [first, second].map(async (client) => {
        await client.request('buckley/ask', { question: 'Hello?' });
        return (await client.request('buckley/status', {})).coordinator;
      }),
    );
    expect(a.agentId).toMatch(/^buckley-lsp-[0-9a-f]{8}$/);
    expect(b.agentId).toMatch(/^buckley-lsp-[0-9a-f]{8}$/);
    expect(a.agentId).not.toBe(b.agentId);
    expect(a.agentIdSource).toBe('instance');
  });

  it("acts as its client certificate's name by default, which Buckley over mutual TLS accepts", async () => {
    const secure = await buckley({ tls: certs });
    const client = await start(overTls(secure.address));
    expect((await client.request('buckley/ask', { question: 'Who am I?' })).answer).toBeTruthy();
    const sent = await secure.waitFor('SendMessage');
    expect(sent.request.agent_id).toBe('alice');
    expect((await client.request('buckley/status', {})).coordinator).toMatchObject({ state: 'ready', agentId: 'alice', agentIdSource: 'certificate' });
  });

  it('reports an agent id Buckley refuses as the configuration error it is, naming both names and the key, and does not retry', async () => {
    const secure = await buckley({ tls: certs });
    const client = await start(overTls(secure.address, { agentId: 'buckley-lsp' }));
    const said = await client.waitFor('window/showMessage', (p) => p.type <= 2);
    expect(said.message).toBe('agent id refused: see buckley.coordinator.agentId (see log)');
    const status = (await client.request('buckley/status', {})).coordinator;
    expect(status.state).toBe('unavailable');
    expect(status.error).toContain('refused buckley-lsp\'s identity (agent mismatch: peer alice cannot act as buckley-lsp)');
    expect(status.error).toContain('buckley-lsp acts as agent id "buckley-lsp" (buckley.coordinator.agentId); its client certificate (buckley.coordinator.tls.cert) names "alice"');
    expect(status.error).toContain('unset buckley.coordinator.agentId, so that the certificate\'s name is used, or set it to "alice"');
    expect(status.error).not.toMatch(/unreachable|cannot reach/);
    await client.waitFor('window/logMessage', (p) => p.message.endsWith('(no retries: change the settings)'));

    // An ask fails at once with the same words, without calling the coordinator again.
    const calls = secure.calls.length;
    await expect(client.request('buckley/ask', { question: 'again?' })).rejects.toMatchObject({ message: expect.stringContaining('unset buckley.coordinator.agentId'), data: { summary: 'agent id refused: see buckley.coordinator.agentId' } });
    expect(secure.calls.length).toBe(calls);

    // Changing the setting mends it.
    await client.notify('workspace/didChangeConfiguration', { settings: { buckley: { coordinator: { agentId: 'alice' } } } });
    await client.waitFor('window/logMessage', (p) => p.message.includes('coordinator or agent settings changed'));
    expect((await client.request('buckley/ask', { question: 'Now?' })).answer).toBeTruthy();
  });

  it('notices a restarted Buckley by its broken connection (Buckley never says NOT_FOUND for a session) and makes its session anew', async () => {
    const first = await buckley();
    const client = await start({ env: { BUCKLEY_COORDINATOR: first.address } });
    await client.request('buckley/ask', { question: 'Hello?' });
    const broke = client.waitFor('window/logMessage', (p) => p.message.includes(`the connection to the coordinator at ${first.address} broke`));
    await first.stop();
    doubles.splice(doubles.indexOf(first), 1);
    await broke;
    const again = await buckley({ port: Number(first.address.split(':')[1]) });
    await client.request('buckley/ask', { question: 'Still there?' });
    // The new process was asked for a session before the message: nothing of the old one is assumed.
    expect(again.calls.map((call) => call.method).filter((method) => method !== 'UpdateSessionContext')).toEqual(['GetServerCapabilities', 'CreateSession', 'SendMessage']);
  });
});
