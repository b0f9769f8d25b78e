/**
 * `buckley-lsp doctor` as a user runs it: each problem is named with its key and what to do, and
 * a check that cannot pass says why in its own words (a host that does not resolve, a file that
 * is not PEM, an agent's own error line) — not the advice for another problem.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { completionServer } from '../helpers/openai.js';
import { startFakeBuckley, type FakeBuckley } from '../helpers/coordinators.js';
import { BIN, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { userPath } from '../helpers/readme.js';

interface Run {
  status: number | null;
  lines: string[];
  failures: string[];
}

/** Runs doctor without blocking this process: the coordinator it checks may be in this process. */
async function doctor(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'doctor', ...args], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(stderr).toBe('');
  const lines = stdout.split('\n').filter(Boolean);
  return { status, lines, failures: lines.filter((line) => line.startsWith('  FAIL')).map((line) => line.slice('  FAIL  '.length)) };
}

function settingsFile(settings: unknown): string {
  const file = join(tempDir('buckley-doctor-settings'), 'settings.json');
  writeFileSync(file, JSON.stringify(settings));
  return file;
}

const agent = `${process.execPath} ${SCRIPTED_AGENT}`;
let dir: string;
let certs: TestCerts;
let buckley: FakeBuckley;

beforeAll(async () => {
  dir = tempDir('buckley-doctor');
  certs = makeCerts('alice');
  buckley = await startFakeBuckley();
});
afterAll(() => buckley.stop());

describe('doctor', () => {
  it('says all is well, with exit code 0, for an agent that speaks ACP', async () => {
    const run = await doctor([], { BUCKLEY_AGENT: agent });
    expect(run).toMatchObject({ status: 0, failures: [] });
    expect(run.lines.join('\n')).toContain('answered ACP initialize');
  });

  it('says what the agent offers: its models (and the one it uses, and why), its commands (once it has sent them: with --prompt)', async () => {
    const run = await doctor(['--agent.model', 'Deep Thought', '--prompt'], { BUCKLEY_AGENT: `${agent} --controls` });
    expect(run).toMatchObject({ status: 0, failures: [] });
    expect(run.lines).toContain('        models: swift (Swift), deep (Deep Thought) — uses deep (buckley.agent.model); "Buckley: choose model" or buckley.agent.model picks another');
    expect(run.lines).toContain('        commands: /review /init');
    // An agent that offers none: nothing said of them.
    expect((await doctor([], { BUCKLEY_AGENT: agent })).lines.join('\n')).not.toMatch(/models:|commands:|modes:/);
    // Its modes: those asks and tasks run in, and why; a mode wanted that runs tools unasked is not one.
    const modes = await doctor(['--agent.mode', 'yolo'], { BUCKLEY_AGENT: `${agent} --modes` });
    expect(modes.lines).toContain(
      '        modes: default (Ask first), plan (Plan), yolo (YOLO) — asks run in plan, tasks in default ("yolo" (buckley.agent.mode) runs tools unasked: the mode that reads as asking first); "Buckley: choose mode" or buckley.agent.mode picks another of default, plan',
    );
  });

  it('says the agent runs in a sandbox, or why asks are not read-only without one; with --prompt, asks it a real question', async () => {
    const sandboxed = await doctor(['--prompt'], { BUCKLEY_AGENT: agent });
    expect(sandboxed).toMatchObject({ status: 0, failures: [] });
    expect(sandboxed.lines).toContainEqual(expect.stringMatching(/^ {2}ok {4}ACP agent `.*` is running \(pid \d+\), answered ACP initialize and opened a session, in an ask's sandbox and in a task's \(bubblewrap\)$/));
    expect(sandboxed.lines).toContain('  ok    the sandbox (bubblewrap): asks write nothing of yours, tasks only the workspace, credentials are unreadable');
    expect(sandboxed.lines.find((line) => line.includes('answered a question:'))).toMatch(/^ {2}ok {4}scripted-agent\.mjs answered a question: "You asked: Reply with one short sentence: are you there\?/);
    const bare = await doctor(['--agent.sandbox.enabled', 'false'], { BUCKLEY_AGENT: agent });
    expect(bare.lines).toContain(
      '  WARN  asks are not read-only here: the agent runs without a sandbox — the sandbox is turned off (buckley.agent.sandbox.enabled: false). While answering a question the agent may edit files or run commands without asking you. Set buckley.ask.requireReadOnly to true to refuse asks.',
    );
  });

  it("runs the agent in its sandbox, as an ask's and a task's: what it could not write is said with the setting; the secrets kept back and the network, by name", async () => {
    const refused = await doctor([], { BUCKLEY_AGENT: `${agent} --home-state`, GITHUB_TOKEN: 'ghp-value' });
    expect(refused.status).toBe(1);
    expect(refused.failures).toEqual([
      `scripted-agent.mjs could not write ~/.scripted-agent/sessions: buckley-lsp's sandbox keeps ~/.scripted-agent read-only for it. To let it write there, set buckley.agent.sandbox.writable: ["~/.scripted-agent"]`,
    ]);
    const allowed = await doctor(['--agent.sandbox.writable', '~/.scripted-agent', '--agent.sandbox.network.allow', 'api.example.com'], { BUCKLEY_AGENT: `${agent} --home-state`, GITHUB_TOKEN: 'ghp-value' });
    expect(allowed).toMatchObject({ status: 0, failures: [] });
    expect(allowed.lines).toContain("        the agent's environment keeps back 1 variable(s) that look like secrets: GITHUB_TOKEN (buckley.agent.passEnv passes one on)");
    expect(allowed.lines).toContain("        the agent's network is confined: it reaches api.example.com and buckley-lsp's editor tools, nothing else (tasks add: nothing)");
    expect(allowed.lines.join('\n')).not.toContain('ghp-value');
  });

  it("names the secret-looking variables its own settings name, and the cloud its model is reached through, as passed on", async () => {
    const home = tempDir('buckley-doctor-home');
    mkdirSync(join(home, '.gemini'));
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: { gh: { command: 'gh-mcp', env: { T: '$GITHUB_TOKEN' } } } }));
    // Named as Gemini CLI is: it is known by its program.
    const bin = tempDir('buckley-doctor-bin');
    writeFileSync(join(bin, 'gemini'), `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT}" "$@"\n`, { mode: 0o755 });
    const run = await doctor([], { HOME: home, PATH: `${bin}:${process.env.PATH}`, BUCKLEY_AGENT: 'gemini --acp', GITHUB_TOKEN: 'ghp-value', GOOGLE_GENAI_USE_VERTEXAI: 'true', GOOGLE_CLOUD_PROJECT: 'p' });
    expect(run).toMatchObject({ status: 0, failures: [] });
    expect(run.lines).toContain(`        the agent's environment keeps what looks like secrets but its own settings name: GITHUB_TOKEN (named in ${join(home, '.gemini', 'settings.json')})`);
    expect(run.lines.find((line) => line.includes('reaches its model through'))).toContain('Gemini CLI reaches its model through Google Vertex AI (GOOGLE_GENAI_USE_VERTEXAI): its login is shown to it');
    expect(run.lines.join('\n')).not.toContain('ghp-value');
  });

  it('says whether inline completions are available, and why not', async () => {
    const acp = await doctor([], { BUCKLEY_AGENT: agent });
    expect(acp.lines).toContainEqual(expect.stringMatching(/inline completions: none — ACP agent .* cannot complete code inline; a model can \(buckley\.agent\.driver "openai"\)/));
    const model = await completionServer({ ways: ['completions'], reply: () => '' });
    const withModel = await doctor(['--settings', settingsFile({ agent: { driver: 'openai', openai: { baseUrl: `${model.url}/v1`, model: 'coder' } } })]);
    expect(withModel).toMatchObject({ status: 0, failures: [] });
    expect(withModel.lines).toContainEqual(expect.stringContaining('inline completions: available from OpenAI-compatible model `coder`'));
    const off = await doctor(['--settings', settingsFile({ agent: { command: agent }, completions: { enabled: false } })]);
    expect(off.lines).toContainEqual(expect.stringContaining('inline completions: turned off (buckley.completions.enabled)'));
    // Buckley lists inline_completion.
    const remote = await doctor(['--settings', settingsFile({ coordinator: { address: buckley.address } })]);
    expect(remote.lines).toContainEqual(expect.stringContaining('inline completions: available (it lists inline_completion)'));
  });

  it('reads the settings file an editor sends, as initializationOptions or as its "buckley" section', async () => {
    for (const settings of [{ agent: { command: agent } }, { buckley: { agent: { command: agent } } }]) {
      const run = await doctor(['--settings', settingsFile(settings)]);
      expect(run).toMatchObject({ status: 0, failures: [] });
      expect(run.lines.join('\n')).toContain('answered ACP initialize');
    }
  });

  it("warns of a project here whose own settings file gives buckley-lsp where the code goes or what an agent may do, which the server leaves out", async () => {
    const project = tempDir('buckley-doctor-project');
    mkdirSync(join(project, '.zed'));
    writeFileSync(join(project, '.zed', 'settings.json'), JSON.stringify({ lsp: { 'buckley-lsp': { settings: { coordinator: { address: '127.0.0.1:9' } } } } }));
    const run = await doctor(['--agent.command', agent], {}, project);
    expect(run).toMatchObject({ status: 0, failures: [] });
    expect(run.lines).toContain(`  WARN  ${join(project, '.zed', 'settings.json')} sets coordinator: the server leaves out what a project's files say of where your code goes and what an agent may do — set those in your own settings`);
  });

  it('names a misspelt key with what was meant and a wrong type with the type expected, and does not then say to set the key', async () => {
    const file = settingsFile({ buckley: { agent: { comand: [agent] }, context: { maxBytes: 'lots' } } });
    const run = await doctor(['--settings', file]);
    expect(run.status).toBe(1);
    expect(run.failures).toEqual([
      `buckley.agent.comand (from ${file}): not a setting; did you mean buckley.agent.command?`,
      `buckley.context.maxBytes (from ${file}): expected a number, not a string ("lots")`,
    ]);
    expect(run.lines.join('\n')).not.toContain('Set buckley.agent.command');
  });

  it('with --acp, reads the settings as `buckley-lsp acp` does (its settings file) and says what each way to authenticate lacks', async () => {
    const config = tempDir('buckley-doctor-xdg');
    mkdirSync(join(config, 'buckley-lsp'), { recursive: true });
    const file = join(config, 'buckley-lsp', 'settings.json');
    writeFileSync(file, JSON.stringify({ agent: { command: ['gemini', '--acp'] } }));
    const run = await doctor(['--acp'], { PATH: userPath(), XDG_CONFIG_HOME: config });
    expect(run).toMatchObject({ status: 0, failures: [] });
    const said = run.lines.join('\n');
    expect(said).toContain(`settings from environment, command line, ${file} are valid`);
    expect(said).toContain('WARN  ACP authentication "Gemini CLI API key": GEMINI_API_KEY (or GOOGLE_API_KEY, GOOGLE_APPLICATION_CREDENTIALS) is not set');
    expect(said).toContain('ACP authentication "Gemini CLI login": the agent started above is the judge');
    // Without --acp, that file is not the editor's: not read.
    expect((await doctor([], { PATH: userPath(), XDG_CONFIG_HOME: config, BUCKLEY_AGENT: agent })).lines.join('\n')).not.toContain(file);
  });

  it('takes every setting as a flag too', async () => {
    const run = await doctor(['--agent.command', agent, '--context.maxBytes=20000']);
    expect(run).toMatchObject({ status: 0, failures: [] });
  });

  it('says what is wrong with a settings file that is not JSON', async () => {
    const file = join(tempDir('buckley-doctor-settings'), 'settings.json');
    writeFileSync(file, '{ agent: ');
    expect((await doctor(['--settings', file])).failures).toEqual([expect.stringMatching(new RegExp(`^the settings file ${file} is not JSON: `))]);
  });

  it('says a settings file that is a named pipe or a device is not a file, at once — never waiting on it, nor reading without end', async () => {
    const pipe = join(tempDir('buckley-doctor-pipe'), 'settings.json');
    execFileSync('mkfifo', [pipe]);
    expect((await doctor(['--settings', pipe])).failures).toEqual([`cannot read the settings file ${pipe}: it is a named pipe (FIFO), not a file`]);
    expect((await doctor(['--settings', '/dev/zero'])).failures).toEqual(['cannot read the settings file /dev/zero: it is a device, not a file']);
  });

  it('says the host of the coordinator address does not resolve, and nothing about TLS', async () => {
    const run = await doctor(['--coordinator', 'buckley.invalid:50051']);
    expect(run.failures).toEqual(["the coordinator's host buckley.invalid does not resolve: fix buckley.coordinator.address (or BUCKLEY_COORDINATOR)"]);
  });

  it('says nothing listens at an address with no coordinator, and how to start one', async () => {
    const run = await doctor(['--coordinator', '127.0.0.1:1']);
    expect(run.failures).toEqual([expect.stringMatching(/^nothing listens at 127\.0\.0\.1:1 \(from buckley\.coordinator\.address or BUCKLEY_COORDINATOR\): start it/)]);
  });

  it('finds a coordinator that answers, lists its features and accepts who buckley-lsp is', async () => {
    const run = await doctor(['--coordinator', buckley.address]);
    expect(run).toMatchObject({ status: 0, failures: [] });
    expect(run.lines.join('\n')).toContain(`the coordinator at ${buckley.address} answers`);
    expect(run.lines.join('\n')).toContain('stream_task');
    expect(run.lines.join('\n')).toMatch(/it accepts buckley-lsp as agent id "buckley-lsp-[0-9a-f]{8}" \(this run's own/);
    // What Buckley does with an ask: said as a warning (exit code 0) and notes.
    expect(run.lines).toContainEqual(expect.stringMatching(/^ {2}WARN {2}the coordinator at .* does not keep asks read-only .* Set buckley.ask.requireReadOnly to true to refuse asks there\.$/));
    expect(run.lines.join('\n')).toContain('it does not read the editor context (no editor_context): buckley-lsp puts the question, the file, its language and the selection in the message it reads');
  });

  it('says a coordinator over mutual TLS refuses an agent id that is not the certificate\'s name, and what to set', async () => {
    const secure = await startFakeBuckley({ tls: certs });
    try {
      const tls = { ca: certs.ca, cert: certs.clientCert, key: certs.clientKey, serverName: 'localhost' };
      const refused = await doctor(['--settings', settingsFile({ coordinator: { address: secure.address, agentId: 'buckley-lsp', tls } })]);
      expect(refused.failures).toEqual([expect.stringContaining('unset buckley.coordinator.agentId, so that the certificate\'s name is used, or set it to "alice"')]);
      const accepted = await doctor(['--settings', settingsFile({ coordinator: { address: secure.address, tls } })]);
      expect(accepted.failures).toEqual([]);
      expect(accepted.lines.join('\n')).toContain('it accepts buckley-lsp as agent id "alice" (the client certificate\'s name)');
    } finally {
      await secure.stop();
    }
  });

  describe('TLS files', () => {
    const tlsRun = (tls: Record<string, string>) => doctor(['--settings', settingsFile({ coordinator: { address: '127.0.0.1:1', tls } })]);

    it('checks good files and tells the client certificate name', async () => {
      const run = await tlsRun({ ca: certs.ca, cert: certs.clientCert, key: certs.clientKey });
      const text = run.lines.join('\n');
      expect(text).toContain(`ok    buckley.coordinator.tls.cert: ${certs.clientCert} (CN=alice; valid until`);
      expect(text).toContain('ok    buckley.coordinator.tls.key belongs to tls.cert');
      expect(text).toContain('the client certificate\'s name (CN) is "alice"');
      expect(run.failures.filter((line) => line.includes('tls'))).toEqual([]);
    });

    it('says a missing file is missing', async () => {
      const missing = join(dir, 'no-such-ca.pem');
      expect((await tlsRun({ ca: missing })).failures[0]).toBe(`buckley.coordinator.tls.ca: cannot read ${missing}: no such file`);
    });

    it('says a certificate that is a named pipe or a device is not a file, at once', async () => {
      const pipe = join(tempDir('buckley-doctor-pipe'), 'ca.pem');
      execFileSync('mkfifo', [pipe]);
      const { failures } = await tlsRun({ ca: pipe, cert: '/dev/zero', key: certs.clientKey });
      expect(failures).toEqual(expect.arrayContaining([`buckley.coordinator.tls.ca: cannot read ${pipe}: it is a named pipe (FIFO), not a file`, 'buckley.coordinator.tls.cert: cannot read /dev/zero: it is a device, not a file']));
    });

    it('says a file that is not PEM is not', async () => {
      const notPem = join(dir, 'not-pem.pem');
      writeFileSync(notPem, 'hello\n');
      expect((await tlsRun({ ca: certs.ca, cert: notPem, key: certs.clientKey })).failures[0]).toBe(
        `buckley.coordinator.tls.cert: ${notPem} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" line)`,
      );
    });

    it('says a key that is not the certificate\'s is not', async () => {
      const run = await tlsRun({ ca: certs.ca, cert: certs.clientCert, key: certs.strangerKey });
      expect(run.failures[0]).toBe(`buckley.coordinator.tls.key (${certs.strangerKey}) is not the key of tls.cert (${certs.clientCert}): give the key the certificate was made for`);
    });

    it('says an expired certificate has expired', async () => {
      expect((await tlsRun({ ca: certs.ca, cert: certs.expiredCert, key: certs.expiredKey })).failures[0]).toMatch(
        new RegExp(`^buckley\\.coordinator\\.tls\\.cert: ${certs.expiredCert} expired on `),
      );
    });
  });

  describe('the agent', () => {
    it("gives the agent's own error line, not the tail of its stack trace", async () => {
      const run = await doctor([], { BUCKLEY_AGENT: `${process.execPath} ${join(dir, 'missing-agent.js')}` });
      expect(run.failures).toEqual([
        `missing-agent.js exited with code 1. Its last output: Error: Cannot find module '${join(dir, 'missing-agent.js')}'`,
      ]);
    });

    it('says a program that is not an ACP agent is not, without waiting for the ACP deadline', async () => {
      const usage = join(dir, 'usage.mjs');
      writeFileSync(usage, "console.log('Usage: tool [--acp] FILE'); setInterval(() => {}, 1000);\n");
      const run = await doctor(['--agent.requestTimeoutMs', '60000'], { BUCKLEY_AGENT: `${process.execPath} ${usage}` });
      expect(run.failures).toEqual([expect.stringContaining('It is not speaking ACP: it wrote `Usage: tool [--acp] FILE` where ACP has JSON-RPC')]);
    });

    it("explains BUCKLEY_AGENT holding `buckley acp`'s profile instead of a command", async () => {
      const profile = join(dir, 'reviewer.yaml');
      writeFileSync(profile, 'name: reviewer\n');
      const run = await doctor([], { BUCKLEY_AGENT: profile });
      expect(run.failures).toEqual([expect.stringContaining(`BUCKLEY_AGENT is "${profile}", which buckley-lsp reads as the command of its ACP agent, but it is a file, not a program`)]);
      // With the agent set in the settings, the variable is only noted: it does not reach the agent.
      const settled = await doctor(['--agent.command', agent], { BUCKLEY_AGENT: profile });
      expect(settled.failures).toEqual([]);
      expect(settled.lines.join('\n')).toContain(`BUCKLEY_AGENT="${profile}" in the environment is not the agent command`);
    });

    it('says a command that does not exist cannot be started', async () => {
      expect((await doctor([], { BUCKLEY_AGENT: 'no-such-agent-program --acp' })).failures).toEqual([expect.stringContaining('cannot start ACP agent `no-such-agent-program --acp`')]);
    });
  });

  it('describes itself with --help', async () => {
    const run = spawnSync(process.execPath, [BIN, 'doctor', '--help'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('buckley-lsp doctor [--settings FILE]');
    expect(run.stdout).toContain('--coordinator.tls.cert VALUE');
  });
});
