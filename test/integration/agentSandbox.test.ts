/**
 * The sandbox meets agents it does not know, over stdio through buckley-lsp, with the scripted
 * agent as each of them: Buckley's `buckley acp --workdir … --log FILE` (its stand-in, recognised
 * by its name), an agent behind a wrapper script (recognised by its ACP agentInfo, and started
 * again in the sandbox it needs), an agent nobody knows that writes its state in its home (the
 * refusal said in our words, with the setting; allowed, it lands on disk) — with a home under /tmp
 * as CI machines and containers have. And what the agent must not get: the user's secrets in the
 * environment (its terminals' too), a TCP service on the user's 127.0.0.1, an abstract Unix socket,
 * a Unix socket at a path it sees (in the home, in the workspace), a host nobody allowed; what it may reach (an allowed host, through the proxy), it reaches.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { probeSandbox } from '../../src/coordinator/agents/sandbox.js';
import { findSocat } from '../../src/coordinator/agents/sandboxNetwork.js';
import { agentHome } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { fileUri, REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const probe = await probeSandbox();
const socat = 'socat' in findSocat();
if (process.env.CI && (!probe.ok || !socat)) throw new Error(`CI must install bubblewrap and socat (.ci/run): ${probe.ok ? 'no socat' : probe.reason}`);
if (!probe.ok || !socat) process.stdout.write(`agent sandbox tests skipped: ${probe.ok ? 'socat is not installed' : probe.reason}\n`);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

/** A folder of programs: `name` runs the scripted agent with `flags` (and its own arguments), as a wrapper script does. */
function program(name: string, flags: string[]): string {
  const bin = tempDir('buckley-bin');
  writeFileSync(join(bin, name), `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT}" ${flags.join(' ')} "$@"\n`, { mode: 0o755 });
  return bin;
}

/** A home outside /tmp (the usual), or under it (CI machines, containers). */
function home(underTmp: boolean): string {
  if (underTmp) return tempDir('buckley-home');
  const made = agentHome();
  cleanups.push(made.cleanup);
  return made.home;
}

async function server(command: string[], options: { home: string; bin?: string; env?: Record<string, string>; agent?: Record<string, unknown>; approve?: boolean; workspace?: string }): Promise<{ client: TestClient; workspace: string }> {
  const workspace = options.workspace ?? tempDir('buckley-ws');
  const client = await start({
    ...(options.approve ? { handlers: { 'buckley/approveTool': () => ({ approved: true }) } } : {}),
    env: { BUCKLEY_AGENT: undefined, HOME: options.home, PATH: `${options.bin ? `${options.bin}:` : ''}${process.env.PATH}`, ...options.env },
    initialize: {
      rootUri: fileUri(workspace),
      workspaceFolders: [{ uri: fileUri(workspace), name: 'ws' }],
      ...(options.approve ? { capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } } : {}),
      initializationOptions: { agent: { command, ...options.agent } },
    },
  });
  return { client, workspace };
}

const ask = async (client: TestClient, question: string) => (await client.request('buckley/ask', { question })).answer as string;
const logged = (client: TestClient, text: string) => client.waitFor('window/logMessage', (params) => params.message.includes(text));

describe.runIf(probe.ok)('a task that names no workspace', () => {
  it("gets none to write: its agent starts in an empty folder of its own, not the server's", async () => {
    // An editor that names no folder, started in the user's home (else its folder is the workspace).
    const client = await start({
      cwd: 'home',
      env: { BUCKLEY_AGENT: undefined },
      handlers: { 'buckley/approveTool': () => ({ approved: true }) },
      initialize: { rootUri: null, workspaceFolders: null, capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } }, initializationOptions: { agent: { command: [process.execPath, SCRIPTED_AGENT] } } },
    });
    // Where its commands run: an empty folder, not the server's (the home folder).
    const { taskId: looked } = await client.request('buckley/executeTask', { task: 'TERMINAL pwd; ls -A | wc -l' });
    const answer = (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "TERMINAL pwd`))).message;
    expect(answer).toMatch(/terminal: exit 0\n\/tmp\/buckley-no-workspace-\w+\n0\n/);
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === looked && p.status === 'completed');
    const name = `no-workspace-${randomUUID()}.txt`;
    const { taskId } = await client.request('buckley/executeTask', { task: `SELF WRITE ${name} "mine"` });
    const final = await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && ['completed', 'failed', 'cancelled'].includes(p.status));
    expect(final.status).toBe('failed');
    expect(final.message).toMatch(/read-only|EROFS/);
    // Not in the server's folder, nor anywhere it could see.
    expect(existsSync(join(client.stateDir, name))).toBe(false);
    expect(existsSync(join(REPO, name))).toBe(false);
  });
});

describe.runIf(probe.ok && socat)("the sandbox and the agents it does not know", () => {
  for (const underTmp of [false, true]) {
    const where = underTmp ? 'a home under /tmp' : 'a home of its own';
    it(`runs Buckley's \`buckley acp --workdir … --log FILE\` (${where}): its log and its store written where they live`, async () => {
      const userHome = home(underTmp);
      const logs = tempDir('buckley-logs');
      const log = join(logs, 'acp.log');
      const { client } = await server(['buckley', 'acp', '--workdir', '.', '--log', log], { home: userHome, bin: program('buckley', ['--buckley-acp']) });
      expect(await ask(client, 'INSTANT')).toBe('ok');
      expect(readFileSync(log, 'utf8')).toContain('=== ACP agent started ===');
      expect(existsSync(join(userHome, '.buckley', 'buckley.db'))).toBe(true);
    });
  }

  it('runs an agent installed under /tmp behind a wrapper script elsewhere under /tmp: what the script names, and where its links point, are shown in the sandbox', async () => {
    // Installed under /tmp (a CI machine's checkout, an npx cache): the sandbox's /tmp is its own.
    // In a top folder of /tmp of its own (the wrapper's is another).
    const installed = mkdtempSync(join(tmpdir(), 'buckley-installed-'));
    cleanups.push(() => rmSync(installed, { recursive: true, force: true }));
    // A link to the agent, as npm installs a program's bin: the link here, the package where it points.
    symlinkSync(SCRIPTED_AGENT, join(installed, basename(SCRIPTED_AGENT)));
    const bin = tempDir('buckley-bin');
    writeFileSync(join(bin, 'tmp-agent'), `#!/bin/sh\nexec "${process.execPath}" "${join(installed, basename(SCRIPTED_AGENT))}" "$@"\n`, { mode: 0o755 });
    const { client } = await server(['tmp-agent'], { home: home(false), bin });
    expect(await ask(client, 'INSTANT')).toBe('ok');
  });

  it('starts an agent behind a wrapper script again, once, in the sandbox its agentInfo says it needs', async () => {
    const userHome = home(false);
    const { client } = await server(['my-agent'], { home: userHome, bin: program('my-agent', ['--claims=Buckley', '--session-state=.buckley/sessions']) });
    expect(await ask(client, 'INSTANT')).toBe('ok');
    await logged(client, 'the agent `my-agent` is Buckley (its ACP agentInfo says "Buckley"): it starts again, once, in the sandbox Buckley needs');
    expect(existsSync(join(userHome, '.buckley', 'sessions', 'started'))).toBe(true);
    // Once: the next turn runs on the agent as restarted.
    expect(await ask(client, 'INSTANT')).toBe('ok');
    expect(client.received.filter((message) => message.method === 'window/logMessage' && message.params.message.includes('starts again, once'))).toHaveLength(1);
  });

  for (const underTmp of [false, true]) {
    const where = underTmp ? 'a home under /tmp' : 'a home of its own';
    it(`says which path an unknown agent could not write, and the setting that allows it; allowed, its state lands in the home (${where})`, async () => {
      const userHome = home(underTmp);
      const bin = program('state-keeper', ['--home-state']);
      const refused = await server(['state-keeper'], { home: userHome, bin });
      await expect(ask(refused.client, 'INSTANT')).rejects.toMatchObject({
        message: expect.stringContaining(
          `could not write ~/.scripted-agent/sessions: buckley-lsp's sandbox keeps ~/.scripted-agent read-only for it. To let it write there, set buckley.agent.sandbox.writable: ["~/.scripted-agent"]`,
        ),
      });
      // The agent's own words are in the log.
      await logged(refused.client, 'its own words');
      const allowed = await server(['state-keeper'], { home: userHome, bin, agent: { sandbox: { writable: ['~/.scripted-agent'] } } });
      expect(await ask(allowed.client, 'INSTANT')).toBe('ok');
      expect(existsSync(join(userHome, '.scripted-agent', 'sessions', 'started'))).toBe(true);
      // Its home stays visible (its settings there), read-only but for what it may write.
      writeFileSync(join(userHome, 'settings.json'), '{"theme": "dark"}\n');
      expect(await ask(allowed.client, `CAT ${join(userHome, 'settings.json')}`)).toBe(`cat ${join(userHome, 'settings.json')}: {"theme": "dark"}`);
    });
  }

  it("keeps the user's secrets out of the agent's environment and its commands', but its own key and those passed on; the log names them, never their values", async () => {
    const secrets = { AWS_SECRET_ACCESS_KEY: 'aws-secret-value', GITHUB_TOKEN: 'ghp_value', DATABASE_PASSWORD: 'db-value', MY_SERVICE_KEY: 'passed-value', ANTHROPIC_API_KEY: 'sk-ant-value' };
    const { client } = await server(['claude-agent-acp'], {
      home: home(false),
      // Named as Claude Code's adapter is: its key variable is its own.
      bin: program('claude-agent-acp', []),
      env: secrets,
      agent: { passEnv: ['MY_*'], env: { GIVEN_TOKEN: 'given-value' } },
      approve: true,
    });
    expect(await ask(client, 'SECRETS')).toBe('secrets: ANTHROPIC_API_KEY, GIVEN_TOKEN, MY_SERVICE_KEY');
    // Its commands get the same environment.
    const query = 'TERMINAL env';
    await client.request('buckley/executeTask', { task: query });
    const answer = (await client.waitFor('window/logMessage', (params) => params.message.startsWith(`Buckley's answer to "${query}"`))).message;
    expect(answer).toContain('terminal: exit 0');
    expect(answer).toContain('MY_SERVICE_KEY=passed-value');
    expect(answer).not.toMatch(/aws-secret-value|ghp_value|db-value/);
    const said = await logged(client, 'keeps back what looks like secrets');
    expect(said.message).toContain('AWS_SECRET_ACCESS_KEY, DATABASE_PASSWORD, GITHUB_TOKEN');
    expect(JSON.stringify(client.received.filter((message) => message.method === 'window/logMessage' && !message.params.message.startsWith('Buckley\'s answer')))).not.toMatch(/aws-secret-value|ghp_value|db-value|passed-value/);
  });

  it("passes on the secret-looking variables the agent's own settings name (an MCP server's token), never those a workspace's settings name; the log says which file named each", async () => {
    const userHome = home(false);
    mkdirSync(join(userHome, '.gemini'), { recursive: true });
    writeFileSync(join(userHome, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: { github: { command: 'github-mcp', env: { GITHUB_PERSONAL_ACCESS_TOKEN: '$GITHUB_TOKEN' } } } }));
    const workspace = tempDir('buckley-ws');
    // A repository cloned, naming a secret to have it handed over.
    mkdirSync(join(workspace, '.gemini'));
    writeFileSync(join(workspace, '.gemini', 'settings.json'), JSON.stringify({ mcpServers: { x: { command: 'x', env: { K: '${AWS_SECRET_ACCESS_KEY}' } } } }));
    const { client } = await server(['gemini'], {
      home: userHome,
      // Named as Gemini CLI is: its settings are ~/.gemini/settings.json.
      bin: program('gemini', []),
      env: { GITHUB_TOKEN: 'ghp_value', AWS_SECRET_ACCESS_KEY: 'aws-secret-value' },
      workspace,
    });
    expect(await ask(client, 'SECRETS')).toBe('secrets: GITHUB_TOKEN');
    expect((await logged(client, 'but its own settings name')).message).toContain(`GITHUB_TOKEN (named in ${join(userHome, '.gemini', 'settings.json')})`);
    expect((await logged(client, 'keeps back what looks like secrets')).message).toContain('AWS_SECRET_ACCESS_KEY');
  });

  it("gives Claude Code on Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK) its AWS login — ~/.aws read-only, AWS_* passed on — and keeps both from it otherwise", async () => {
    const userHome = home(false);
    mkdirSync(join(userHome, '.aws'));
    writeFileSync(join(userHome, '.aws', 'credentials'), '[default]\naws_access_key_id = AKIAEXAMPLE\n');
    const credentials = join(userHome, '.aws', 'credentials');
    const env = { AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE', AWS_SECRET_ACCESS_KEY: 'aws-secret-value', AWS_REGION: 'us-east-1' };
    const bin = program('claude-agent-acp', []);
    const on = await server(['claude-agent-acp'], { home: userHome, bin, env: { ...env, CLAUDE_CODE_USE_BEDROCK: '1' } });
    expect(await ask(on.client, 'SECRETS')).toBe('secrets: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY');
    expect(await ask(on.client, `CAT ${credentials}`)).toBe(`cat ${credentials}: [default]`);
    expect(await ask(on.client, `PUT ${credentials}`)).toBe(`put ${credentials}: EROFS`);
    expect((await logged(on.client, 'reaches its model through Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)')).message).toContain(`its login is shown to it (${join(userHome, '.aws')}`);
    const off = await server(['claude-agent-acp'], { home: userHome, bin, env });
    expect(await ask(off.client, 'SECRETS')).toBe('secrets: none');
    expect(await ask(off.client, `CAT ${credentials}`)).toBe(`cat ${credentials}: EACCES`);
  });

  it('says which credential an agent could not read and the setting that shows it; shown, the agent reads it, read-only, and the others stay hidden', async () => {
    const userHome = home(false);
    const hosts = join(userHome, '.config', 'gh', 'hosts.yml');
    mkdirSync(dirname(hosts), { recursive: true });
    writeFileSync(hosts, 'github.com:\n');
    mkdirSync(join(userHome, '.ssh'));
    writeFileSync(join(userHome, '.ssh', 'id_ed25519'), 'SSH-SECRET\n');
    // An agent that reads the GitHub CLI's login as it starts (a wrapper, as people write them).
    const bin = tempDir('buckley-bin');
    writeFileSync(join(bin, 'gh-agent'), `#!/bin/sh\ncat "${hosts}" > /dev/null || exit 1\nexec "${process.execPath}" "${SCRIPTED_AGENT}" "$@"\n`, { mode: 0o755 });
    const refused = await server(['gh-agent'], { home: userHome, bin });
    await expect(refused.client.request('buckley/ask', { question: 'hello' })).rejects.toMatchObject({
      message: expect.stringContaining(`could not read ~/.config/gh/hosts.yml: buckley-lsp's sandbox hides ~/.config/gh from it, as it hides every credential. To give it that to read, set buckley.agent.sandbox.show: ["~/.config/gh"]`),
    });
    const shown = await server(['gh-agent'], { home: userHome, bin, agent: { sandbox: { show: ['~/.config/gh'] } } });
    expect(await ask(shown.client, `CAT ${hosts}`)).toBe(`cat ${hosts}: github.com:`);
    expect(await ask(shown.client, `PUT ${hosts}`)).toBe(`put ${hosts}: EROFS`);
    expect(await ask(shown.client, `CAT ${join(userHome, '.ssh', 'id_ed25519')}`)).toBe(`cat ${join(userHome, '.ssh', 'id_ed25519')}: EACCES`);
  });

  it("reaches neither the user's 127.0.0.1 services nor the host's abstract Unix sockets; an allowed host through the proxy, a host not allowed refused", async () => {
    const service = await listen(createServer((socket) => socket.on('error', () => undefined).end('database\n')));
    const abstract = `buckley-test-${randomUUID()}`;
    const unix = createServer((socket) => socket.on('error', () => undefined).end('x11\n'));
    await new Promise<void>((resolve) => unix.listen(`\0${abstract}`, resolve));
    cleanups.push(() => unix.close());
    const allowed = await listen(createHttpServer((_request, response) => response.end('hello from the allowed host\n')));
    const other = await listen(createHttpServer((_request, response) => response.end('should not be reached\n')));
    const settings = { sandbox: { network: { allow: [`127.0.0.1:${allowed}`, 'nowhere.invalid'] } } };
    const { client } = await server([process.execPath, SCRIPTED_AGENT], { home: home(false), agent: settings });
    // Allowed, but the network fails it: said as such (an agent may try again), not as a refusal.
    expect(await ask(client, 'FETCH http://nowhere.invalid/')).toBe("fetch http://nowhere.invalid/: 502 buckley-lsp's proxy cannot reach nowhere.invalid:80: its name does not resolve (ENOTFOUND)");
    expect(await ask(client, `TCP 127.0.0.1 ${service}`)).toBe(`tcp 127.0.0.1:${service}: ECONNREFUSED`);
    expect(await ask(client, `UNIX ${abstract}`)).toBe(`unix ${abstract}: ECONNREFUSED`);
    expect(await ask(client, `FETCH http://127.0.0.1:${allowed}/`)).toBe(`fetch http://127.0.0.1:${allowed}/: 200 hello from the allowed host`);
    expect(await ask(client, `FETCH http://127.0.0.1:${other}/`)).toBe(`fetch http://127.0.0.1:${other}/: 403 buckley-lsp's sandbox does not let the agent reach 127.0.0.1:${other}: not among the hosts it may reach (buckley.agent.sandbox.network.allow)`);
    // An allowed endpoint of the loopback is there for clients that go straight to it.
    expect(await ask(client, `TCP 127.0.0.1 ${allowed}`)).toBe(`tcp 127.0.0.1:${allowed}: connected`);
    await logged(client, `the agent's sandbox refused a connection to 127.0.0.1:${other}: not among the hosts it may reach`);
    // A task's sandbox alike.
    const query = `TCP 127.0.0.1 ${service}`;
    await client.request('buckley/executeTask', { task: query });
    expect((await client.waitFor('window/logMessage', (params) => params.message.startsWith(`Buckley's answer to "${query}"`))).message).toContain(`tcp 127.0.0.1:${service}: ECONNREFUSED`);
    // The same agent, its network not confined: the service answers (what the test would miss).
    const open = await server([process.execPath, SCRIPTED_AGENT], { home: home(false), agent: { sandbox: { network: { confine: false } } } });
    expect(await ask(open.client, `TCP 127.0.0.1 ${service}`)).toBe(`tcp 127.0.0.1:${service}: connected`);
  });
});

/** A home (outside /tmp) where Gemini CLI's settings are the user's: `settings`. */
function geminiState(settings: string): { userHome: string; gemini: string } {
  const userHome = home(false);
  const gemini = join(userHome, '.gemini');
  mkdirSync(gemini, { recursive: true });
  writeFileSync(join(gemini, 'settings.json'), settings);
  return { userHome, gemini };
}

describe.runIf(probe.ok)("an agent's settings that run code later", () => {
  it('cannot be changed from its sandbox (its settings file read-only), and an extension or a trusted folders file it makes is moved aside after the turn, said in the log; its other state is written; writable names one to allow it', async () => {
    const { userHome, gemini } = geminiState('{"theme": "the user\'s"}\n');
    const bin = program('gemini', ['--acp']);
    const { client } = await server(['gemini', '--acp'], { home: userHome, bin });
    expect(await ask(client, `PUT ${join(gemini, 'settings.json')}`)).toBe(`put ${join(gemini, 'settings.json')}: EROFS`);
    expect(readFileSync(join(gemini, 'settings.json'), 'utf8')).toBe('{"theme": "the user\'s"}\n');
    const extension = join(gemini, 'extensions', 'helper', 'gemini-extension.json');
    expect(await ask(client, `PUT ${extension}`)).toBe(`put ${extension}: written`);
    const said = (await logged(client, 'moved aside')).message;
    const made = join(gemini, 'extensions', 'helper').replace(/[.]/g, '\\.');
    expect(said).toMatch(new RegExp(`${made} was made while Gemini CLI worked in its sandbox; what it names would run outside any sandbox when you next start Gemini CLI: moved aside to ${made}\\.buckley-moved-.*\\. If you made it, move it back; to let Gemini CLI make it, set buckley\\.agent\\.sandbox\\.writable: \\["${made}"\\]$`));
    expect(existsSync(extension)).toBe(false);
    expect(readdirSync(join(gemini, 'extensions')).filter((name) => name.startsWith('helper.buckley-moved-'))).toHaveLength(1);
    // Nor the folders you trust (it would load a trusted folder's own settings, hooks and all).
    const trusted = join(gemini, 'trustedFolders.json');
    expect(await ask(client, `PUT ${trusted}`)).toBe(`put ${trusted}: written`);
    expect((await logged(client, `${trusted} was made while`)).message).toContain('moved aside');
    expect(existsSync(trusted)).toBe(false);
    // The rest of its state is its own to write.
    expect(await ask(client, `PUT ${join(gemini, 'tmp', 'chat.json')}`)).toBe(`put ${join(gemini, 'tmp', 'chat.json')}: written`);
    expect(existsSync(join(gemini, 'tmp', 'chat.json'))).toBe(true);
    // Named in buckley.agent.sandbox.writable, the settings are the agent's to write.
    const allowed = await server(['gemini', '--acp'], { home: userHome, bin, agent: { sandbox: { writable: ['~/.gemini/settings.json'] } } });
    expect(await ask(allowed.client, `PUT ${join(gemini, 'settings.json')}`)).toBe(`put ${join(gemini, 'settings.json')}: written`);
  });

  it('linked from a dotfiles folder (as home-manager and stow make them): the link the agent replaces is put back after the turn, its file moved aside, said in the log', async () => {
    const { userHome, gemini } = geminiState('{}\n');
    const dotfiles = join(userHome, 'dotfiles');
    mkdirSync(dotfiles);
    writeFileSync(join(dotfiles, 'gemini-settings.json'), '{"theme": "the user\'s"}\n');
    rmSync(join(gemini, 'settings.json'));
    symlinkSync(join(dotfiles, 'gemini-settings.json'), join(gemini, 'settings.json'));
    const { client } = await server(['gemini', '--acp'], { home: userHome, bin: program('gemini', ['--acp']) });
    // The file it links to is bound read-only; the link's name, in the agent's own folder, is not.
    expect(await ask(client, `PUT ${join(gemini, 'settings.json')}`)).toBe(`put ${join(gemini, 'settings.json')}: EROFS`);
    expect(await ask(client, `SWAP ${join(gemini, 'settings.json')}`)).toBe(`swap ${join(gemini, 'settings.json')}: written`);
    expect((await logged(client, 'was replaced while')).message).toContain(`${join(gemini, 'settings.json')} was replaced while Gemini CLI worked in its sandbox (it was a link to ${join(dotfiles, 'gemini-settings.json')})`);
    expect(readlinkSync(join(gemini, 'settings.json'))).toBe(join(dotfiles, 'gemini-settings.json'));
    expect(readFileSync(join(gemini, 'settings.json'), 'utf8')).toBe('{"theme": "the user\'s"}\n');
  });

  it('linked to a file not made yet: the agent starts, and what it makes there in a turn is moved aside after it', async () => {
    const { userHome, gemini } = geminiState('{}\n');
    const target = join(gemini, 'settings.mine.json');
    rmSync(join(gemini, 'settings.json'));
    symlinkSync(target, join(gemini, 'settings.json'));
    const { client } = await server(['gemini', '--acp'], { home: userHome, bin: program('gemini', ['--acp']) });
    expect(await ask(client, `PUT ${target}`)).toBe(`put ${target}: written`);
    expect((await logged(client, `${target} was made while`)).message).toContain('moved aside');
    expect(existsSync(target)).toBe(false);
  });
});

describe.runIf(probe.ok)("what runs code later, for an agent behind a wrapper (known by its agentInfo, started again)", () => {
  it('is guarded from its first turn: the settings read-only, an extension made in that turn moved aside', async () => {
    const { userHome, gemini } = geminiState('{}\n');
    const { client } = await server(['my-gemini'], { home: userHome, bin: program('my-gemini', ['--claims=gemini-cli']) });
    const extension = join(gemini, 'extensions', 'helper', 'gemini-extension.json');
    expect(await ask(client, `PUT ${extension}`)).toBe(`put ${extension}: written`);
    expect((await logged(client, 'moved aside')).message).toContain(`${join(gemini, 'extensions', 'helper')} was made while Gemini CLI worked in its sandbox`);
    expect(existsSync(extension)).toBe(false);
    expect(await ask(client, `PUT ${join(gemini, 'settings.json')}`)).toBe(`put ${join(gemini, 'settings.json')}: EROFS`);
  });
});

describe.runIf(probe.ok)("an agent's state file that holds what runs code later (Claude Code's ~/.claude.json)", () => {
  it('keeps what the agent writes there but for its MCP servers and the folders it trusts, put back after the turn, said in the log', async () => {
    const userHome = home(false);
    const settings = join(userHome, '.claude.json');
    writeFileSync(settings, JSON.stringify({ numStartups: 3, mcpServers: { mine: { command: 'my-server' } } }));
    const { client } = await server(['claude-agent-acp'], { home: userHome, bin: program('claude-agent-acp', []) });
    expect(await ask(client, `ADD MCP ${settings} evil`)).toBe('add mcp evil: added');
    const said = (await logged(client, 'put back as it was')).message;
    expect(said).toContain(`mcpServers.evil in ${settings} changed while Claude Code worked in its sandbox; what it names would run outside any sandbox when you next start Claude Code: put back as it was`);
    // Its own state stays; the server it added does not.
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ numStartups: 4, mcpServers: { mine: { command: 'my-server' } } });
    // Nor a folder it trusted: you would start Claude Code there without being asked, its hooks run.
    expect(await ask(client, `TRUST ${settings} /work/cloned`)).toBe('trust /work/cloned: trusted');
    expect((await logged(client, 'projects./work/cloned.hasTrustDialogAccepted in')).message).toContain('put back as it was');
    expect(JSON.parse(readFileSync(settings, 'utf8')).projects).toEqual({ '/work/cloned': { hasTrustDialogAccepted: false } });
  });

  it('puts them back when the editor goes away in the middle of the turn, before the server exits', async () => {
    const userHome = home(false);
    const settings = join(userHome, '.claude.json');
    writeFileSync(settings, JSON.stringify({ numStartups: 3, mcpServers: { mine: { command: 'my-server' } } }));
    const { client } = await server(['claude-agent-acp'], { home: userHome, bin: program('claude-agent-acp', []) });
    await client.request('buckley/executeTask', { task: `ADD MCP ${settings} evil THEN HANG` });
    // The agent added it and waits; then the editor goes.
    while (!readFileSync(settings, 'utf8').includes('evil')) await new Promise((resolve) => setTimeout(resolve, 20));
    client.closeInput();
    await client.exit();
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ numStartups: 4, mcpServers: { mine: { command: 'my-server' } } });
  });

  it('puts them back when buckley-lsp was killed in the middle of the turn (its agent with it), as the next one starts', async () => {
    const userHome = home(false);
    const settings = join(userHome, '.claude.json');
    writeFileSync(settings, JSON.stringify({ numStartups: 3, mcpServers: { mine: { command: 'my-server' } } }));
    const bin = program('claude-agent-acp', []);
    // Both share the user's state folder, as two runs of the same user's editor do.
    const env = { XDG_STATE_HOME: join(userHome, '.local', 'state') };
    const killed = await server(['claude-agent-acp'], { home: userHome, bin, env });
    await killed.client.request('buckley/executeTask', { task: `ADD MCP ${settings} evil THEN HANG` });
    while (!readFileSync(settings, 'utf8').includes('evil')) await new Promise((resolve) => setTimeout(resolve, 20));
    killed.client.kill();
    await killed.client.exit();
    expect(JSON.parse(readFileSync(settings, 'utf8')).mcpServers.evil).toBeDefined();
    const { client } = await server(['claude-agent-acp'], { home: userHome, bin, env });
    expect((await logged(client, 'stopped while Claude Code worked in its sandbox')).message).toMatch(/buckley-lsp \(process \d+\) stopped while Claude Code worked in its sandbox: what that turn could have changed that runs code later is checked now/);
    expect((await logged(client, 'put back as it was')).message).toContain(`mcpServers.evil in ${settings} changed while Claude Code worked in its sandbox`);
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ numStartups: 4, mcpServers: { mine: { command: 'my-server' } } });
  });
});

describe.runIf(probe.ok)("the workspace's credential files", () => {
  it("are hidden by what they hold, not by a word in their name: the user's code named secrets and a virtualenv's CA bundle are read, secrets.yaml and .env are not", async () => {
    const workspace = tempDir('buckley-ws');
    const files: Record<string, string> = {
      '.env': 'TOKEN=hidden\n',
      'config/secrets.yaml': 'password: hidden\n',
      'deploy/credentials': '[default]\n',
      '.envrc': 'export API_TOKEN=hidden\n',
      'infra/terraform.tfstate': '{"resources":[]}\n',
      'src/secrets.ts': 'export const readSecret = () => 1;\n',
      'app/credentials.py': 'def load(): pass\n',
      '.venv/lib/python3.12/site-packages/certifi/cacert.pem': '-----BEGIN CERTIFICATE-----\n',
      'vendor/github.com/x/y/testdata/server.key': 'test key\n',
    };
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(workspace, name)), { recursive: true });
      writeFileSync(join(workspace, name), text);
    }
    const { client } = await server(['scripted-agent'], { home: home(false), bin: program('scripted-agent', []), workspace });
    const read = async (name: string) => {
      const question = `CAT ${join(workspace, name)}`;
      await client.request('buckley/executeTask', { task: question });
      return (await logged(client, `Buckley's answer to "${question}"`)).message as string;
    };
    for (const name of ['.env', 'config/secrets.yaml', 'deploy/credentials', '.envrc', 'infra/terraform.tfstate']) expect(await read(name)).toContain('EACCES');
    expect(await read('src/secrets.ts')).toContain('export const readSecret');
    expect(await read('app/credentials.py')).toContain('def load()');
    expect(await read('.venv/lib/python3.12/site-packages/certifi/cacert.pem')).toContain('BEGIN CERTIFICATE');
    expect(await read('vendor/github.com/x/y/testdata/server.key')).toContain('test key');
  });
});

describe.runIf(probe.ok)('a file the sandbox binds alone, replaced on disk while its agent runs (an editor saving by renaming a new file over it, git rewriting its config)', () => {
  it('stays hidden, or read-only, at the next turn: the agent gets a new sandbox, said in the log', async () => {
    const userHome = home(false);
    const workspace = tempDir('buckley-ws');
    mkdirSync(join(workspace, '.git'));
    writeFileSync(join(workspace, '.env'), 'TOKEN=first\n');
    writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
    const { client } = await server(['scripted-agent'], { home: userHome, bin: program('scripted-agent', []), workspace });
    const task = async (question: string) => {
      await client.request('buckley/executeTask', { task: question });
      return (await logged(client, `Buckley's answer to "${question}"`)).message as string;
    };
    expect(await task(`CAT ${join(workspace, '.env')}`)).toContain('EACCES');
    const replace = (path: string, text: string) => {
      writeFileSync(`${path}.new`, text);
      renameSync(`${path}.new`, path);
    };
    replace(join(workspace, '.env'), 'TOKEN=second\n');
    replace(join(workspace, '.git', 'config'), '[core]\n\tbare = false\n');
    expect(await task(`CAT ${join(workspace, '.env')}`)).toContain('EACCES');
    expect((await logged(client, 'gets a new sandbox made for them')).message).toContain(`what the sandbox hides or binds changed since it started (${join(workspace, '.env')}, ${join(workspace, '.git', 'config')}`);
    expect(await task(`PUT ${join(workspace, '.git', 'config')}`)).toContain('EROFS');
    expect(readFileSync(join(workspace, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
  });

  it('stops the turn under way when it happens, in words; the next turn covers the new file', async () => {
    const userHome = home(false);
    const workspace = tempDir('buckley-ws');
    writeFileSync(join(workspace, '.env'), 'TOKEN=first\n');
    const { client } = await server(['scripted-agent'], { home: userHome, bin: program('scripted-agent', []), workspace });
    const marker = join(workspace, 'working.md');
    await client.request('buckley/executeTask', { task: `PUT ${marker} THEN HANG` });
    while (!existsSync(marker)) await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(join(workspace, '.env.new'), 'TOKEN=second\n');
    renameSync(join(workspace, '.env.new'), join(workspace, '.env'));
    const said = (await logged(client, 'was replaced on disk while')).message;
    expect(said).toContain(`${join(workspace, '.env')} was replaced on disk while the agent worked, and its sandbox no longer hid it (a file bound alone goes with the file replaced): the turn was stopped. Run it again`);
    // The task ends failed, in those words.
    expect((await logged(client, 'THEN HANG") failed:')).message).toContain(`failed: ${join(workspace, '.env')} was replaced on disk while the agent worked`);
    const question = `CAT ${join(workspace, '.env')}`;
    await client.request('buckley/executeTask', { task: question });
    expect((await logged(client, `Buckley's answer to "${question}"`)).message).toContain('EACCES');
  });
});

describe.runIf(probe.ok)("a task that may write the home, or whose workspace holds it", () => {
  const task = async (client: TestClient, question: string) => {
    await client.request('buckley/executeTask', { task: question });
    return (await logged(client, `Buckley's answer to "${question}"`)).message;
  };

  it("writes the home writable names, but not what the user's shells, login and editors run: ~/.bashrc read-only, a ~/.zshrc it makes moved aside", async () => {
    const userHome = home(false);
    writeFileSync(join(userHome, '.bashrc'), '# mine\n');
    const { client } = await server(['scripted-agent'], { home: userHome, bin: program('scripted-agent', []), agent: { sandbox: { writable: ['~'] } } });
    expect(await task(client, `PUT ${join(userHome, 'notes.md')}`)).toContain('written');
    expect(await task(client, `PUT ${join(userHome, '.bashrc')}`)).toContain('EROFS');
    expect(await task(client, `PUT ${join(userHome, '.zshrc')}`)).toContain('written');
    expect((await logged(client, '.zshrc was made while')).message).toContain('moved aside');
    expect(existsSync(join(userHome, '.zshrc'))).toBe(false);
    expect(readFileSync(join(userHome, '.bashrc'), 'utf8')).toBe('# mine\n');
    // buckley-lsp's own settings, which say what an agent may do, are guarded the same way.
    const ours = join(userHome, '.config', 'buckley-lsp');
    expect(await task(client, `PUT ${join(ours, 'settings.json')}`)).toContain('written');
    expect((await logged(client, `${ours} was made while`)).message).toContain('moved aside');
    expect(existsSync(ours)).toBe(false);
  });

  it('does not write a workspace that holds the home (the folder of every home), and says so', async () => {
    const userHome = home(false);
    const homes = dirname(userHome);
    const { client } = await server(['scripted-agent'], { home: userHome, bin: program('scripted-agent', []), workspace: homes });
    const target = join(homes, `${randomUUID()}.md`);
    expect(await task(client, `PUT ${target}`)).toContain('EROFS');
    expect((await logged(client, `a task does not write the workspace ${homes}`)).message).toContain(`it holds your home (${userHome}) and what is beside it`);
    expect(existsSync(target)).toBe(false);
  });
});

describe.runIf(probe.ok)("a task and the project's editor settings, which the editor applies outside any sandbox (Zed's, Helix's, VS Code's, an exrc)", () => {
  it('cannot change those there; one it makes itself is moved aside once the turn is over, in words; one the user approved, written through the editor, stays', async () => {
    const workspace = tempDir('buckley-ws');
    mkdirSync(join(workspace, '.vscode'));
    writeFileSync(join(workspace, '.vscode', 'settings.json'), '{}\n');
    const { client } = await server(['scripted-agent'], { home: home(false), bin: program('scripted-agent', []), workspace, approve: true });
    const task = async (question: string) => {
      await client.request('buckley/executeTask', { task: question });
      return (await logged(client, `Buckley's answer to "${question}"`)).message as string;
    };
    // There already: read-only, as the project's git hooks are.
    expect(await task(`PUT ${join(workspace, '.vscode', 'settings.json')}`)).toContain('EROFS');
    expect(readFileSync(join(workspace, '.vscode', 'settings.json'), 'utf8')).toBe('{}\n');
    // Made by the agent itself (Zed would apply it at once): moved aside, said with who applies it and the setting that allows it.
    const zed = join(workspace, '.zed');
    expect(await task(`PUT ${join(zed, 'settings.json')}`)).toContain('written');
    const said = (await logged(client, `${zed} was made while`)).message as string;
    expect(said).toContain("Zed applies it: the language servers, tasks and MCP servers it names, buckley-lsp's own settings — outside any sandbox: moved aside to");
    expect(said).toContain(`set buckley.agent.sandbox.writable: ["${zed}"]`);
    expect(existsSync(zed)).toBe(false);
    // The rest of the workspace is the task's to write.
    expect(await task(`PUT ${join(workspace, 'src', 'main.ts')}`)).toContain('written');
    expect(existsSync(join(workspace, 'src', 'main.ts'))).toBe(true);
    // Asked (a write Helix would run), approved, and written through the editor: the user's, kept.
    const helix = join(workspace, '.helix', 'languages.toml');
    expect(await task(`WRITE ${helix} "[language-server]\\n"`)).toContain(`wrote ${helix}`);
    expect(client.all('buckley/approveTool').at(-1)).toMatchObject({ risk: 'high' });
    expect(readFileSync(helix, 'utf8')).toBe('[language-server]\n');
  });
});

describe.runIf(probe.ok && socat)("the machine's Unix sockets at paths the sandbox shows", () => {
  it('reaches none: not one in the home (a Docker daemon, an SSH agent), not one in the workspace (a database), not one made after the agent started — in an ask and a task; its network not confined, it keeps them', async () => {
    const homeFolder = home(false);
    const inHome = await listenAt(join(homeFolder, '.docker-desktop.sock'), 'docker\n');
    const { client, workspace } = await server([process.execPath, SCRIPTED_AGENT], { home: homeFolder });
    const inWorkspace = await listenAt(join(workspace, '.s.PGSQL.5432'), 'postgres\n');
    expect(await ask(client, `UNIX ${inHome}`)).toBe(`unix ${inHome}: EACCES`);
    expect(await ask(client, `UNIX ${inWorkspace}`)).toBe(`unix ${inWorkspace}: EACCES`);
    // One made while the agent runs: its next turn's sandbox hides it too.
    const later = await listenAt(join(homeFolder, 'later.sock'), 'later\n');
    expect(await ask(client, `UNIX ${later}`)).toBe(`unix ${later}: EACCES`);
    const query = `UNIX ${inWorkspace}`;
    await client.request('buckley/executeTask', { task: query });
    expect((await client.waitFor('window/logMessage', (params) => params.message.startsWith(`Buckley's answer to "${query}"`))).message).toContain(`unix ${inWorkspace}: EACCES`);
    // The same agent, its network not confined: the sockets answer (what the test would miss).
    const open = await server([process.execPath, SCRIPTED_AGENT], { home: homeFolder, agent: { sandbox: { network: { confine: false } } } });
    expect(await ask(open.client, `UNIX ${inHome}`)).toBe(`unix ${inHome}: connected`);
  });
});

describe.runIf(probe.ok && socat)('an agent started again in the sandbox it had (after a crash)', () => {
  it("is started in it as the machine is now: a socket of another program's, gone since, is not a mount that keeps it from starting", async () => {
    // Another program's socket, outside the home and the workspace (another user's project).
    const elsewhere = home(false);
    const unix = createServer((socket) => socket.on('error', () => undefined).end('other\n'));
    const path = join(elsewhere, 'other.sock');
    await new Promise<void>((resolve) => unix.listen(path, resolve));
    const { client } = await server([process.execPath, SCRIPTED_AGENT], { home: home(false) });
    expect(await ask(client, `UNIX ${path}`)).toBe(`unix ${path}: EACCES`);
    await expect(client.request('buckley/ask', { question: 'CRASH NOW' })).rejects.toMatchObject({ message: expect.stringContaining('exited with code 3') });
    // Gone before the agent starts again: its next sandbox is made without it.
    await new Promise<void>((resolve) => unix.close(() => resolve()));
    expect(existsSync(path)).toBe(false);
    expect(await ask(client, 'SECRETS')).toBe('secrets: none');
  });
});

describe.runIf(probe.ok && socat)('an agent whose sandbox hides a socket that goes away as the sandbox is made', () => {
  it("starts all the same: made again as the machine is now, said in the log — another program's socket removed meanwhile is not a mount that keeps it from starting", async () => {
    const path = await listenAt(join(home(false), 'going.sock'), 'other\n');
    // The race made sure of: the socket goes right after the sandbox's arguments named it, before bubblewrap mounts over it.
    const real = (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'bwrap')).find((candidate) => existsSync(candidate))!;
    const bin = tempDir('buckley-bwrap-bin');
    writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\ncase " $* " in *" ${path} "*) rm -f "${path}";; esac\nexec "${real}" "$@"\n`, { mode: 0o755 });
    const { client } = await server([process.execPath, SCRIPTED_AGENT], { home: home(false), bin });
    expect(await ask(client, 'SECRETS')).toBe('secrets: none');
    expect(existsSync(path)).toBe(false);
    await logged(client, `${path} went away while scripted-agent.mjs's sandbox was made (another program's socket or file, removed meanwhile): started again in a sandbox made as the machine is now`);
  });
});

describe.runIf(probe.ok && socat)("a command the agent runs, in a sandbox of its own", () => {
  it("hides a socket bound since the agent started, and runs all the same, once, when that socket goes away as its sandbox is made: made again as the machine is now, said in the log", async () => {
    const real = (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'bwrap')).find((candidate) => existsSync(candidate))!;
    const bin = tempDir('buckley-bwrap-bin');
    const elsewhere = home(false);
    const path = join(elsewhere, 'going.sock');
    // The race made sure of: the socket goes right after the command's sandbox named it, before bubblewrap mounts over it.
    writeFileSync(join(bin, 'bwrap'), `#!/bin/sh\ncase " $* " in *" ${path} "*) rm -f "${path}";; esac\nexec "${real}" "$@"\n`, { mode: 0o755 });
    const { client, workspace } = await server([process.execPath, SCRIPTED_AGENT], { home: home(false), bin, approve: true, workspace: home(false) });
    // The task's agent started before the socket was there: only the command's sandbox names it.
    await client.request('buckley/executeTask', { task: 'TERMINAL true' });
    await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "TERMINAL true`));
    await listenAt(path, 'other\n');
    const task = `TERMINAL echo ran >> ${workspace}/runs.txt; cat ${workspace}/runs.txt`;
    await client.request('buckley/executeTask', { task });
    const answer = (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "TERMINAL echo ran`))).message;
    expect(answer).toContain('terminal: exit 0\nran');
    expect(readFileSync(join(workspace, 'runs.txt'), 'utf8')).toBe('ran\n');
    await logged(client, `${path} went away while the sandbox of \`echo ran >> ${workspace}/runs.txt; cat ${workspace}/runs.txt\` was made (another program's socket or file, removed meanwhile): started again in a sandbox made as the machine is now`);
  });
});

describe.runIf(probe.ok && socat)('the sandbox and an endpoint on a low port', () => {
  it('says an allowed 127.0.0.1 endpoint under port 1024 cannot be reached from the sandbox (its relay could never listen there), and starts the agent without waiting for it', async () => {
    const allowed = await listen(createServer((socket) => socket.on('error', () => undefined).end('ok\n')));
    const { client } = await server([process.execPath, SCRIPTED_AGENT], { home: home(false), agent: { sandbox: { network: { allow: ['127.0.0.1:80', `127.0.0.1:${allowed}`] } } } });
    expect(await ask(client, `TCP 127.0.0.1 ${allowed}`)).toBe(`tcp 127.0.0.1:${allowed}: connected`);
    await logged(client, 'the agent cannot reach 127.0.0.1:80 from its sandbox: a port under 1024 cannot be listened on there. Serve it on a port above 1023, or set buckley.agent.sandbox.network.confine: false');
  });
});

describe.runIf(probe.ok && socat)('the sandbox behind the proxy buckley-lsp itself is given', () => {
  it("goes on through the user's proxy (HTTPS_PROXY of its environment) for the hosts it allows, and never through it for others", async () => {
    // A proxy of the user's: it alone knows the host (a name no resolver here knows).
    const seen: string[] = [];
    const proxy = createHttpServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      if (request.url === 'http://models.corp.example/v1') response.end('hello via the user\'s proxy\n');
      else response.writeHead(502).end('unknown host\n');
    });
    const port = await listen(proxy);
    const { client } = await server([process.execPath, SCRIPTED_AGENT], {
      home: home(false),
      env: { HTTP_PROXY: `http://127.0.0.1:${port}`, NO_PROXY: '127.0.0.1,localhost' },
      agent: { sandbox: { network: { allow: ['models.corp.example'] } } },
    });
    expect(await ask(client, 'FETCH http://models.corp.example/v1')).toBe("fetch http://models.corp.example/v1: 200 hello via the user's proxy");
    expect(await ask(client, 'FETCH http://elsewhere.corp.example/')).toMatch(/^fetch http:\/\/elsewhere\.corp\.example\/: 403 buckley-lsp's sandbox does not let the agent reach elsewhere\.corp\.example:80/);
    expect(seen).toEqual(['GET http://models.corp.example/v1']);
  });
});

/** A Unix socket listening at `path`, answering `greeting`. */
async function listenAt(path: string, greeting: string): Promise<string> {
  const unix = createServer((socket) => socket.on('error', () => undefined).end(greeting));
  await new Promise<void>((resolve) => unix.listen(path, resolve));
  cleanups.push(() => new Promise<void>((resolve) => unix.close(() => resolve())));
  return path;
}

async function listen(server: Server | HttpServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

