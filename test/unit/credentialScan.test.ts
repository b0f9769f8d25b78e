/**
 * The workspace's credential files, looked for before each turn (src/coordinator/credentialScan.ts):
 * found by what they hold, anywhere in the user's files — not in the folders other people's
 * packages, caches and toolchains are installed in (their test keys and CA bundles), nor in
 * version control.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CredentialScan } from '../../src/coordinator/credentialScan.js';
import { tempDir } from '../helpers/temp.js';

describe("the workspace's credential files", () => {
  it("are the user's: not those of packages, caches and toolchains, nor code named for secrets", () => {
    const root = tempDir('buckley-scan');
    const files = [
      '.env',
      'deploy/prod.tfvars',
      'certs/server.key',
      'src/secrets.ts',
      'node_modules/x/test/key.pem',
      '.venv/lib/python3.12/site-packages/certifi/cacert.pem',
      'vendor/golang.org/x/crypto/testdata/rsa.key',
      '.cache/pip/cert.pem',
      '.pyenv/versions/3.12.1/lib/python3.12/test/keycert.pem',
      '.cargo/registry/src/index/rustls/tests/ca.pem',
      '.git/info/secrets',
    ];
    for (const file of files) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), 'x');
    }
    expect(new CredentialScan(root).find()).toEqual({ paths: ['.env', 'certs/server.key', 'deploy/prod.tfvars'].map((file) => join(root, file)).sort(), complete: true });
  });
});
