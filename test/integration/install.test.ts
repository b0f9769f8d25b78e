/**
 * The installs the README gives, run as they are written there (the README's `install`,
 * `install-from-checkout`, `doctor` and `doctor-settings` blocks), in a copy of the checkout and
 * into prefixes of the test's own (`npm_config_prefix`, as `npm install -g` honours it); then
 * the installed command serves an editor over stdio.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TestClient } from '../helpers/lspClient.js';
import { REPO } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';

const version = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a README block (or one line of it) with `sh -e`, as a user pastes it into a shell. */
function shell(script: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  const child = spawn('sh', ['-ec', script], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, stdout, stderr })));
}

/** The checkout as a user has it: its files (tracked or not ignored), without node_modules or builds. */
function copyOfCheckout(): string {
  const copy = tempDir('buckley-checkout');
  let files: string[];
  try {
    files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' }).split('\0').filter(Boolean);
  } catch {
    files = [];
  }
  if (files.length > 0) {
    for (const file of files) cpSync(join(REPO, file), join(copy, file), { recursive: false });
  } else {
    const skipped = /^(node_modules|dist|\.editors|\.git|zed-extension\/target|bench\/results|bench\/profiles)(\/|$)/;
    cpSync(REPO, copy, { recursive: true, filter: (source) => !skipped.test(source.slice(REPO.length)) });
  }
  return copy;
}

/** npm as in a user's shell, its global installs going to `prefix`, quiet and from the cache where it can. */
function userEnv(prefix: string, home: string): NodeJS.ProcessEnv {
  return {
    PATH: `${join(prefix, 'bin')}:${userPath()}`,
    HOME: home,
    XDG_STATE_HOME: join(home, '.local', 'state'),
    npm_config_prefix: prefix,
    npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? home, '.npm'),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    npm_config_loglevel: 'error',
    // The certificates the user's machine trusts (a company's proxy signs the registry's).
    ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
  };
}

let checkout: string;
let packedPrefix: string;
let home: string;

beforeAll(async () => {
  checkout = copyOfCheckout();
  packedPrefix = tempDir('buckley-prefix');
  home = tempDir('buckley-home');
  const run = await shell(readmeSnippet('install'), { cwd: checkout, env: userEnv(packedPrefix, home) });
  expect(run, run.stderr).toMatchObject({ status: 0 });
  // The block's last command, `buckley-lsp --version`, printed the version.
  expect(run.stdout.trim().split('\n').at(-1)).toBe(version);
}, 300_000);

describe("the README's install, from the packed tarball", () => {
  it("doctor without an agent says how to set one; with the README's agent all is well", async () => {
    const [bare, withAgent] = readmeSnippet('doctor')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => line.replace(/\s+#.*$/, ''));
    const env = userEnv(packedPrefix, home);
    // (A machine with `buckley` on PATH or an Ollama server would find that agent instead.)
    const first = await shell(bare!, { cwd: home, env });
    expect(first.stdout).toContain('FAIL  No agent found');
    expect(first.stdout).toContain('Set buckley.agent.command');
    expect(first.status).toBe(1);
    const second = await shell(withAgent!, { cwd: home, env });
    expect(second).toMatchObject({ status: 0, stderr: '' });
    expect(second.stdout).toContain('answered ACP initialize');
    expect(second.stdout).not.toContain('FAIL');
  });

  it("doctor checks the settings file the Commands section writes", async () => {
    const run = await shell(readmeSnippet('doctor-settings'), { cwd: tempDir('buckley-cwd'), env: userEnv(packedPrefix, home) });
    expect(run).toMatchObject({ status: 0, stderr: '' });
    expect(run.stdout).toContain('settings from environment, command line, buckley.json are valid');
    expect(run.stdout).toContain('answered ACP initialize');
  });

  it('serves an editor over stdio', async () => {
    const client = await TestClient.start({ command: [join(packedPrefix, 'bin', 'buckley-lsp')] });
    expect(client.initializeResult.serverInfo).toEqual({ name: 'buckley-lsp', version });
    expect((await client.request('buckley/ask', { question: 'INSTANT from the installed command' })).answer).toBe('ok');
    expect(await client.shutdown()).toBe(0);
  });
});

it("installs from the checkout itself, as the README's install-from-checkout says", async () => {
  const linkedPrefix = tempDir('buckley-prefix');
  const run = await shell(readmeSnippet('install-from-checkout'), { cwd: checkout, env: userEnv(linkedPrefix, home) });
  expect(run, run.stderr).toMatchObject({ status: 0 });
  expect(run.stdout.trim().split('\n').at(-1)).toBe(version);
}, 300_000);
