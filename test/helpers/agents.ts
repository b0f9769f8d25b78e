/**
 * The real ACP agents the suite drives — Claude Code (claude-agent-acp 0.23.1 and the older
 * claude-code-acp 0.16.2), Codex (codex-acp 0.16.0), Gemini CLI 0.61.0, Qwen Code 0.24.4,
 * opencode 1.18.33, Kilo Code 7.7.7, GitHub Copilot CLI 1.0.102, Factory Droid 0.215.0 and Cline
 * 3.0.65 —
 * installed by `npm run install-agents` into `.agents/` (BUCKLEY_AGENTS_DIR for another place),
 * each pointed at a stand-in for its model's API (test/helpers/models/): how to start it, the
 * environment and files that set it up, and its tools' names and inputs, so a test can script
 * the model to call "the shell" or "the file editor" of whichever agent it runs.
 *
 * A missing agent skips its tests with one line saying how to install it; in CI a missing agent
 * is an error.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { anthropicModel } from './models/anthropic.js';
import { geminiModel } from './models/gemini.js';
import { openaiChatModel } from './models/openaiChat.js';
import { openaiResponsesModel } from './models/openaiResponses.js';
import type { ModelCall, ModelServer, Reply, Script, ToolUse } from './models/standIn.js';
import { RELAY_MARK } from '../../src/coordinator/agents/sandboxNetwork.js';
import { fileUri, REPO } from './paths.js';
import { tempDir } from './temp.js';

export const AGENTS_DIR = process.env.BUCKLEY_AGENTS_DIR ?? `${REPO}.agents`;
const bin = (name: string) => join(AGENTS_DIR, 'node_modules/.bin', name);

/** What a test asks the model to do, in any agent's tools. */
export interface Tools {
  shell(command: string): ToolUse;
  read(path: string): ToolUse;
  /** Replace `from` with `to` in the file. */
  edit(path: string, from: string, to: string): ToolUse;
  write(path: string, content: string): ToolUse;
  /** Sets the agent's plan (its to-do tool), where it has one the agent turns into an ACP plan. */
  plan?(steps: { content: string; done: boolean }[]): ToolUse;
}

export interface RealAgent {
  /** As people call it, with its version. */
  name: string;
  /** The npm package that provides it (for the skip line). */
  npm: string;
  command: string[];
  /** Its ACP agentInfo title, as buckley-lsp names it to the user. */
  title: string;
  tools: Tools;
  /** The variable holding its API key (what a 401 must name). */
  key: string;
  /** Its mode that runs every tool unasked: with it, only the sandbox stands between the agent and the user's files. */
  permissiveMode: string;
  /** What else that takes (opencode runs tools unasked by its permissions, not a mode): its environment then. */
  permissiveEnv?: Record<string, string>;
  /** …or its command's arguments then (Cline's `--auto-approve true`). */
  permissiveArgs?: string[];
  /** Its planning mode's id, where it is not `plan` (Copilot's modes are URIs). */
  planMode?: string;
  /**
   * It takes images, but gives them only to a model it knows takes them: what it sends the
   * stand-in's text-only model in the image's place (Qwen Code judges by the model's name).
   */
  imageInPlace?: RegExp;
  /** It says it takes images but drops them unsaid (Cline 3.0.65 keeps a prompt's text only): buckley-lsp gives it none and says so. */
  dropsImages?: true;
  /** It runs its commands through the client's ACP terminals where it is offered them (not its own shell). */
  clientTerminals?: true;
  /** It says a failure of its model's API in its answer and ends its turn as done (Copilot), rather than failing the request. */
  errorsInAnswer?: boolean;
  /** It lists no `/commands` (Cline 3.0.65 sends no ACP available_commands_update). */
  noCommands?: true;
  /** One of its commands that it answers itself, without its model, and what the answer says. */
  localCommand?: { line: string; answer: RegExp };
  /**
   * What it reports of a turn's usage against its model's stand-in: its context window in use
   * (ACP `usage_update`: Codex, Qwen Code), or the turn's tokens in its answer to the prompt
   * (ACP `usage`: Claude Code's newer adapter; `_meta`: Gemini CLI).
   */
  reportsUsage?: 'context' | 'tokens';
  /**
   * Its model is offered an MCP server's tools against its stand-in: Claude Code's
   * `mcp__server__tool`, Codex's namespace `mcp__server` (the Responses stand-in calls its tools
   * by name and namespace), Gemini CLI's `mcp_server_tool` (in a folder it trusts), Qwen Code's
   * `mcp__server__tool` kept back behind its `tool_search` / `tool_call` (in a folder it trusts).
   */
  mcpTools?: boolean;
  /** false: its read-only mode refuses MCP tools (Qwen Code's plan mode: any tool that would need a confirmation). */
  mcpInAsks?: boolean;
  /** Makes it trust the workspace, as its user would (Gemini CLI and Qwen Code start no MCP server in a folder they do not trust). */
  trust?(home: string, folder: string): void;
  /** It offers ACP `session/resume`: a conversation's session comes back after a restart. */
  resumes?: boolean;
  /** One of the models it offers to choose (not its default), and how its API's requests name it. */
  otherModel?: { id: string; requested: RegExp };
  /** Its model's stand-in, on `host` (default: loopback). */
  model(script: Script, host?: string): Promise<ModelServer>;
  /** `agent.env` for it, pointed at the stand-in, with a home of its own (files written there). */
  setup(model: ModelServer, home: string): Record<string, string>;
}

const claudeEnv = (model: ModelServer, home: string) => ({
  HOME: home,
  ANTHROPIC_API_KEY: 'sk-ant-test',
  ANTHROPIC_BASE_URL: model.url,
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
});

const claudeTools = (prefix: string): Tools => ({
  // The older adapter's own Bash (through the client's terminal) requires a timeout.
  shell: (command) => ({ name: `${prefix}Bash`, input: { command, description: 'run it', ...(prefix ? { timeout: 60_000 } : {}) } }),
  read: (path) => ({ name: `${prefix}Read`, input: { file_path: path } }),
  edit: (path, from, to) => ({ name: `${prefix}Edit`, input: { file_path: path, old_string: from, new_string: to } }),
  write: (path, content) => ({ name: `${prefix}Write`, input: { file_path: path, content } }),
  plan: (steps) => ({ name: 'TodoWrite', input: { todos: steps.map(({ content, done }) => ({ content, status: done ? 'completed' : 'pending', activeForm: content })) } }),
});

const geminiStyle = (editTool: string): Tools => ({
  shell: (command) => ({ name: 'run_shell_command', input: { command, description: 'run it' } }),
  read: (path) => ({ name: 'read_file', input: { file_path: path } }),
  edit: (path, from, to) => ({ name: editTool, input: { file_path: path, old_string: from, new_string: to, instruction: 'change it' } }),
  write: (path, content) => ({ name: 'write_file', input: { file_path: path, content } }),
});

/** Claude Code, through either of Zed's adapters: the same CLI, the same API. */
const claude = (adapter: string, version: string, title: string, tools: Tools, otherModel: RealAgent['otherModel']): RealAgent => ({
  name: `Claude Code (${adapter} ${version})`,
  npm: `@zed-industries/${adapter}`,
  command: [bin(adapter)],
  title,
  tools,
  key: 'ANTHROPIC_API_KEY',
  permissiveMode: 'bypassPermissions',
  localCommand: { line: '/context', answer: /## Context Usage/ },
  otherModel,
  mcpTools: true,
  model: anthropicModel,
  setup: claudeEnv,
});

/**
 * opencode and its fork Kilo Code: the same tools, permissions in `<VARIABLES>_PERMISSION`, a model
 * provider of their own in their config folder (its key from the environment); they resume sessions.
 */
function opencodeFamily({ app, config, variables }: { app: string; config: string; variables: string }): Pick<RealAgent, 'tools' | 'key' | 'resumes' | 'permissiveEnv' | 'model' | 'setup'> {
  return {
    tools: {
      shell: (command) => ({ name: 'bash', input: { command, description: 'run it' } }),
      read: (path) => ({ name: 'read', input: { filePath: path } }),
      edit: (path, from, to) => ({ name: 'edit', input: { filePath: path, oldString: from, newString: to } }),
      write: (path, content) => ({ name: 'write', input: { filePath: path, content } }),
      // Its todowrite is not passed on as an ACP plan.
    },
    key: 'OPENAI_API_KEY',
    resumes: true,
    permissiveEnv: { [`${variables}_PERMISSION`]: JSON.stringify({ edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' }) },
    model: openaiChatModel,
    setup: (model, home) => {
      mkdirSync(join(home, '.config', app), { recursive: true });
      const provider = { npm: '@ai-sdk/openai-compatible', name: 'Stand-in', options: { baseURL: `${model.url}/v1`, apiKey: '{env:OPENAI_API_KEY}' }, models: { 'qwen3-coder': { name: 'Stand-in coder', tool_call: true, attachment: true, modalities: { input: ['text', 'image'], output: ['text'] } } } };
      // The stand-in alone: no call goes to the app's own models (its Zen, on the internet this machine has not).
      writeFileSync(join(home, '.config', app, config), JSON.stringify({ provider: { standin: provider }, enabled_providers: ['standin'], model: 'standin/qwen3-coder', autoupdate: false, share: 'disabled' }));
      return { HOME: home, OPENAI_API_KEY: 'sk-test', [`${variables}_DISABLE_MODELS_FETCH`]: '1' };
    },
  };
}

export const REAL_AGENTS: RealAgent[] = [
  { ...claude('claude-agent-acp', '0.23.1', 'Claude Agent', claudeTools(''), { id: 'opus[1m]', requested: /claude-opus/ }), resumes: true, reportsUsage: 'tokens' },
  // With the client's files and terminals offered, the older adapter reads, writes and runs through them.
  { ...claude('claude-code-acp', '0.16.2', 'Claude Code', claudeTools('mcp__acp__'), { id: 'opus', requested: /claude-opus/ }), clientTerminals: true },
  {
    name: 'Codex (codex-acp 0.16.0)',
    npm: '@zed-industries/codex-acp',
    command: [bin('codex-acp')],
    title: 'Codex',
    tools: {
      shell: (command) => ({ name: 'exec_command', input: { cmd: command } }),
      read: (path) => ({ name: 'exec_command', input: { cmd: `cat ${path}` } }),
      edit: (path, from, to) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n*** Update File: ${path}\n@@\n-${from}\n+${to}\n*** End Patch\n` } }),
      write: (path, content) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n*** Add File: ${path}\n${content.split('\n').map((line) => `+${line}`).join('\n')}\n*** End Patch\n` } }),
      plan: (steps) => ({ name: 'update_plan', input: { plan: steps.map(({ content, done }) => ({ step: content, status: done ? 'completed' : 'pending' })) } }),
    },
    key: 'OPENAI_API_KEY',
    permissiveMode: 'full-access',
    reportsUsage: 'context',
    resumes: true,
    otherModel: { id: 'gpt-5.4-mini', requested: / gpt-5\.4-mini$/ },
    mcpTools: true,
    model: openaiResponsesModel,
    setup: (model, home) => {
      // Codex takes a custom model provider in $CODEX_HOME/config.toml; its helpers may not live under /tmp.
      const codexHome = join(home, '.codex');
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(
        join(codexHome, 'config.toml'),
        ['model = "gpt-5.4"', 'model_provider = "standin"', '[model_providers.standin]', 'name = "stand-in"', `base_url = "${model.url}/v1"`, 'wire_api = "responses"', 'env_key = "OPENAI_API_KEY"', ''].join('\n'),
      );
      return { HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-test' };
    },
  },
  {
    name: 'Gemini CLI 0.61.0',
    reportsUsage: 'tokens',
    npm: '@google/gemini-cli',
    command: [bin('gemini'), '--acp'],
    title: 'Gemini CLI',
    tools: geminiStyle('replace'),
    key: 'GEMINI_API_KEY',
    permissiveMode: 'yolo',
    localCommand: { line: '/about', answer: /Gemini CLI Info/ },
    otherModel: { id: 'gemini-3.8-flash', requested: /models\/gemini-3\.8-flash:/ },
    mcpTools: true,
    model: geminiModel,
    setup: (model, home) => ({ HOME: home, GEMINI_API_KEY: 'test-key', GOOGLE_GEMINI_BASE_URL: model.url }),
    trust: (home, folder) => trustFolder(join(home, '.gemini'), folder),
  },
  {
    name: 'Qwen Code 0.24.4',
    imageInPlace: /\[image: image\/png\]/,
    npm: '@qwen-code/qwen-code',
    command: [bin('qwen'), '--acp'],
    title: 'Qwen Code',
    tools: geminiStyle('edit'),
    key: 'OPENAI_API_KEY',
    permissiveMode: 'yolo',
    localCommand: { line: '/status', answer: /Qwen Code v0\.24\.4/ },
    reportsUsage: 'context',
    mcpTools: true,
    mcpInAsks: false,
    model: openaiChatModel,
    setup: (model, home) => {
      // Qwen Code reads OPENAI_* only with its auth type set to openai in its settings.
      mkdirSync(join(home, '.qwen'), { recursive: true });
      writeFileSync(join(home, '.qwen', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'openai' } } }));
      return { HOME: home, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_MODEL: 'qwen3-coder' };
    },
    trust: (home, folder) => trustFolder(join(home, '.qwen'), folder),
  },
  {
    ...opencodeFamily({ app: 'opencode', config: 'opencode.json', variables: 'OPENCODE' }),
    name: 'opencode 1.18.33',
    npm: 'opencode-ai',
    command: [bin('opencode'), 'acp'],
    title: 'OpenCode',
    // Its `build` mode, with its permissions letting every tool run unasked.
    permissiveMode: 'build',
  },
  {
    // A fork of opencode: its tools, its permissions, its provider config (in its own folder).
    ...opencodeFamily({ app: 'kilo', config: 'kilo.json', variables: 'KILO' }),
    name: 'Kilo Code 7.7.7',
    npm: '@kilocode/cli',
    command: [bin('kilo'), 'acp'],
    title: 'Kilo',
    // Its `code` mode, with its permissions letting every tool run unasked.
    permissiveMode: 'code',
    // Its first mode other than `code` is `ask`, which makes no changes.
    planMode: 'ask',
  },
  {
    name: 'GitHub Copilot CLI 1.0.102',
    npm: '@github/copilot',
    command: [bin('copilot'), '--acp'],
    title: 'Copilot',
    tools: {
      shell: (command) => ({ name: 'bash', input: { command, description: 'run it' } }),
      read: (path) => ({ name: 'view', input: { path } }),
      edit: (path, from, to) => ({ name: 'edit', input: { path, old_str: from, new_str: to } }),
      write: (path, content) => ({ name: 'create', input: { path, file_text: content } }),
    },
    key: 'COPILOT_PROVIDER_API_KEY',
    permissiveMode: 'https://agentclientprotocol.com/protocol/session-modes#autopilot',
    planMode: 'https://agentclientprotocol.com/protocol/session-modes#plan',
    errorsInAnswer: true,
    model: openaiChatModel,
    // Its own model provider ("bring your own key"): no GitHub login.
    setup: (model, home) => ({ HOME: home, COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`, COPILOT_PROVIDER_API_KEY: 'sk-test', COPILOT_PROVIDER_TYPE: 'openai', COPILOT_MODEL: 'qwen3-coder' }),
  },
  {
    name: 'Factory Droid 0.215.0',
    npm: 'droid',
    command: [bin('droid'), 'exec', '--output-format', 'acp'],
    title: 'Factory Droid',
    tools: {
      // Its Execute wants the model's summary and its own judgement of the risk.
      shell: (command) => ({ name: 'Execute', input: { summary: 'Run the requested command', command, riskLevelReason: 'It runs the command the user asked for.', riskLevel: 'low' } }),
      read: (path) => ({ name: 'Read', input: { file_path: path } }),
      edit: (path, from, to) => ({ name: 'Edit', input: { file_path: path, old_str: from, new_str: to } }),
      write: (path, content) => ({ name: 'Create', input: { file_path: path, content } }),
    },
    key: 'FACTORY_API_KEY',
    // Its mode that runs everything unasked; `spec` is its read-only one.
    permissiveMode: 'auto-high',
    planMode: 'spec',
    resumes: true,
    model: openaiChatModel,
    // A model of the user's own ("bring your own key") as its default; its ACP side opens no
    // session without a Factory key, which a model of one's own never uses.
    setup: (model, home) => {
      mkdirSync(join(home, '.factory'), { recursive: true });
      const standin = { model: 'qwen3-coder', displayName: 'Standin', baseUrl: `${model.url}/v1`, apiKey: 'sk-test', provider: 'generic-chat-completion-api', maxOutputTokens: 8000, noImageSupport: false };
      writeFileSync(join(home, '.factory', 'settings.json'), JSON.stringify({ sessionDefaultSettings: { model: 'custom:Standin-0' }, customModels: [standin] }));
      return { HOME: home, FACTORY_API_KEY: 'fk-unused' };
    },
  },
  {
    name: 'Cline 3.0.65',
    npm: 'cline',
    command: [bin('cline'), '--acp'],
    title: 'cline',
    tools: {
      shell: (command) => ({ name: 'run_commands', input: { commands: [command] } }),
      read: (path) => ({ name: 'read_files', input: { files: [{ path }] } }),
      edit: (path, from, to) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n*** Update File: ${path}\n@@\n-${from}\n+${to}\n*** End Patch` } }),
      write: (path, content) => ({ name: 'apply_patch', input: { input: `*** Begin Patch\n*** Add File: ${path}\n${content.split('\n').map((line) => `+${line}`).join('\n')}\n*** End Patch` } }),
    },
    key: 'CLINE_API_KEY',
    noCommands: true,
    dropsImages: true,
    // Its `act` mode with its auto-approve switch on from the start.
    permissiveMode: 'act',
    permissiveArgs: ['--auto-approve', 'true'],
    model: openaiChatModel,
    // A provider of its own, as `cline auth -p openai-compatible -k … -b … -m …` writes it; its ACP
    // side starts no session without CLINE_API_KEY, whatever the provider.
    setup: (model, home) => {
      const settings = join(home, '.cline', 'data', 'settings');
      mkdirSync(settings, { recursive: true });
      const provider = { settings: { provider: 'openai-compatible', apiKey: 'sk-test', model: 'qwen3-coder', baseUrl: `${model.url}/v1`}, updatedAt: new Date().toISOString(), tokenSource: 'manual' };
      writeFileSync(join(settings, 'providers.json'), JSON.stringify({ version: 1, lastUsedProvider: 'openai-compatible', modes: {}, providers: { 'openai-compatible': provider } }));
      return { HOME: home, CLINE_PROVIDER: 'openai-compatible', CLINE_API_KEY: 'unused' };
    },
  },
];

export function agentInstalled(agent: RealAgent): boolean {
  return existsSync(agent.command[0]!);
}

export function missingAgentLine(agent: RealAgent): string {
  return `${agent.name} not found at ${agent.command[0]}: install the agents with \`npm run install-agents\``;
}

/** For a test file: whether to run an agent's tests (CI must have every agent). */
export function requireAgent(agent: RealAgent): boolean {
  const ok = agentInstalled(agent);
  if (!ok && process.env.CI) throw new Error(`${missingAgentLine(agent)} — CI must install it (.ci/run)`);
  return ok;
}

/** The agent's trustedFolders.json (Gemini CLI's and Qwen Code's) trusting `folder`. */
function trustFolder(dir: string, folder: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'trustedFolders.json'), JSON.stringify({ [folder]: 'TRUST_FOLDER' }));
}

/**
 * A home for an agent, outside the system's temporary directory (Codex will not put its helpers
 * under it): `.state/agent-homes/` in the checkout, removed with `cleanup`.
 */
export function agentHome(): { home: string; cleanup(): void } {
  const home = join(REPO, '.state', 'agent-homes', randomUUID());
  mkdirSync(home, { recursive: true });
  // Retried: an agent stopped a moment ago may still be writing its state there.
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }) };
}

/**
 * A real agent against its model's stand-in, ready for buckley-lsp: a workspace of its own, a home
 * of its own, and the client options that start buckley-lsp with the agent there (`settings`: more
 * of `buckley.agent`). `cleanup` removes the home and closes the model.
 */
export async function agentSetup(agent: RealAgent, script: Script, settings: Record<string, unknown> = {}): Promise<{ model: ModelServer; options: { env: Record<string, string | undefined>; initialize: Record<string, unknown> }; cleanup(): Promise<void> }> {
  const root = tempDir('buckley-agent-ws');
  mkdirSync(root, { recursive: true });
  const model = await agent.model(script);
  const { home, cleanup } = agentHome();
  return {
    model,
    options: {
      env: { BUCKLEY_AGENT: undefined },
      initialize: { rootUri: fileUri(root), workspaceFolders: [{ uri: fileUri(root), name: 'ws' }], initializationOptions: { agent: { command: agent.command, env: agent.setup(model, home), ...settings } } },
    },
    cleanup: async () => {
      await model.close();
      cleanup();
    },
  };
}

/** A request of the agent's turn: it offers the agent's tools (a side query offers none, or the one its answer must use). */
export function isTurn(call: ModelCall): boolean {
  return call.tools.length > 2;
}

/**
 * A model that plays the steps given, one per request of the agent's turns, chosen by how many
 * tool results the conversation holds (step 0 answers the question, step 1 the first tool's
 * result, …); past the last step, it answers `done`. Side queries (titles, classifiers) get "ok".
 * `steps` may be a function: the steps of the ask the test is on now. A tool the request does not
 * offer is not called (the model cannot): the step is a word saying so instead.
 */
export function stepsScript(steps: Reply[] | (() => Reply[]), done: Reply = { text: 'Done.' }): Script {
  return (call: ModelCall) => {
    if (!isTurn(call)) return { text: 'ok' };
    const step = (typeof steps === 'function' ? steps() : steps)[call.toolResults.length] ?? done;
    // A model calls only the tools it is offered (a read-only mode may offer no shell).
    const offered = step.tools?.filter((tool) => call.tools.includes(tool.name));
    if (!step.tools || offered!.length === step.tools.length) return step;
    return offered!.length ? { ...step, tools: offered } : { text: `(not offered: ${step.tools.map((tool) => tool.name).join(', ')})` };
  };
}

/**
 * The tool results the model got back, each checked to come from the tool itself (it ran, or was
 * refused or stopped by the sandbox), not from the agent rejecting how the test called it.
 */
export function toolResultsOf(model: ModelServer): string[] {
  const results = model.turns().flatMap((call) => call.toolResults);
  const malformed = results.filter((result) => /validation error|invalid arguments|invalid_type|not found in registry|unknown tool|no such tool/i.test(result));
  if (malformed.length) throw new Error(`the agent refused the test's tool calls as malformed:\n${malformed.join('\n---\n')}`);
  return results;
}

/**
 * The processes of an agent started with `home` as its HOME (every process it starts inherits it,
 * in its sandbox too), as this machine numbers them, with their resident memory.
 */
export function processesWithHome(home: string): { pid: number; rssBytes: number }[] {
  const found: { pid: number; rssBytes: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environment = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      // buckley-lsp's own relays of the agent's confined network are not the agent's processes.
      if (!environment.includes(`HOME=${home}`) || environment.includes(`${RELAY_MARK}=1`)) continue;
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
      found.push({ pid: Number(entry), rssBytes: rss ? Number(rss[1]) * 1024 : 0 });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
