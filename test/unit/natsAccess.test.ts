import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { natsAccessOf, redact } from '../../src/coordinator/tasks/natsAccess.js';
import { credentialByName, credentialPlaces } from '../../src/risk/paths.js';
import { tempDir } from '../helpers/temp.js';

describe("a replica's login to NATS", () => {
  it('takes a user and password, or a token, from the URLs, and gives the servers back without them', () => {
    expect(natsAccessOf(['nats://team:p%40ss@a:4222', 'nats://team:p%40ss@b:4222'], {})).toEqual({ servers: ['nats://a:4222', 'nats://b:4222'], auth: { user: 'team', pass: 'p@ss' }, how: 'as user team' });
    expect(natsAccessOf(['nats://s3cr3t@a:4222'], {})).toEqual({ servers: ['nats://a:4222'], auth: { token: 's3cr3t' }, how: 'with a token' });
    expect(natsAccessOf(['a:4222'], {})).toEqual({ servers: ['a:4222'], auth: {}, how: 'without credentials' });
  });

  it("takes the nats CLI's variables where the URLs carry none; the URLs' win", () => {
    expect(natsAccessOf(['nats://a:4222'], { NATS_USER: 'team', NATS_PASSWORD: 'pw' })).toMatchObject({ auth: { user: 'team', pass: 'pw' } });
    expect(natsAccessOf(['nats://a:4222'], { NATS_TOKEN: 't' })).toMatchObject({ auth: { token: 't' }, how: 'with a token' });
    expect(natsAccessOf(['nats://u:p@a:4222'], { NATS_TOKEN: 't' })).toMatchObject({ auth: { user: 'u', pass: 'p' } });
  });

  it('speaks TLS for a tls:// URL or a CA or client certificate given, with the files it reads', () => {
    const dir = tempDir('nats-access');
    const [ca, cert, key, creds] = ['ca.pem', 'cert.pem', 'key.pem', 'team.creds'].map((name) => join(dir, name));
    for (const file of [ca, cert, key, creds]) writeFileSync(file!, 'x');
    expect(natsAccessOf(['tls://a:4222'], {})).toEqual({ servers: ['tls://a:4222'], auth: { tls: {} }, how: 'without credentials, over TLS' });
    expect(natsAccessOf(['nats://a:4222'], { NATS_CA: ca, NATS_CERT: cert, NATS_KEY: key }, creds)).toEqual({ servers: ['nats://a:4222'], auth: { credsFile: creds, tls: { caFile: ca, certFile: cert, keyFile: key } }, how: `with the credentials in ${creds}, over TLS` });
    expect(natsAccessOf(['nats://a:4222'], { NATS_CREDS: creds })).toMatchObject({ auth: { credsFile: creds } });
  });

  it('says what is wrong: credentials that differ between servers, a certificate without its key, a file it cannot read — never the password', () => {
    expect(natsAccessOf(['nats://u:one@a:4222', 'nats://u:two@b:4222'], {})).toEqual({ problem: expect.stringContaining('the --nats URLs carry different credentials') });
    expect(natsAccessOf(['nats://a:4222'], { NATS_CERT: '/x/cert.pem' })).toEqual({ problem: 'NATS_CERT and NATS_KEY go together (a client certificate and its key): give both, or neither' });
    expect(natsAccessOf(['nats://a:4222'], { NATS_CA: '/nowhere/ca.pem' })).toEqual({ problem: 'NATS_CA /nowhere/ca.pem cannot be read (ENOENT)' });
    const bad = natsAccessOf(['nats://u:hunter2@a:4222:x'], {});
    expect(bad).toEqual({ problem: '--nats: nats://…@a:4222:x is not a URL' });
    expect(redact('nats://u:hunter2@a:4222')).toBe('nats://…@a:4222');
  });

  it("keeps NATS's key files from agents: .creds and .nk files anywhere, nsc's keys and the nats CLI's contexts", () => {
    expect(credentialByName('team.creds')).toBe('NATS credentials');
    expect(credentialByName('user.nk')).toBe('NATS credentials');
    const places = credentialPlaces('/home/u').map((place) => place.path);
    expect(places).toEqual(expect.arrayContaining(['/home/u/.local/share/nats/nsc', '/home/u/.config/nats', '/home/u/.nkeys']));
  });
});
