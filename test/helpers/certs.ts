/** Certificates for TLS tests, made at test time with Debian's openssl. */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './temp.js';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** Signed by a CA the coordinator does not trust. */
  strangerCert: string;
  strangerKey: string;
  /** Signed by the right CA, but expired yesterday. */
  expiredCert: string;
  expiredKey: string;
}

export function makeCerts(clientName = 'buckley-lsp'): TestCerts {
  const dir = tempDir('buckley-tls');
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ca = (name: string) => openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`), '-days', '2', '-subj', `/CN=${name}`);
  const leaf = (name: string, cn: string, signer: string, days: string, ext?: string) => {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`);
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${signer}.pem`), '-CAkey', file(`${signer}.key`), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', days, ...(ext ? ['-extfile', ext] : []));
  };
  ca('ca');
  ca('other-ca');
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  leaf('server', 'localhost', 'ca', '2', file('server.ext'));
  leaf('client', clientName, 'ca', '2');
  leaf('stranger', clientName, 'other-ca', '2');
  leaf('expired', clientName, 'ca', '-1');
  return {
    dir,
    ca: file('ca.pem'),
    serverCert: file('server.pem'),
    serverKey: file('server.key'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
    strangerCert: file('stranger.pem'),
    strangerKey: file('stranger.key'),
    expiredCert: file('expired.pem'),
    expiredKey: file('expired.key'),
  };
}
