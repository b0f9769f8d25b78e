/**
 * The installs the README gives, as a user does them from a checkout (into prefixes of the
 * test's own): `npm pack` and a global install of the tarball, and `npm install -g .`; then the
 * installed command: `--version`, `doctor`, and an LSP session over stdio.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/lspClient.js';
import { REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const version = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version;
let command: string;
let prefix: string;

beforeAll(() => {
  const packed = tempDir('buckley-pack');
  prefix = tempDir('buckley-prefix');
  // dist/ is built by `npm test` before the tests: packing must not rebuild it under the other tests.
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', packed], { cwd: REPO, encoding: 'utf8' }).trim().split('\n').at(-1)!;
  execFileSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--silent', join(packed, tarball)], { cwd: packed });
  command = join(prefix, 'bin', 'buckley-lsp');
}, 120_000);

describe('installed from the packed tarball', () => {
  it('says its version', () => {
    expect(execFileSync(command, ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
  });

  it('runs doctor, which finds the agent and says all is well', () => {
    const doctor = spawnSync(command, ['doctor'], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: prefix, BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` } });
    expect({ status: doctor.status, stderr: doctor.stderr }).toEqual({ status: 0, stderr: '' });
    expect(doctor.stdout).toContain('answered ACP initialize');
    expect(doctor.stdout).not.toContain('FAIL');
  });

  it('serves an editor over stdio', async () => {
    const client = await TestClient.start({ command: [command] });
    expect(client.initializeResult.serverInfo).toEqual({ name: 'buckley-lsp', version });
    expect((await client.request('buckley/ask', { question: 'INSTANT from the installed command' })).answer).toBe('ok');
    expect(await client.shutdown()).toBe(0);
  });
});

it('installs from the checkout itself (npm install -g .) as a command that runs', () => {
  const linked = tempDir('buckley-prefix');
  execFileSync('npm', ['install', '--global', '--prefix', linked, '--no-audit', '--no-fund', '--silent', '.'], { cwd: REPO });
  expect(execFileSync(join(linked, 'bin', 'buckley-lsp'), ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
});
