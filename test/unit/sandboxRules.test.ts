/**
 * The sandbox's rules as functions: which known agent a command runs however it is started,
 * which variables are secrets, where the agent's network may go, and which path a failure says
 * the agent could not write.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deniedWrite, deniedWriteLine } from '../../src/coordinator/agents/deniedWrites.js';
import { allows, mayReach, ruleOf } from '../../src/coordinator/agents/egress.js';
import { knownByAcpName, knownByCommand, knownByScript } from '../../src/coordinator/agents/recognize.js';
import { vanishedMount, type SandboxPlan } from '../../src/coordinator/agents/sandbox.js';
import { agentEnvironmentFor, egressRules, guardedPlaces, holdsTheSystem } from '../../src/coordinator/agents/sandboxPlans.js';
import { runsLater } from '../../src/risk/paths.js';
import { looksSecret, withoutSecrets } from '../../src/coordinator/agents/secrets.js';
import { upstreamProxy, userProxyEnvironment } from '../../src/coordinator/agents/sandboxNetwork.js';
import { tempDir } from '../helpers/temp.js';

const title = (command: string[]) => knownByCommand(command)?.title;

describe('known agents, however they are started', () => {
  it('by their program, by npx, bunx, pnpm dlx or yarn dlx with the package, and by a file inside the package', () => {
    expect(title(['claude-agent-acp'])).toBe('Claude Code');
    expect(title(['/usr/local/bin/gemini', '--acp'])).toBe('Gemini CLI');
    expect(title(['npx', '-y', '@zed-industries/codex-acp@0.16.0'])).toBe('Codex');
    expect(title(['bunx', 'opencode-ai', 'acp'])).toBe('opencode');
    expect(title(['pnpm', 'dlx', '@google/gemini-cli', '--acp'])).toBe('Gemini CLI');
    expect(title(['yarn', 'dlx', '@qwen-code/qwen-code@0.24.4', '--acp'])).toBe('Qwen Code');
    expect(title(['npx', '--package=@github/copilot', 'copilot', '--acp'])).toBe('GitHub Copilot CLI');
    expect(title(['node', '/home/u/.npm-global/lib/node_modules/@google/gemini-cli/bundle/gemini.js', '--acp'])).toBe('Gemini CLI');
    expect(title(['node', '/opt/x/node_modules/@qwen-code/qwen-code/cli-entry.js', '--acp'])).toBe('Qwen Code');
    expect(title(['/p/node_modules/opencode-linux-x64-baseline/bin/opencode', 'acp'])).toBe('opencode');
    expect(title(['buckley', 'acp', '--workdir', '/w', '--log', '/tmp/b.log'])).toBe('Buckley');
    expect(title(['node', '--no-warnings', '/x/claude-agent-acp.js'])).toBe('Claude Code');
  });

  it('behind a wrapper script, by the line of it that runs the agent', () => {
    const bin = tempDir('buckley-wrappers');
    const script = (name: string, text: string) => {
      writeFileSync(join(bin, name), text, { mode: 0o755 });
      return join(bin, name);
    };
    expect(knownByScript(script('a', '#!/bin/sh\n# my env\nexport OPENAI_API_KEY="$(pass show openai)"\nexec /usr/local/bin/opencode acp "$@"\n'))?.title).toBe('opencode');
    expect(knownByScript(script('b', "#!/usr/bin/env bash\nset -e\nnpx -y '@google/gemini-cli@0.61.0' --acp\n"))?.title).toBe('Gemini CLI');
    expect(knownByScript(script('c', '#!/bin/sh\nexec node /opt/my-agent.js "$@"\n'))).toBeUndefined();
    expect(knownByScript(script('d', 'ELF\0binary'))).toBeUndefined();
    expect(knownByScript(join(bin, 'missing'))).toBeUndefined();
  });

  it("not by an argument that happens to share a name, nor by a wrapper's: that is what agentInfo says after initialize", () => {
    expect(title(['node', '/home/u/my-agent.js', '--workspace', '/home/u/codex'])).toBeUndefined();
    expect(title(['/home/u/bin/ai-wrapper'])).toBeUndefined();
    expect(knownByAcpName('gemini-cli')?.title).toBe('Gemini CLI');
    expect(knownByAcpName('OpenCode')?.title).toBe('opencode');
    expect(knownByAcpName('Copilot')?.title).toBe('GitHub Copilot CLI');
    expect(knownByAcpName('Buckley')?.title).toBe('Buckley');
  });
});

describe("the agent's environment", () => {
  it('keeps back what looks like a secret by its name (or a URL with a password); not a count of tokens or a working directory', () => {
    for (const name of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'DATABASE_PASSWORD', 'NPM_CONFIG__AUTH', 'AZURE_CLIENT_SECRET', 'GOOGLE_APPLICATION_CREDENTIALS', 'PGPASSWORD', 'MYSQL_PWD', 'SSH_AUTH_SOCK', 'SENTRY_DSN', 'NATS_PASSWORD', 'NATS_TOKEN', 'NATS_CREDS', 'NATS_KEY'])
      expect(looksSecret(name, 'x'), name).toBe(true);
    expect(looksSecret('DATABASE_URL', 'postgres://app:hunter2@db/app')).toBe(true);
    expect(looksSecret('SERVICE_URL', 'https://user:pw@api.example.com')).toBe(true);
    for (const name of ['DB_PASS', 'SMTP_PASS', 'GH_PAT', 'AZURE_DEVOPS_EXT_PAT', 'BW_SESSION', 'OP_SESSION_my_team']) expect(looksSecret(name, 'x'), name).toBe(true);
  });

  it('keeps back a secret by its value whatever the variable is called: keys in the forms services give them, signed tokens, private keys, webhooks, URLs with a secret in their query', () => {
    const secrets = {
      MY_GH: `ghp_${'a1B2'.repeat(9)}`,
      CI_THING: `github_pat_${'11AB'.repeat(10)}`,
      LAB: `glpat-${'x'.repeat(20)}`,
      MODEL: `sk-proj-${'Ab3_'.repeat(10)}`,
      PAY: `sk_live_${'9'.repeat(24)}`,
      SLACKBOT: `xoxb-${'1234567890'}-abcdefghij`,
      PUBLISH: `npm_${'Q'.repeat(36)}`,
      HUB: `hf_${'abcdefghij'.repeat(3)}kl`,
      MAPS: `AIza${'S'.repeat(35)}`,
      AWS_ID: 'AKIAIOSFODNN7EXAMPLE',
      SESSION_JWT: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      DEPLOY: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----',
      NOTIFY: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX',
      BUCKET: 'https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=abcdEFGH1234%2Bxyz',
      FEED: 'https://example.com/feed.xml?access_token=0123456789abcdef',
    };
    for (const [name, value] of Object.entries(secrets)) expect(looksSecret(name, value), name).toBe(true);
    const plain = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      HOME: '/home/someone',
      EDITOR: 'nvim',
      LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33',
      npm_config_registry: 'https://registry.npmjs.org/',
      SEARCH: 'https://example.com/search?q=keyboard+shortcuts',
      GIT_SHA: '0123456789abcdef0123456789abcdef01234567',
      SKETCH: 'sk-short',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      XDG_SESSION_ID: '3',
    };
    for (const [name, value] of Object.entries(plain)) expect(looksSecret(name, value), name).toBe(false);
    for (const name of ['PATH', 'HOME', 'PWD', 'LANG', 'MAX_THINKING_TOKENS', 'TERM', 'NODE_OPTIONS', 'KEYTIMEOUT', 'TOKENIZERS_PARALLELISM', 'KEYBOARD_LAYOUT']) expect(looksSecret(name, 'x'), name).toBe(false);
  });

  it("passes the known agent's own key, the user's passEnv (names and patterns) and buckley.agent.env; drops our variables and IS_SANDBOX", () => {
    const server = { PATH: '/bin', ANTHROPIC_API_KEY: 'a', OPENAI_API_KEY: 'o', AWS_SECRET_ACCESS_KEY: 's', AWS_SESSION_TOKEN: 't', BUCKLEY_LOG: 'info', IS_SANDBOX: '1' };
    const claude = knownByCommand(['claude-agent-acp']);
    const { env, withheld } = agentEnvironmentFor(server, { passEnv: ['AWS_SESSION_*'], env: { EXTRA_TOKEN: 'e' } }, claude);
    expect(Object.keys(env).sort()).toEqual(['ANTHROPIC_API_KEY', 'AWS_SESSION_TOKEN', 'CLAUDE_CODE_MAX_RETRIES', 'EXTRA_TOKEN', 'PATH']);
    expect(withheld).toEqual(['AWS_SECRET_ACCESS_KEY', 'OPENAI_API_KEY']);
    expect(withoutSecrets({ A_KEY: '1' }, () => false, { A_KEY: '2' })).toEqual({ env: { A_KEY: '2' }, withheld: [] });
  });

  it("gives an agent whose model is reached through a cloud (Claude Code on Bedrock or Vertex, Gemini CLI on Vertex) that cloud's login and hosts, and no other agent", () => {
    const server = { PATH: '/bin', HOME: '/home/dev', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 's', GOOGLE_APPLICATION_CREDENTIALS: '/home/dev/sa.json' };
    const claude = knownByCommand(['claude-agent-acp']);
    const gemini = knownByCommand(['gemini', '--acp']);
    expect(agentEnvironmentFor(server, { env: { CLAUDE_CODE_USE_BEDROCK: '1' } }, claude).withheld).toEqual(['GOOGLE_APPLICATION_CREDENTIALS']);
    expect(agentEnvironmentFor(server, {}, claude).withheld).toEqual(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'GOOGLE_APPLICATION_CREDENTIALS']);
    expect(agentEnvironmentFor({ ...server, CLAUDE_CODE_USE_VERTEX: 'true' }, {}, claude).withheld).toEqual(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
    const hosts = (known: typeof claude, env: NodeJS.ProcessEnv) => egressRules({ known, env, given: {}, mcpServers: {}, editorMcp: undefined, settings: { allow: [], allowInTasks: [] }, task: false }).map((rule) => rule.host);
    expect(hosts(claude, { ...server, CLAUDE_CODE_USE_BEDROCK: '1' })).toEqual(expect.arrayContaining(['bedrock-runtime.*.amazonaws.com', 'sts.*.amazonaws.com']));
    expect(hosts(claude, server)).not.toContain('bedrock-runtime.*.amazonaws.com');
    expect(hosts(gemini, { ...server, GOOGLE_GENAI_USE_VERTEXAI: 'true' })).toEqual(expect.arrayContaining(['*-aiplatform.googleapis.com', 'iamcredentials.googleapis.com']));
    expect(hosts(gemini, server)).not.toContain('iamcredentials.googleapis.com');
  });

  it('takes the cloud an agent is told to use in its own settings as well: Claude Code’s settings env, Gemini CLI’s chosen way to log in', () => {
    const userHome = tempDir('buckley-cloud');
    mkdirSync(join(userHome, '.claude'));
    writeFileSync(join(userHome, '.claude', 'settings.json'), JSON.stringify({ env: { CLAUDE_CODE_USE_BEDROCK: '1', AWS_REGION: 'eu-west-1' } }));
    mkdirSync(join(userHome, '.gemini'));
    writeFileSync(join(userHome, '.gemini', 'settings.json'), '{\n  // as its users write it\n  "security": { "auth": { "selectedType": "vertex-ai" } },\n}\n');
    const server = { PATH: '/bin', HOME: userHome, AWS_SECRET_ACCESS_KEY: 's', GOOGLE_APPLICATION_CREDENTIALS: join(userHome, 'sa.json') };
    expect(agentEnvironmentFor(server, {}, knownByCommand(['claude-agent-acp'])).withheld).toEqual(['GOOGLE_APPLICATION_CREDENTIALS']);
    expect(agentEnvironmentFor(server, {}, knownByCommand(['gemini', '--acp'])).withheld).toEqual(['AWS_SECRET_ACCESS_KEY']);
  });

  it('passes an agent that uses whichever provider it has a key for (opencode) every provider’s key; one agent of one provider, its own only', () => {
    const server = { PATH: '/bin', GROQ_API_KEY: 'g', DEEPSEEK_API_KEY: 'd', GITHUB_TOKEN: 't' };
    expect(agentEnvironmentFor(server, {}, knownByCommand(['opencode', 'acp'])).withheld).toEqual(['GITHUB_TOKEN']);
    expect(agentEnvironmentFor(server, {}, knownByCommand(['claude-agent-acp'])).withheld).toEqual(['DEEPSEEK_API_KEY', 'GITHUB_TOKEN', 'GROQ_API_KEY']);
  });
});

describe("the agent's network", () => {
  const rules = ['api.openai.com', '*.googleapis.com', '127.0.0.1:11434', '*-aiplatform.googleapis.com', '[::1]:8080'].map((entry) => ruleOf(entry)!);

  it('lets through the hosts named, with their port where one is named; patterns match names, not addresses', () => {
    expect(allows(rules, { host: 'api.openai.com', port: 443 })).toBe(true);
    expect(allows(rules, { host: 'API.OpenAI.com.', port: 443 })).toBe(true);
    expect(allows(rules, { host: 'generativelanguage.googleapis.com', port: 443 })).toBe(true);
    expect(allows(rules, { host: 'us-central1-aiplatform.googleapis.com', port: 443 })).toBe(true);
    expect(allows(rules, { host: '127.0.0.1', port: 11434 })).toBe(true);
    expect(allows(rules, { host: '127.0.0.1', port: 5432 })).toBe(false);
    expect(allows(rules, { host: '::1', port: 8080 })).toBe(true);
    expect(allows(rules, { host: 'evil.com', port: 443 })).toBe(false);
    expect(allows(rules, { host: 'api.openai.com.evil.com', port: 443 })).toBe(false);
  });

  it("never reaches the machine's or its network's addresses through a pattern: a name resolving to 127.0.0.1 under `*` reaches nothing", () => {
    const any = [ruleOf('*')!];
    expect(mayReach(any, { host: 'example.com', port: 443 }, '93.184.216.34')).toBe(true);
    expect(mayReach(any, { host: 'localtest.me', port: 5432 }, '127.0.0.1')).toBe(false);
    expect(mayReach(any, { host: 'intranet.example', port: 443 }, '10.1.2.3')).toBe(false);
    expect(mayReach([ruleOf('models.internal:8000')!], { host: 'models.internal', port: 8000 }, '10.1.2.3')).toBe(true);
  });

  it("judges the machine's addresses however IPv6 writes them: a name resolving to ::ffff:7f00:1, ::1, fd00::, fe80:: or a multicast group reaches nothing under `*`", () => {
    const any = [ruleOf('*')!];
    for (const address of ['::ffff:7f00:1', '::ffff:127.0.0.1', '::ffff:a01:203', '::1', '::', '::7f00:1', 'fd12::1', 'fe80::1', 'ff02::1', '64:ff9b::7f00:1', '2002:7f00:1::1', '0.0.0.0', '100.100.1.1', '224.0.0.251', '255.255.255.255', '198.18.0.1'])
      expect(mayReach(any, { host: 'rebound.example', port: 5432 }, address), address).toBe(false);
    for (const address of ['93.184.216.34', '::ffff:93.184.216.34', '2606:2800:220:1::1']) expect(mayReach(any, { host: 'example.com', port: 443 }, address), address).toBe(true);
  });

  it("reaches the known agent's hosts, those of the providers it has a key for, its configured endpoints, its MCP servers (ours and its own settings') and the editor's", () => {
    const codexHome = tempDir('buckley-codex');
    writeFileSync(join(codexHome, 'config.toml'), '[model_providers.local]\nbase_url = "http://127.0.0.1:4000/v1"\n[mcp_servers.linear]\nurl = "https://mcp.linear.app/mcp"\n');
    const entries = egressRules({
      known: knownByCommand(['codex-acp']),
      env: { CODEX_HOME: codexHome, OPENROUTER_API_KEY: 'k' },
      given: { SOME_URL: 'https://models.example.com/v1' },
      mcpServers: { docs: { url: 'https://mcp.example.com/mcp', type: 'http', headers: {} } },
      editorMcp: 'http://127.0.0.1:39999',
      settings: { allow: ['registry.example.com'], allowInTasks: ['registry.npmjs.org'] },
      task: false,
    }).map((rule) => (rule.port === undefined ? rule.host : `${rule.host}:${rule.port}`));
    expect(entries).toEqual(['api.openai.com', 'chatgpt.com', 'auth.openai.com', 'openrouter.ai', '127.0.0.1:4000', 'mcp.linear.app:443', 'models.example.com:443', 'mcp.example.com:443', '127.0.0.1:39999', 'registry.example.com']);
  });
});

describe('a write the sandbox refused', () => {
  const home = tempDir('buckley-home');
  mkdirSync(join(home, '.ssh'));
  // A home under /tmp, as the sandbox shows it: read-only but for the agent's state.
  const plan: SandboxPlan = { workspace: join(home, 'ws'), writesWorkspace: false, stateDirs: [join(home, '.claude')], stateFiles: [], workspaceCredentials: [], home, programPaths: [], cwd: join(home, 'ws'), visible: [home] };

  it("is found by its path in the agent's words: EROFS, Node's recursive mkdir's ENOENT, Go's", () => {
    expect(deniedWrite([`Error: EROFS: read-only file system, open '${home}/.gemini/projects.json'`], plan)).toEqual({ path: `${home}/.gemini/projects.json`, folder: `${home}/.gemini` });
    expect(deniedWrite([`ENOENT: no such file or directory, mkdir '${home}/.qwen/extensions'`], plan)?.folder).toBe(`${home}/.qwen`);
    expect(deniedWrite(['Error: open log file: open /var/log/buckley/acp.log: read-only file system'], plan)).toEqual({ path: '/var/log/buckley/acp.log', folder: '/var/log/buckley' });
    // An application's folder of the home's shared ones, not the shared one.
    expect(deniedWrite([`EROFS: read-only file system, mkdir '${home}/.cache/copilot/pkg/linux-x64'`], plan)?.folder).toBe(`${home}/.cache/copilot`);
    expect(deniedWrite([`EROFS: read-only file system, open '${home}/.local/share/opencode/opencode.db'`], plan)?.folder).toBe(`${home}/.local/share/opencode`);
    expect(deniedWriteLine('Qwen Code', { path: `${home}/.qwen/extensions`, folder: `${home}/.qwen` }, home)).toBe(
      `Qwen Code could not write ~/.qwen/extensions: buckley-lsp's sandbox keeps ~/.qwen read-only for it. To let it write there, set buckley.agent.sandbox.writable: ["~/.qwen"]`,
    );
  });

  it('is not a write the agent may make, a read of a hidden credential, or a failure that writes nothing', () => {
    expect(deniedWrite([`EROFS: read-only file system, open '${home}/.claude/settings.json'`], plan)).toBeUndefined();
    expect(deniedWrite([`EACCES: permission denied, open '${home}/.ssh/id_ed25519'`], plan)).toBeUndefined();
    expect(deniedWrite([`Error: Cannot find module '${home}/agent/x.js'`], plan)).toBeUndefined();
    // The sandbox's own /tmp can be written.
    expect(deniedWrite(["EROFS: read-only file system, open '/tmp/x'"], plan)).toBeUndefined();
  });
});

describe("the proxy the agent's connections go on through", () => {
  it("is buckley-lsp's own, unless buckley.agent.env gives the agent one: then that one alone, its NO_PROXY with it", () => {
    const server = { HTTPS_PROXY: 'http://corp:3128', NO_PROXY: 'intranet', PATH: '/bin' };
    const mine = upstreamProxy(userProxyEnvironment(server, { OPENAI_API_KEY: 'k' }))!;
    expect([mine.host, mine.port, mine.applies('api.openai.com'), mine.applies('wiki.intranet')]).toEqual(['corp', 3128, true, false]);
    const agents = upstreamProxy(userProxyEnvironment(server, { https_proxy: 'http://u:p@agent-proxy:8080' }))!;
    expect([agents.host, agents.port, agents.authorization, agents.applies('wiki.intranet')]).toEqual(['agent-proxy', 8080, { 'proxy-authorization': `Basic ${Buffer.from('u:p').toString('base64')}` }, true]);
    expect(userProxyEnvironment(server, { https_proxy: 'http://agent-proxy:8080' }).PATH).toBe('/bin');
  });
});

describe('where a task may not write', () => {
  const env = { HOME: '/home/ada' };
  it('not a workspace that holds the system or the home; a project at the top, or the home, it may', () => {
    expect(holdsTheSystem('/', env)).toBe('it is the whole file system');
    expect(holdsTheSystem('/home', env)).toBe('it holds your home (/home/ada) and what is beside it');
    expect(holdsTheSystem('/usr', env)).toBe("/usr is one of the system's folders");
    expect(holdsTheSystem('/etc', env)).toBe("/etc is one of the system's folders");
    expect(holdsTheSystem('/app', env)).toBeUndefined();
    expect(holdsTheSystem('/home/ada', env)).toBeUndefined();
    expect(holdsTheSystem('/home/ada/project', env)).toBeUndefined();
  });

  it("guards the user's startup files, and buckley-lsp's own settings and state, only where the task's workspace or writable holds them, but one writable names itself", () => {
    expect(guardedPlaces(undefined, env, [])).toEqual([]);
    const whole = guardedPlaces(undefined, env, ['~']);
    expect(whole).toEqual(expect.arrayContaining(['/home/ada/.bashrc', '/home/ada/.zshrc', '/home/ada/.local/bin', '/home/ada/.config/autostart', '/home/ada/.config/nvim', '/home/ada/.config/buckley-lsp', '/home/ada/.local/state/buckley-lsp']));
    expect(guardedPlaces(undefined, env, [], '/home')).toEqual(expect.arrayContaining(whole));
    expect(guardedPlaces(undefined, env, ['~', '~/.local/bin'])).not.toContain('/home/ada/.local/bin');
  });

  it("guards a task's workspace's own editor settings, which the editor applies outside any sandbox, but one writable names", () => {
    const project = ['.zed', '.helix', '.vscode/settings.json', '.vscode/tasks.json', '.nvim.lua', '.nvimrc', '.exrc', '.dir-locals.el', '.dir-locals-2.el'].map((name) => `/home/ada/project/${name}`);
    expect(guardedPlaces(undefined, env, [], '/home/ada/project')).toEqual(project);
    expect(guardedPlaces(undefined, env, ['/home/ada/project/.zed'], '/home/ada/project')).toEqual(project.filter((place) => place !== '/home/ada/project/.zed'));
    // Each is what the risk rules judge a write of (a folder by the settings file in it): the two lists agree.
    const judged = (place: string) => runsLater(place) ?? ['settings.json', 'languages.toml'].map((name) => runsLater(`${place}/${name}`)).find(Boolean);
    for (const place of project) expect(judged(place), place).toBeDefined();
  });
});

describe("what keeps a known agent from working, by its own rules", () => {
  it('Codex: its state under the temporary folder, where it makes no helpers (TMPDIR, else /tmp)', () => {
    const codex = knownByCommand(['codex-acp'])!;
    expect(codex.caveats!({ CODEX_HOME: '/tmp/ci/.codex' })).toEqual([expect.stringContaining('Set CODEX_HOME (or HOME) to a folder outside /tmp')]);
    expect(codex.caveats!({ HOME: '/tmp/ci' })).toHaveLength(1);
    expect(codex.caveats!({ HOME: '/tmp/ci', TMPDIR: '/var/tmp' })).toEqual([]);
    expect(codex.caveats!({ HOME: '/home/ada' })).toEqual([]);
  });
});

describe('a sandbox bubblewrap could not make', () => {
  it('names the path it could not mount over where nothing is there now, in each of the ways bubblewrap says it, inside its roots too', () => {
    const gone = join(tempDir('buckley-vanished'), 'going.sock');
    expect(vanishedMount([`bwrap: Can't create file at ${gone}: Read-only file system`])).toBe(gone);
    expect(vanishedMount(['scripted-agent.mjs exited with code 1.', `bwrap: Can't mkdir parents for ${gone}: Read-only file system`])).toBe(gone);
    expect(vanishedMount([`bwrap: Can't bind mount /oldroot/dev/null on /newroot${gone}: No such file or directory`])).toBe(gone);
    expect(vanishedMount([`bwrap: Can't find source path ${gone}: No such file or directory`])).toBe(gone);
  });

  it('names nothing where what it names is still there, or the failure is not a mount', () => {
    const there = tempDir('buckley-there');
    expect(vanishedMount([`bwrap: Can't create file at ${there}: Permission denied`])).toBeUndefined();
    expect(vanishedMount(['bwrap: No permissions to create new namespace', 'open /nowhere/at/all: ENOENT'])).toBeUndefined();
  });
});
