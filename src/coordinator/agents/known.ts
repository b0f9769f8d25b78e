/**
 * What buckley-lsp knows of the ACP agents people run, from their own documentation and code:
 * where each keeps its state (writable in the sandbox, so it can run at all), the modes an ask
 * and a task run in, the variables that hold its key (kept in its environment, named when the
 * model's API says 401), how its users log in, and the hosts its model's API lives on (what its
 * confined network reaches: sandboxNetwork.ts). recognize.ts tells which one a command runs.
 * Every other agent gets the general rules: modes by what they are called (modes.ts), no state
 * but `buckley.agent.sandbox.writable`, the hosts `buckley.agent.sandbox.network.allow` names.
 */
import type { GuardedKeys } from './guardedState.js';
import { existsSync } from 'node:fs';
import { parse as parseJsonc } from 'jsonc-parser';
import { readFileBounded } from '../../fileAccess.js';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface KnownAgent {
  /** As people call it. */
  title: string;
  /** Its programs' names (the bin, the binary a launcher runs). */
  bins: RegExp;
  /** Its npm packages (and their platform packages): named to npx, bunx or pnpm dlx, or in the path of one of its files. */
  packages: readonly string[];
  /** Its ACP `agentInfo.name`. */
  acpNames: RegExp;
  /** The mode ids an ask and a task run in (its read-only mode; the one that asks before changes); none where it has no such modes. */
  modes?: { ask: string; task: string };
  /** Where it keeps its state (sessions, settings, caches, logs), in its environment. */
  stateDirs(env: NodeJS.ProcessEnv): string[];
  /**
   * Where in its state a write runs code later, outside any sandbox when the user next starts it
   * in a terminal: its settings (hooks, MCP servers' commands, a notify program), its plugins and
   * extensions — from its documentation. Read-only in the sandbox; one made in a turn is moved
   * aside. `folder/*`: each folder in it (an extension), the folder itself the agent's to write.
   */
  runsCode?(env: NodeJS.ProcessEnv): string[];
  /** Keys of a state file it must write that run code later as well (Claude Code's MCP servers in `~/.claude.json`): put back after a turn that changed them. */
  runsCodeIn?(env: NodeJS.ProcessEnv): GuardedKeys[];
  /** State files of its own, and what a new one holds (it must exist to be written in the sandbox); `command` names some (a `--log` file). */
  stateFiles?(env: NodeJS.ProcessEnv, command: readonly string[]): { path: string; initial: string }[];
  /** The variables that hold its API key, the first the one to suggest. */
  keys: readonly string[];
  /** The hosts of its model's API and its login, as its network reaches them. */
  hosts: readonly string[];
  /** The URLs its configuration points its model at instead (its variables, its settings files). */
  endpoints?(env: NodeJS.ProcessEnv): string[];
  /** How its users log in otherwise, for "needs authentication". */
  login?: string;
  /** What in this environment keeps it from working as it should, by its own rules, with what to do. */
  caveats?(env: NodeJS.ProcessEnv): string[];
  /** Its environment unless the user's says otherwise. */
  defaultEnv?: Record<string, string>;
  /** It says it takes images in a prompt but drops them unsaid (so the user is told, as for an agent that takes none). */
  dropsImages?: true;
  /** The cloud its model is reached through, where its environment chooses one (Amazon Bedrock, Google Vertex AI). */
  cloudLogins?(env: NodeJS.ProcessEnv): CloudLogin[];
}

/**
 * A cloud's login the agent's model is reached through: its variables (which look secret), its
 * credential folder (hidden from every other agent), where it refreshes a token, and the hosts of
 * its API and its token services.
 */
export interface CloudLogin {
  /** "Amazon Bedrock (CLAUDE_CODE_USE_BEDROCK)". */
  what: string;
  /** Names and patterns (`AWS_*`) of its variables, passed on. */
  keys: readonly string[];
  /** Its credential places, shown read-only. */
  shown: string[];
  /** Where it writes a refreshed token (an SSO cache), where it exists. */
  writable: string[];
  hosts: readonly string[];
}

/** A variable set to something that means yes (`1`, `true`). */
const chosen = (env: NodeJS.ProcessEnv, name: string) => /^(1|true|yes|on)$/i.test(env[name]?.trim() ?? '');

/** The AWS SDK's login: its variables, `~/.aws` (or where AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE put it), its SSO and CLI caches. */
export const awsLogin = (env: NodeJS.ProcessEnv, why: string): CloudLogin => ({
  what: `Amazon Bedrock (${why})`,
  keys: ['AWS_*'],
  shown: [join(home(env), '.aws'), ...variables(env, 'AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE')],
  writable: ['sso/cache', 'cli/cache'].map((folder) => join(home(env), '.aws', folder)),
  hosts: ['bedrock-runtime.*.amazonaws.com', 'bedrock.*.amazonaws.com', 'sts.amazonaws.com', 'sts.*.amazonaws.com', 'portal.sso.*.amazonaws.com', 'oidc.*.amazonaws.com'],
});

/** Google's application default credentials: gcloud's folder (or CLOUDSDK_CONFIG), the key file GOOGLE_APPLICATION_CREDENTIALS names. */
export const googleCloudLogin = (env: NodeJS.ProcessEnv, why: string): CloudLogin => ({
  what: `Google Vertex AI (${why})`,
  keys: ['GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_CLOUD_*', 'CLOUDSDK_*'],
  shown: [env.CLOUDSDK_CONFIG || join(xdg(env, 'XDG_CONFIG_HOME'), 'gcloud'), ...variables(env, 'GOOGLE_APPLICATION_CREDENTIALS')],
  writable: [],
  hosts: ['*-aiplatform.googleapis.com', 'aiplatform.googleapis.com', 'oauth2.googleapis.com', 'sts.googleapis.com', 'iamcredentials.googleapis.com'],
});

export const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir();
const xdg = (env: NodeJS.ProcessEnv, variable: 'XDG_CONFIG_HOME' | 'XDG_DATA_HOME' | 'XDG_STATE_HOME' | 'XDG_CACHE_HOME') =>
  env[variable] || join(home(env), { XDG_CONFIG_HOME: '.config', XDG_DATA_HOME: '.local/share', XDG_STATE_HOME: '.local/state', XDG_CACHE_HOME: '.cache' }[variable]);
/** The four XDG folders of an application named `name`. */
const xdgDirs = (env: NodeJS.ProcessEnv, name: string) => (['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME'] as const).map((variable) => join(xdg(env, variable), name));
/** The plugins opencode (and Kilo, its fork) loads from its config folder. */
const opencodePlugins = (env: NodeJS.ProcessEnv, name: string) => ['plugin', 'plugins'].map((folder) => join(xdg(env, 'XDG_CONFIG_HOME'), name, folder));
/**
 * What in opencode's (and Kilo's) config runs commands: MCP servers, plugins, formatters, language
 * servers — and its providers: a `baseURL` with `{env:GITHUB_TOKEN}` as its key sends that
 * variable where the URL points the next time you run it. Keys, not the file: it writes its config
 * itself at its first start (`$schema`; Kilo migrates its permissions there).
 */
const OPENCODE_COMMANDS = ['mcp', 'plugin', 'formatter', 'lsp', 'provider'];
/** The values of those of `names` that are set. */
const variables = (env: NodeJS.ProcessEnv, ...names: string[]) => names.flatMap((name) => (env[name] ? [env[name]!] : []));

/**
 * The hosts of the model APIs whose key variable is set: an agent that can use several providers
 * (opencode, goose, Buckley) uses the one it has a key for.
 */
export const PROVIDER_HOSTS: Readonly<Record<string, readonly string[]>> = {
  ANTHROPIC_API_KEY: ['api.anthropic.com'],
  OPENAI_API_KEY: ['api.openai.com'],
  OPENROUTER_API_KEY: ['openrouter.ai'],
  GEMINI_API_KEY: ['generativelanguage.googleapis.com'],
  GOOGLE_API_KEY: ['generativelanguage.googleapis.com'],
  GOOGLE_GENERATIVE_AI_API_KEY: ['generativelanguage.googleapis.com'],
  GROQ_API_KEY: ['api.groq.com'],
  MISTRAL_API_KEY: ['api.mistral.ai'],
  DEEPSEEK_API_KEY: ['api.deepseek.com'],
  XAI_API_KEY: ['api.x.ai'],
  DASHSCOPE_API_KEY: ['dashscope.aliyuncs.com', 'dashscope-intl.aliyuncs.com'],
};

/**
 * An agent that uses whichever provider it has a key for (opencode, Kilo, goose, Buckley): its
 * own key variables first (the one to suggest), then every provider's.
 */
const anyProvider = (...own: string[]): string[] => [...new Set([...own, ...Object.keys(PROVIDER_HOSTS)])];

/** The value at `keys` in a JSON settings file (comments and trailing commas allowed); undefined where there is none. */
function settingAt(path: string, ...keys: string[]): unknown {
  let value: unknown;
  try {
    if (!existsSync(path)) return undefined;
    value = parseJsonc(readFileBounded(path, 1024 * 1024).toString('utf8'), [], { allowTrailingComma: true });
  } catch {
    return undefined;
  }
  for (const key of keys) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/** Claude Code's environment as it runs: its settings' `env` (where its users choose Bedrock or Vertex), under the process's. */
const claudeEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
  const given = settingAt(join(claudeHome(env), 'settings.json'), 'env');
  const strings = given && typeof given === 'object' ? Object.fromEntries(Object.entries(given).filter(([, value]) => typeof value === 'string')) : {};
  return { ...strings, ...env };
};

/** Values of `key = "…"` (TOML) or `"key": "…"` (JSON) in a settings file: where it points a model. */
function settingsUrls(path: string, key: string): string[] {
  let text: string;
  try {
    if (!existsSync(path)) return [];
    text = readFileBounded(path, 1024 * 1024).toString('utf8');
  } catch {
    return [];
  }
  const pattern = new RegExp(`"?${key}"?\\s*[=:]\\s*"(https?://[^"\\s]+)"`, 'g');
  return [...text.matchAll(pattern)].map((match) => match[1]!);
}

const clineDir = (env: NodeJS.ProcessEnv) => env.CLINE_DIR || join(home(env), '.cline');
const claudeHome = (env: NodeJS.ProcessEnv) => env.CLAUDE_CONFIG_DIR || join(home(env), '.claude');
const codexHome = (env: NodeJS.ProcessEnv) => env.CODEX_HOME || join(home(env), '.codex');
/** Under the temporary folder as Rust's `temp_dir()` finds it: TMPDIR, else /tmp. */
const underTemp = (path: string, env: NodeJS.ProcessEnv) => {
  const temp = (env.TMPDIR || '/tmp').replace(/\/+$/, '');
  return path === temp || path.startsWith(`${temp}/`);
};
/** Kilo's config files (opencode's names too, as the fork of it that it is). */
const kiloConfigs = (env: NodeJS.ProcessEnv) => [...['kilo.json', 'kilo.jsonc', 'opencode.json', 'opencode.jsonc'].map((name) => join(env.KILO_CONFIG_DIR || join(xdg(env, 'XDG_CONFIG_HOME'), 'kilo'), name)), ...variables(env, 'KILO_CONFIG')];
const opencodeConfigs = (env: NodeJS.ProcessEnv) => [join(xdg(env, 'XDG_CONFIG_HOME'), 'opencode', 'opencode.json'), join(xdg(env, 'XDG_CONFIG_HOME'), 'opencode', 'opencode.jsonc'), ...variables(env, 'OPENCODE_CONFIG')];

/** The value after `flag` (`--log FILE` or `--log=FILE`) on a command line. */
export function flagValue(command: readonly string[], flag: string): string | undefined {
  for (const [index, word] of command.entries()) {
    if (word === flag) return command[index + 1];
    if (word.startsWith(`${flag}=`)) return word.slice(flag.length + 1);
  }
  return undefined;
}

export const KNOWN_AGENTS: readonly KnownAgent[] = [
  {
    title: 'Claude Code',
    bins: /^claude-(agent|code)-acp$|^claude$/,
    packages: ['@zed-industries/claude-agent-acp', '@zed-industries/claude-code-acp', '@agentclientprotocol/claude-agent-acp', '@anthropic-ai/claude-code'],
    acpNames: /claude-(agent|code)-acp/,
    // `plan` is its read-only mode; `default` asks before edits and commands it does not judge safe.
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [claudeHome(env)],
    runsCode: (env) => [join(claudeHome(env), 'settings.json'), join(claudeHome(env), 'settings.local.json')],
    // Its MCP servers (`claude mcp add`), the tools it may use unasked, the workspace's .mcp.json
    // servers it runs, and the folders you trust (it then runs their `.claude/settings.json` hooks
    // and `.mcp.json` servers without asking).
    runsCodeIn: (env) => [{ file: join(env.CLAUDE_CONFIG_DIR || home(env), '.claude.json'), keys: ['mcpServers', 'projects.*.mcpServers', 'projects.*.allowedTools', 'projects.*.enabledMcpjsonServers', 'projects.*.hasTrustDialogAccepted'] }],
    // Its settings file beside the folder: without it, Claude Code's CLI stops before answering.
    stateFiles: (env) => [{ path: join(env.CLAUDE_CONFIG_DIR || home(env), '.claude.json'), initial: '{}\n' }],
    keys: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    hosts: ['api.anthropic.com', 'console.anthropic.com', 'platform.claude.com', 'claude.ai'],
    endpoints: (env) => variables(env, 'ANTHROPIC_BASE_URL', 'ANTHROPIC_BEDROCK_BASE_URL', 'ANTHROPIC_VERTEX_BASE_URL'),
    login: 'run `claude /login` in a terminal',
    cloudLogins: (env) => {
      const runs = claudeEnv(env);
      return [...(chosen(runs, 'CLAUDE_CODE_USE_BEDROCK') ? [awsLogin(runs, 'CLAUDE_CODE_USE_BEDROCK')] : []), ...(chosen(runs, 'CLAUDE_CODE_USE_VERTEX') ? [googleCloudLogin(runs, 'CLAUDE_CODE_USE_VERTEX')] : [])];
    },
    // It retries a failed request (a refused key too) for minutes without a word over ACP: two
    // retries get past a passing failure and bring a lasting one to the editor in seconds.
    defaultEnv: { CLAUDE_CODE_MAX_RETRIES: '2' },
  },
  {
    title: 'Codex',
    bins: /^codex-acp$|^codex$/,
    packages: ['@zed-industries/codex-acp', '@openai/codex'],
    acpNames: /codex-acp/,
    // Codex has no mode that asks before every command: `read-only` asks before every edit and
    // every command that leaves its own sandbox, for asks and tasks alike.
    modes: { ask: 'read-only', task: 'read-only' },
    stateDirs: (env) => [codexHome(env)],
    runsCode: (env) => [join(codexHome(env), 'config.toml'), join(codexHome(env), 'rules')],
    keys: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    hosts: ['api.openai.com', 'chatgpt.com', 'auth.openai.com'],
    // A model provider of its config.toml (`base_url = "…"`).
    endpoints: (env) => [...variables(env, 'OPENAI_BASE_URL'), ...settingsUrls(join(codexHome(env), 'config.toml'), 'base_url')],
    login: 'run `codex login` in a terminal',
    // Codex refuses to make its helpers (its sandbox for commands, apply_patch) under the temporary folder.
    caveats: (env) =>
      underTemp(codexHome(env), env)
        ? [`Codex keeps its state in ${codexHome(env)}, under the temporary folder, where it refuses to make its helpers: its commands fail ("execvp codex-linux-sandbox"). Set CODEX_HOME (or HOME) to a folder outside ${env.TMPDIR || '/tmp'}`]
        : [],
  },
  {
    title: 'Gemini CLI',
    bins: /^gemini(-cli)?$/,
    packages: ['@google/gemini-cli'],
    acpNames: /gemini-cli/,
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [join(env.GEMINI_CLI_HOME || home(env), '.gemini')],
    // And the folders you trust: it then loads their own `.gemini/settings.json` (hooks, MCP servers).
    runsCode: (env) => [...['settings.json', 'extensions/*', 'policies', 'trustedFolders.json'].map((name) => join(env.GEMINI_CLI_HOME || home(env), '.gemini', name)), ...variables(env, 'GEMINI_CLI_TRUSTED_FOLDERS_PATH')],
    keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
    hosts: ['generativelanguage.googleapis.com', 'cloudcode-pa.googleapis.com', 'oauth2.googleapis.com', 'aiplatform.googleapis.com', '*-aiplatform.googleapis.com'],
    endpoints: (env) => variables(env, 'GOOGLE_GEMINI_BASE_URL', 'GOOGLE_VERTEX_BASE_URL'),
    login: 'run `gemini` in a terminal and log in',
    // Chosen by its variable, or as its way to log in (`security.auth.selectedType` in its settings).
    cloudLogins: (env) =>
      chosen(env, 'GOOGLE_GENAI_USE_VERTEXAI')
        ? [googleCloudLogin(env, 'GOOGLE_GENAI_USE_VERTEXAI')]
        : settingAt(join(env.GEMINI_CLI_HOME || home(env), '.gemini', 'settings.json'), 'security', 'auth', 'selectedType') === 'vertex-ai'
          ? [googleCloudLogin(env, 'its settings choose vertex-ai')]
          : [],
  },
  {
    title: 'Qwen Code',
    bins: /^qwen(-code)?$/,
    packages: ['@qwen-code/qwen-code'],
    acpNames: /qwen-code/,
    // Qwen starts in `auto`, where its own classifier lets tools run unasked.
    modes: { ask: 'plan', task: 'default' },
    stateDirs: (env) => [join(home(env), '.qwen')],
    // Its extensions folder it makes at start (its enablement file): each extension in it is guarded.
    runsCode: (env) => [...['settings.json', 'extensions/*', 'trustedFolders.json'].map((name) => join(home(env), '.qwen', name)), ...variables(env, 'QWEN_CODE_TRUSTED_FOLDERS_PATH')],
    keys: ['OPENAI_API_KEY', 'DASHSCOPE_API_KEY'],
    hosts: ['dashscope.aliyuncs.com', 'dashscope-intl.aliyuncs.com', 'chat.qwen.ai', 'portal.qwen.ai'],
    endpoints: (env) => variables(env, 'OPENAI_BASE_URL'),
    login: 'run `qwen` in a terminal and choose how to authenticate',
  },
  {
    title: 'opencode',
    bins: /^opencode$/,
    packages: ['opencode-ai', 'opencode-linux-x64', 'opencode-linux-x64-baseline', 'opencode-linux-arm64', 'opencode-linux-x64-musl', 'opencode-linux-x64-baseline-musl', 'opencode-linux-arm64-musl', 'opencode-darwin-arm64', 'opencode-darwin-x64'],
    acpNames: /^opencode$/i,
    // `plan` disallows its edit tools; `build` runs them as its permissions say, which by
    // default is unasked: the permissions it is given below make it ask first.
    modes: { ask: 'plan', task: 'build' },
    stateDirs: (env) => xdgDirs(env, 'opencode'),
    runsCode: (env) => opencodePlugins(env, 'opencode'),
    runsCodeIn: (env) => ['opencode.json', 'opencode.jsonc', 'config.json'].map((name) => ({ file: join(xdg(env, 'XDG_CONFIG_HOME'), 'opencode', name), keys: OPENCODE_COMMANDS })),
    keys: anyProvider('ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY', 'OPENCODE_API_KEY'),
    // OpenCode Zen (its own models) and the models list it reads at start.
    hosts: ['opencode.ai', '*.opencode.ai', 'models.dev'],
    endpoints: (env) => opencodeConfigs(env).flatMap((path) => settingsUrls(path, 'baseURL')),
    login: 'run `opencode auth login` in a terminal',
    // Its permissions, over its user's: edits, commands and fetches ask (ACP
    // session/request_permission) instead of running unasked.
    defaultEnv: { OPENCODE_PERMISSION: JSON.stringify({ edit: 'ask', bash: 'ask', webfetch: 'ask', external_directory: 'ask' }), OPENCODE_DISABLE_AUTOUPDATE: '1' },
  },
  {
    title: 'Kilo Code',
    bins: /^kilo(code)?$/,
    packages: ['@kilocode/cli', '@kilocode/cli-linux-x64', '@kilocode/cli-linux-x64-baseline', '@kilocode/cli-linux-arm64', '@kilocode/cli-linux-x64-musl', '@kilocode/cli-linux-arm64-musl', '@kilocode/cli-darwin-arm64', '@kilocode/cli-darwin-x64'],
    acpNames: /^kilo( code)?$/i,
    // A fork of opencode: `ask` makes no changes (`plan` still writes its plan files); `code` runs
    // tools as its permissions say, which by default is unasked: those given below make it ask.
    modes: { ask: 'ask', task: 'code' },
    // Its XDG folders, and the policies of its own sandbox.
    stateDirs: (env) => [...xdgDirs(env, 'kilo'), join(xdg(env, 'XDG_STATE_HOME'), 'kilo-sandbox-policy')],
    runsCode: (env) => opencodePlugins(env, 'kilo'),
    runsCodeIn: (env) => kiloConfigs(env).map((file) => ({ file, keys: OPENCODE_COMMANDS })),
    keys: anyProvider('KILO_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY', 'GEMINI_API_KEY'),
    // Its gateway (its own models), its login, and the models list it reads at start.
    hosts: ['kilo.ai', '*.kilo.ai', 'models.dev'],
    endpoints: (env) => kiloConfigs(env).flatMap((path) => settingsUrls(path, 'baseURL')),
    login: 'run `kilo auth login` in a terminal',
    defaultEnv: { KILO_PERMISSION: JSON.stringify({ edit: 'ask', bash: 'ask', webfetch: 'ask', external_directory: 'ask' }), KILO_DISABLE_AUTOUPDATE: '1', KILO_DISABLE_SHARE: '1' },
  },
  {
    title: 'GitHub Copilot CLI',
    bins: /^copilot$/,
    packages: ['@github/copilot', '@github/copilot-linux-x64', '@github/copilot-linux-arm64', '@github/copilot-linuxmusl-x64', '@github/copilot-linuxmusl-arm64', '@github/copilot-darwin-arm64', '@github/copilot-darwin-x64'],
    acpNames: /^copilot$/i,
    // Its ACP modes are URIs; `plan` plans without changing anything, `agent` asks before its tools (`autopilot` does not).
    modes: { ask: 'https://agentclientprotocol.com/protocol/session-modes#plan', task: 'https://agentclientprotocol.com/protocol/session-modes#agent' },
    // Its home, the code it unpacks at start (its cache), and the device id of Microsoft's tools.
    runsCode: (env) => ['mcp-config.json', 'installed-plugins/*'].map((name) => join(env.COPILOT_HOME || join(home(env), '.copilot'), name)),
    // The folders you trust (in the config it writes itself): it works there, its tools and all, unasked.
    runsCodeIn: (env) => [{ file: join(env.COPILOT_HOME || join(home(env), '.copilot'), 'config.json'), keys: ['trusted_folders', 'trustedFolders'] }],
    stateDirs: (env) => [env.COPILOT_HOME || join(home(env), '.copilot'), env.COPILOT_CACHE_HOME || join(xdg(env, 'XDG_CACHE_HOME'), 'copilot'), join(xdg(env, 'XDG_CACHE_HOME'), 'Microsoft', 'DeveloperTools')],
    keys: ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'COPILOT_PROVIDER_API_KEY'],
    hosts: ['api.githubcopilot.com', '*.githubcopilot.com', 'api.github.com', 'github.com'],
    // Its own model provider (`COPILOT_PROVIDER_BASE_URL`, "bring your own key").
    endpoints: (env) => variables(env, 'COPILOT_PROVIDER_BASE_URL', 'COPILOT_API_URL'),
    login: 'run `copilot login` in a terminal',
  },
  {
    title: 'Buckley',
    bins: /^buckley$/,
    packages: [],
    acpNames: /^buckley$/i,
    // Its ACP modes choose a model, not what it may do.
    stateDirs: (env) => [env.BUCKLEY_DATA_DIR || join(home(env), '.buckley')],
    // `buckley acp --log FILE` opens its log at start and exits when it cannot.
    stateFiles: (_env, command) => {
      const log = flagValue(command, '--log');
      return log ? [{ path: log, initial: '' }] : [];
    },
    keys: anyProvider('OPENROUTER_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_API_KEY'),
    hosts: ['openrouter.ai'],
    endpoints: (env) => variables(env, 'BUCKLEY_OLLAMA_BASE_URL', 'BUCKLEY_OPENAI_COMPATIBLE_BASE_URL', 'BUCKLEY_LITELLM_BASE_URL', 'LITELLM_BASE_URL'),
    login: 'set OPENROUTER_API_KEY (or another provider\'s key) in ~/.buckley/config.env',
  },
  {
    title: 'goose',
    bins: /^goose$/,
    packages: [],
    acpNames: /^goose$/i,
    stateDirs: (env) => xdgDirs(env, 'goose'),
    runsCode: (env) => [join(xdg(env, 'XDG_CONFIG_HOME'), 'goose', 'config.yaml')],
    keys: anyProvider('OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GOOGLE_API_KEY', 'OPENROUTER_API_KEY'),
    hosts: [],
    endpoints: (env) => variables(env, 'OPENAI_HOST', 'ANTHROPIC_HOST', 'OLLAMA_HOST', 'DATABRICKS_HOST'),
    login: 'run `goose configure` in a terminal',
  },
  {
    title: 'Auggie',
    bins: /^auggie$/,
    packages: ['@augmentcode/auggie'],
    acpNames: /^auggie$/i,
    stateDirs: (env) => [join(home(env), '.augment')],
    keys: ['AUGMENT_SESSION_AUTH', 'AUGMENT_API_TOKEN'],
    hosts: ['*.augmentcode.com'],
    login: 'run `auggie login` in a terminal',
    defaultEnv: { AUGMENT_DISABLE_AUTO_UPDATE: '1' },
  },
  {
    title: 'Cline',
    bins: /^cline$/,
    packages: ['cline', '@cline/cli-linux-x64', '@cline/cli-linux-arm64', '@cline/cli-darwin-arm64', '@cline/cli-darwin-x64'],
    acpNames: /^cline$/i,
    // `plan` offers no edit tool and refuses commands that change files; `act` asks before each
    // tool (unless its `auto_approve` switch is on: acpSessions.ts turns it off).
    modes: { ask: 'plan', task: 'act' },
    // Its settings, sessions and databases; its ACP side starts a hub daemon of its own, which
    // keeps its lock and log there too.
    stateDirs: (env) => [clineDir(env)],
    keys: ['CLINE_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
    hosts: ['api.cline.bot', '*.cline.bot'],
    // A provider of its own (`cline auth -p openai-compatible -b URL …`) is kept in its providers.json.
    endpoints: (env) => settingsUrls(env.CLINE_PROVIDER_SETTINGS_PATH || join(env.CLINE_DATA_DIR || join(clineDir(env), 'data'), 'settings', 'providers.json'), 'baseUrl'),
    // Its ACP side starts no session without an account key, even for a provider of the user's own.
    // 3.0.65's ACP side offers images but keeps only a prompt's text blocks.
    dropsImages: true,
    login: 'run `cline auth` in a terminal (a provider of your own keeps its key there too); with a provider of your own (`cline auth -p openai-compatible …`), give it CLINE_PROVIDER (e.g. "openai-compatible") and any CLINE_API_KEY in buckley.agent.env, which its ACP side wants before a session',
  },
  {
    title: 'Factory Droid',
    bins: /^droid$/,
    packages: ['droid', '@factory/cli', '@factory/cli-linux-x64', '@factory/cli-linux-x64-baseline', '@factory/cli-linux-arm64', '@factory/cli-darwin-arm64', '@factory/cli-darwin-x64', '@factory/cli-darwin-x64-baseline'],
    acpNames: /^@factory\/cli$|^droid$/i,
    // `droid exec --output-format acp`: `spec` reads and writes a spec, changing nothing; `normal`
    // ("Auto (Off)") runs reads unasked and asks before anything else (its `auto-*` modes run what
    // its model calls low, medium or high risk unasked).
    modes: { ask: 'spec', task: 'normal' },
    stateDirs: (env) => [env.FACTORY_HOME_OVERRIDE || join(home(env), '.factory')],
    keys: ['FACTORY_API_KEY'],
    hosts: ['app.factory.ai', 'api.factory.ai', '*.factory.ai'],
    // Its models of the user's own ("customModels" in its settings, "bring your own key").
    endpoints: (env) => settingsUrls(join(env.FACTORY_HOME_OVERRIDE || join(home(env), '.factory'), 'settings.json'), 'baseUrl'),
    login: 'run `droid` in a terminal and log in, or set FACTORY_API_KEY; a model of your own takes its key in ~/.factory/settings.json ("customModels": [{"apiKey": "…"}])',
    defaultEnv: { DROID_DISABLE_AUTO_UPDATE: 'true', FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false' },
  },
];
