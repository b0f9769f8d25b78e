/**
 * A team's replica logging in to a NATS that asks who it is, as NATS's own tools do: a user and
 * password in the URL or in NATS_USER and NATS_PASSWORD, TLS with the team's CA (NATS_CA). With
 * exactly the permissions the docs name, a task runs end to end (a big answer through the object
 * store too); the password is never in its log nor in its agent's environment. Refused — wrong
 * password, none given, a user without the permissions, TLS it cannot verify — the replica
 * stops at once saying which server and what to do; a NATS without JetStream is said within
 * seconds. A piece of a task NATS refuses to store (a permission missing, its store full) fails
 * the task at once, in words.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CoordinatorClient } from '../../src/wire/client.js';
import { taskEventSchema, type TaskEvent } from '../../src/wire/contract.js';
import { makeCerts } from '../helpers/certs.js';
import { startReplica, type CoordinatorProcess } from '../helpers/coordinators.js';
import { requireNats, startNats, stopAllNats } from '../helpers/nats.js';
import { collect, session } from '../helpers/team.js';

const nats = requireNats();
afterAll(stopAllNats);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a replica needs, as docs/team.md names it. */
const REPLICA_SUBJECTS = '["buckley.>", "$JS.API.>", "$JS.ACK.>", "$KV.buckley_tasks.>", "$KV.buckley_replicas.>", "$O.buckley_blobs.>", "_INBOX.>"]';
const USERS = `authorization { users = [
  { user: "team", password: "s3cret-pw", permissions: { publish: ${REPLICA_SUBJECTS}, subscribe: ${REPLICA_SUBJECTS} } },
  { user: "meek", password: "meek-pw", permissions: { publish: ["buckley.>"], subscribe: ["_INBOX.>"] } },
  { user: "nonames", password: "nn-pw", permissions: { publish: ${REPLICA_SUBJECTS.replace(', "$KV.buckley_replicas.>"', '')}, subscribe: ${REPLICA_SUBJECTS} } },
  { user: "noblobs", password: "nb-pw", permissions: { publish: ${REPLICA_SUBJECTS.replace(', "$O.buckley_blobs.>"', '')}, subscribe: ${REPLICA_SUBJECTS} } }
] }`;

async function replica(url: string, env: NodeJS.ProcessEnv = {}): Promise<CoordinatorProcess> {
  const started = await startReplica(url, 'one', 4, { env });
  cleanups.push(() => started.stop());
  return started;
}

/** Why a replica would not start: its last words. */
const refusal = (url: string, env: NodeJS.ProcessEnv = {}, deadlineMs?: number) => startReplica(url, 'one', 4, { env, deadlineMs }).then(
  (started) => (cleanups.push(() => started.stop()), 'started'),
  (error: Error) => error.message,
);

async function task(address: string, query: string): Promise<TaskEvent[]> {
  const alice = new CoordinatorClient({ address, agentId: 'alice' });
  cleanups.push(() => alice.close());
  const metadata = await session(alice, 'alice');
  return collect(alice.stream('StreamTask', { task_id: `login-${Date.now()}-${Math.random().toString(36).slice(2)}`, agent_id: 'alice', query }, taskEventSchema, { timeoutMs: 60_000, metadata }));
}

describe.runIf(nats)("a team's replica on a NATS that asks who it is", () => {
  it('logs in as the user its URL or NATS_USER and NATS_PASSWORD name, with the permissions the docs give, and keeps the password out of its log and its agent', async () => {
    const server = await startNats(USERS);
    const port = server.url.split(':').at(-1);
    const one = await replica(`nats://team:s3cret-pw@127.0.0.1:${port}`);
    // One piece of 1 MB: a message too big for NATS, kept in the object store.
    const big = await task(one.address, 'HUGE UPDATE 1');
    expect(big.at(-1)).toMatchObject({ status: 'completed' });
    expect(big.map((event) => event.answer_delta).join('').length).toBeGreaterThan(1_000_000);
    expect(one.said()).toContain(`replica one of the team on NATS nats://127.0.0.1:${port} (as user team)`);
    expect(one.said()).not.toContain('s3cret-pw');
    await one.stop();

    const two = await replica(server.url, { NATS_USER: 'team', NATS_PASSWORD: 's3cret-pw' });
    const env = await task(two.address, 'ENV NATS_PASSWORD');
    expect(env.at(-1)).toMatchObject({ status: 'completed' });
    expect(env.map((event) => event.answer_delta).join('')).toContain('NATS_PASSWORD unset');
    expect(two.said()).not.toContain('s3cret-pw');
  });

  it('fails a task, in words, whose piece NATS refused to store (a permission missing) — never completed with a hole in its story', async () => {
    const server = await startNats(USERS);
    const one = await replica(server.url, { NATS_USER: 'noblobs', NATS_PASSWORD: 'nb-pw' });
    // Its last piece refused while the turn ended.
    const events = await task(one.address, 'HUGE UPDATE 1');
    expect(events.at(-1)).toMatchObject({ status: 'failed', message: expect.stringMatching(/^the team's store did not take this task's progress \(Permissions Violation for Publish to "\$O\.buckley_blobs\.C\.[^"]+"\), so it was stopped: run it again$/) });
    expect(events.filter((event) => ['completed', 'failed', 'cancelled'].includes(event.status))).toHaveLength(1);
  });

  it('fails a task whose piece a full store refused at once, saying the store is full and what to do — not after waiting minutes as if NATS were away', async () => {
    const server = await startNats('jetstream { max_file_store: 3MB }');
    const one = await replica(server.url);
    expect((await task(one.address, 'HUGE UPDATE 2')).at(-1)).toMatchObject({ status: 'completed' });
    // Failed at once: within the call's deadline, not after NATS were waited for as if away.
    const full = await task(one.address, 'HUGE UPDATE 2');
    expect(full.at(-1)).toMatchObject({
      status: 'failed',
      message: `the team's store (NATS at ${server.url}) is full (insufficient resources): make room on the NATS servers (JetStream's max_file_store, the account's limits); so this task was stopped: run it again`,
    });
    expect(full.filter((event) => /cannot be reached/.test(event.message))).toEqual([]);
    // What fits still goes.
    expect((await task(one.address, 'INSTANT')).at(-1)).toMatchObject({ status: 'completed' });
  });

  it('stops at once, saying which server and what to do, when NATS refuses it', async () => {
    const server = await startNats(USERS);
    const port = server.url.split(':').at(-1);
    const hint = 'nats://USER:PASSWORD@host:port in --nats, NATS_USER and NATS_PASSWORD, NATS_TOKEN, or --nats-creds FILE';
    expect(await refusal(`nats://team:wrong@127.0.0.1:${port}`)).toContain(`NATS at nats://127.0.0.1:${port} did not accept this replica's credentials (Authorization Violation): check them — ${hint}`);
    expect(await refusal(server.url)).toContain(`NATS at nats://127.0.0.1:${port} asks for this replica's credentials (Authorization Violation): give them — ${hint}`);
    expect(await refusal(server.url, { NATS_USER: 'meek', NATS_PASSWORD: 'meek-pw' })).toContain(`NATS at nats://127.0.0.1:${port} does not let this replica's user do what a replica does (Permissions Violation for Publish to "$JS.API.INFO"): allow it to publish and subscribe on buckley.>, $JS.API.>`);
    // Allowed all but to hold its name: said as well, not asked again for ever.
    expect(await refusal(server.url, { NATS_USER: 'nonames', NATS_PASSWORD: 'nn-pw' })).toMatch(/does not let this replica's user do what a replica does \(Permissions Violation for Publish to "\$KV\.buckley_replicas\.[^"]+"\): allow it to publish and subscribe on .*\$KV\.buckley_replicas\.>/);
    expect(await refusal(server.url, { NATS_USER: 'team', NATS_CERT: '/nowhere/cert.pem' })).toContain('NATS_CERT and NATS_KEY go together');
    expect(await refusal(server.url, { NATS_CREDS: '/nowhere/team.creds' })).toContain('the NATS credentials file /nowhere/team.creds cannot be read (ENOENT)');
  });

  it('stops within seconds, saying so, on a NATS without JetStream — not after the half minute a cluster electing its leader is given', async () => {
    const server = await startNats(undefined, false);
    // Its start has half the time a cluster's election is given: it stops, saying why, before that.
    expect(await refusal(server.url, {}, 15_000)).toContain(`JetStream is not enabled on NATS at ${server.url}: start nats-server with --jetstream (or jetstream {} in its configuration)`);
  });

  it("speaks TLS where the server asks for it, trusting the team's CA (NATS_CA); without it, says the certificate is not trusted", async () => {
    const certs = makeCerts();
    const server = await startNats(`tls { cert_file: "${certs.serverCert}", key_file: "${certs.serverKey}" }`);
    const tlsUrl = server.url.replace('nats://', 'tls://');
    const one = await replica(tlsUrl, { NATS_CA: certs.ca });
    expect((await task(one.address, 'INSTANT')).at(-1)).toMatchObject({ status: 'completed' });
    expect(one.said()).toContain(`(without credentials, over TLS)`);
    expect(await refusal(tlsUrl)).toMatch(/NATS at tls:\/\/127\.0\.0\.1:\d+: unable to verify the first certificate — its certificate is not one this replica trusts: give the CA that signed it with NATS_CA \(a PEM file\)/);
    // Told TLS, a server without it is not spoken to in the clear.
    const plain = await startNats();
    expect(await refusal(plain.url.replace('nats://', 'tls://'), { NATS_USER: 'team', NATS_PASSWORD: 's3cret-pw' })).toMatch(/NATS at tls:\/\/127\.0\.0\.1:\d+: server does not support 'tls' — a tls:\/\/ URL, NATS_CA, NATS_CERT and NATS_KEY must match how the server is set up/);
  });
});
