/**
 * The command line of `buckley-lsp`: its usage texts and `parseArgs`.
 *
 *   buckley-lsp [--stdio] [SETTINGS]                  the language server
 *   buckley-lsp coordinator [--listen HOST:PORT] …    our coordinator, standalone
 *   buckley-lsp doctor [--settings FILE] [SETTINGS]   checks what the editor will send
 *
 * Every setting is also a flag: `--context.maxBytes 100000`, `--approvals.autoApprove=medium`.
 */
import { isLogLevel } from './logger.js';
import type { ConfigInput } from './config.js';
import { didYouMean, type SettingKey } from './configProblems.js';

declare const __BUCKLEY_VERSION__: string | undefined;
export const VERSION = typeof __BUCKLEY_VERSION__ === 'string' ? __BUCKLEY_VERSION__ : '0.0.0-dev';

/** Every setting (config.ts's `settings`): loaded only when the command line needs them (see needsSettings). */
export type KnownSettings = () => readonly SettingKey[];

const settingsHelp = (settings: readonly SettingKey[]) => `Settings (editors send them as initializationOptions or the "buckley" section of
workspace/configuration; here each is also a flag, --KEY VALUE or --KEY=VALUE):
${settings
  .map(({ key, type, values }) => `  --${key} ${values ? values.join('|') : type === 'boolean' ? 'true|false' : type === 'number' ? 'N' : type === 'record' ? 'NAME=VALUE (again for more)' : type === 'array' ? 'VALUE (again for more)' : 'VALUE'}`)
  .join('\n')}
docs/configuration.md says what each does.`;

export const usage = (settings: readonly SettingKey[]) => `buckley-lsp ${VERSION}: an LSP server that asks an AI agent about your code

Usage:
  buckley-lsp [--stdio] [options]      the language server: your editor starts it and speaks
                                       LSP on its stdin and stdout
  buckley-lsp doctor [options]         check the settings, coordinator and agent (doctor --help)
  buckley-lsp acp [--settings FILE] [options]
                                       an ACP agent on stdin and stdout, for an ACP client's
                                       agent panel (Zed, JetBrains, CodeCompanion, agent-shell),
                                       backed by the coordinator; settings from the environment,
                                       FILE (default $XDG_CONFIG_HOME/buckley-lsp/settings.json)
                                       and the options
  buckley-lsp coordinator [--listen HOST:PORT] [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]]
                          [--nats URL[,URL…] [--nats-creds FILE] [--nats-replicas N] [--nats-wait S]
                           [--replica NAME]]
                          [--max-running N] [--roots DIR[,DIR…]] [--metrics HOST:PORT]
                          [--log-level L] [--agent CMD [ARGS...]]
                                       our gRPC coordinator as a standalone process
                                       (default listen address 127.0.0.1:50051; a non-loopback
                                       address needs TLS with client certificates); with --nats,
                                       one replica of a team's coordinator on NATS JetStream
                                       (its login: nats://USER:PASSWORD@host:port, NATS_USER and
                                       NATS_PASSWORD, NATS_TOKEN, NATS_CREDS or --nats-creds FILE;
                                       TLS: tls://, NATS_CA, NATS_CERT and NATS_KEY;
                                       --nats-replicas: copies of its streams, 3 on a 3-node
                                       cluster; --nats-wait: seconds NATS is waited for when it
                                       is away before the tasks running here fail, 120);
                                       --max-running: tasks run at once (16), more
                                       queue (0: it runs none, and serves the team's callers);
                                       --roots: the only folders whose workspaces it takes tasks in;
                                       --metrics: Prometheus metrics at http://HOST:PORT/metrics

Options:
  --coordinator HOST:PORT   use a running coordinator (else: embedded)   [BUCKLEY_COORDINATOR]
  --agent "CMD ARGS"        the ACP agent the embedded coordinator runs   [BUCKLEY_AGENT]
  --log-level LEVEL         error, warn, info or debug                    [BUCKLEY_LOG]
  --log-file PATH|off       the log file (default: buckley-lsp.log in      [BUCKLEY_LOG_FILE]
                            $XDG_STATE_HOME/buckley-lsp or ~/.local/state/buckley-lsp)
  --version, --help

${settingsHelp(settings)}`;

export const doctorUsage = (settings: readonly SettingKey[]) => `buckley-lsp doctor [--settings FILE] [options]

Checks what your editor will send and everything it depends on, and says in plain words what is
wrong and how to fix it (exit code 0 when all is well):

  * the settings: from the environment (BUCKLEY_COORDINATOR, BUCKLEY_AGENT, BUCKLEY_LOG), the
    flags below, and FILE — the JSON your editor sends, as initializationOptions or as the
    "buckley" section of its settings ({"buckley": {...}} is read too);
  * TLS files (buckley.coordinator.tls.*): there, readable, PEM, a certificate and key that go
    together, not expired, and the client certificate's name;
  * the coordinator (with an address): the host resolves, something answers, it speaks
    buckley.acp.v1;
  * the agent (without one: the embedded coordinator's): it starts, speaks ACP and opens a session
    (or says it needs you to log in, and how), or its own error; the sandbox it runs in (bubblewrap),
    or why there is none.

Options:
  --settings FILE           the settings as the editor sends them
  --acp                     the settings as \`buckley-lsp acp\` reads them (its settings file, else
                            ~/.config/buckley-lsp/settings.json), and the ways to authenticate it
                            offers an ACP client
  --prompt                  also ask the agent one real question (its model answers: a key that
                            works, a model that is there)
  --coordinator HOST:PORT   the same as --coordinator.address
  --agent "CMD ARGS"        the same as --agent.command

${settingsHelp(settings)}`;

export interface ParsedArgs {
  mode: 'server' | 'coordinator' | 'doctor' | 'acp' | 'help' | 'version';
  config: ConfigInput;
  listen?: string;
  /** Also append the log to this file (user-only permissions). */
  logFile?: string;
  tls?: { cert?: string; key?: string; clientCa?: string };
  /** `doctor --prompt`: one real turn. */
  prompt?: boolean;
  /** `doctor --acp`: as `buckley-lsp acp` would run. */
  acp?: boolean;
  /** `doctor --settings FILE`. */
  settingsFile?: string;
  /** `coordinator` in a team: its NATS servers, the copies of its streams, its name, how many tasks it runs at once. */
  team?: { nats?: string[]; natsCreds?: string; replicas?: number; natsWaitS?: number; replica?: string; maxRunning?: number; roots?: string[]; metrics?: string };
  /** With `help`: whose usage (`doctor --help` is doctor's). */
  helpFor?: 'server' | 'coordinator' | 'doctor' | 'acp';
  error?: string;
}

/** The flags of the command line's own; any other needs the settings' list (see needsSettings). */
const OWN_FLAGS = new Set(['--stdio', '--version', '-v', '--coordinator', '--listen', '--tls-cert', '--tls-key', '--tls-client-ca', '--log-file', '--prompt', '--acp', '--settings', '--log-level', '--agent', '--nats', '--nats-creds', '--nats-replicas', '--nats-wait', '--replica', '--max-running', '--roots', '--metrics']);

/**
 * Whether parsing `argv` may need every setting (a setting given as a flag, help, a mistake to
 * suggest a fix for): loading them costs the schema, which a server started with its own flags
 * only does without until `initialize` is answered. Errs on the side of yes.
 */
export function needsSettings(argv: readonly string[]): boolean {
  return argv.some((arg) => arg.startsWith('-') && !OWN_FLAGS.has(arg.split('=')[0]!));
}

/** Sets `key` (dotted) in `config` to `value`, typed as the setting is (a number, true/false); or says what is wrong. */
function setSetting(config: Record<string, unknown>, key: string, raw: string, setting: Pick<SettingKey, 'type'> = { type: 'string' }): string | undefined {
  let value: unknown = raw;
  if (setting.type === 'number' && raw.trim() !== '' && !Number.isNaN(Number(raw))) value = Number(raw);
  if (setting.type === 'boolean' && /^(true|false)$/.test(raw)) value = raw === 'true';
  const path = key.split('.');
  let parent = config;
  for (const name of path.slice(0, -1)) parent = (parent[name] ??= {}) as Record<string, unknown>;
  if (setting.type === 'array') {
    // --agent.sandbox.writable A --agent.sandbox.writable B, or a JSON list: the lists collect.
    const list = (parent[path.at(-1)!] ??= []) as unknown[];
    if (!raw.trimStart().startsWith('[')) list.push(raw);
    else {
      let given: unknown;
      try {
        given = JSON.parse(raw);
      } catch {
        return `--${key} takes a value (again for more) or a JSON list, not ${raw}`;
      }
      list.push(...(Array.isArray(given) ? given : [given]));
    }
    return undefined;
  }
  if (setting.type === 'record') {
    // --agent.env NAME=VALUE, once per entry.
    const at = raw.indexOf('=');
    if (at <= 0) return `--${key} takes NAME=VALUE, not ${raw}`;
    const entries = (parent[path.at(-1)!] ??= {}) as Record<string, string>;
    entries[raw.slice(0, at)] = raw.slice(at + 1);
    return undefined;
  }
  parent[path.at(-1)!] = value;
  return undefined;
}

/** Where a coordinator listens, and with which certificates. */
function listenFlag(result: ParsedArgs, flag: string, given: string | undefined): void {
  if (flag === '--listen') result.listen = given;
  else if (flag === '--tls-cert') result.tls = { ...result.tls, cert: given };
  else if (flag === '--tls-key') result.tls = { ...result.tls, key: given };
  else result.tls = { ...result.tls, clientCa: given };
}

/** A team coordinator's own flag, set; or what is wrong with it. */
function teamFlag(result: ParsedArgs, mode: ParsedArgs['mode'], flag: string, given: string | undefined): string | undefined {
  if (mode !== 'coordinator') return `${flag} is for \`buckley-lsp coordinator\``;
  if (given === undefined) return `${flag} needs a value`;
  const team = (result.team ??= {});
  if (flag === '--nats') {
    const servers = given.split(',').map((url) => url.trim()).filter(Boolean);
    if (!servers.length || servers.some((url) => !/^(nats|tls):\/\/[^\s/]+$|^[^\s/:]+:\d+$/.test(url))) return `--nats takes the NATS servers' URLs, comma-separated (nats://127.0.0.1:4222), not ${given}`;
    team.nats = [...(team.nats ?? []), ...servers];
  } else if (flag === '--replica') team.replica = given;
  else if (flag === '--nats-creds') team.natsCreds = given;
  else if (flag === '--metrics') {
    if (!/^(\[[0-9a-fA-F:.]+\]|[^\s:/]+):\d{1,5}$/.test(given)) return `--metrics takes where to serve them, HOST:PORT (127.0.0.1:9464), not ${given}`;
    team.metrics = given;
  }
  else if (flag === '--roots') {
    const roots = given.split(',').map((root) => root.trim()).filter(Boolean);
    if (!roots.length || roots.some((root) => !root.startsWith('/'))) return `--roots takes the folders whose workspaces it serves, absolute, comma-separated (/srv/checkouts), not ${given}`;
    team.roots = [...(team.roots ?? []), ...roots];
  } else {
    const number = Number(given);
    const least = flag === '--max-running' ? 0 : 1;
    if (!Number.isInteger(number) || number < least) return `${flag} takes a whole number of at least ${least}, not ${given}`;
    if (flag === '--nats-replicas') team.replicas = number;
    else if (flag === '--nats-wait') team.natsWaitS = number;
    else team.maxRunning = number;
  }
  return undefined;
}

/** `doctor`'s own flags: set, or the error of giving one to another command. */
function doctorFlag(result: ParsedArgs, mode: ParsedArgs['mode'], flag: '--prompt' | '--acp'): string | undefined {
  if (flag === '--prompt') result.prompt = true;
  else result.acp = true;
  if (mode === 'doctor') return undefined;
  return flag === '--prompt' ? '--prompt is for `buckley-lsp doctor`' : '--acp is for `buckley-lsp doctor` (the ACP agent is `buckley-lsp acp`)';
}

export function parseArgs(argv: string[], settings: KnownSettings): ParsedArgs {
  const args = [...argv];
  let mode: ParsedArgs['mode'] = 'server';
  if (args[0] === 'coordinator' || args[0] === 'doctor' || args[0] === 'acp') mode = args.shift() as ParsedArgs['mode'];
  const config: Record<string, unknown> = {};
  const result: ParsedArgs = { mode, config: config as ConfigInput };
  while (args.length > 0) {
    const arg = args.shift()!;
    const [flag, inlineValue] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => {
      const next = inlineValue ?? args.shift();
      if (next === undefined) result.error = `${flag} needs a value`;
      return next;
    };
    switch (flag) {
      case '--stdio':
        break;
      case '--help':
      case '-h':
        return { ...result, mode: 'help', helpFor: mode === 'help' || mode === 'version' ? 'server' : mode };
      case '--version':
      case '-v':
        return { ...result, mode: 'version' };
      case '--coordinator':
        setSetting(config, 'coordinator.address', value() ?? '');
        break;
      case '--listen':
      case '--tls-cert':
      case '--tls-key':
      case '--tls-client-ca':
        listenFlag(result, flag, value());
        break;
      case '--log-file':
        result.logFile = value();
        break;
      case '--nats':
      case '--nats-creds':
      case '--nats-replicas':
      case '--nats-wait':
      case '--replica':
      case '--max-running':
      case '--roots':
      case '--metrics':
        result.error = teamFlag(result, mode, flag, value());
        break;
      case '--prompt':
      case '--acp':
        result.error = doctorFlag(result, mode, flag);
        break;
      case '--settings':
        if (mode !== 'doctor' && mode !== 'acp') result.error = '--settings is for `buckley-lsp doctor` and `buckley-lsp acp`; the server takes its settings from the editor';
        else result.settingsFile = value();
        break;
      case '--log-level': {
        const level = value();
        if (!isLogLevel(level)) result.error = `--log-level must be error, warn, info or debug, not ${level}`;
        setSetting(config, 'log.level', level ?? '');
        break;
      }
      case '--agent':
        // The coordinator takes the rest of the line as the agent command; the others one string.
        config.agent = { ...(config.agent as object), driver: 'acp', command: mode === 'coordinator' ? args.splice(0) : value() };
        break;
      default: {
        const key = flag.replace(/^--/, '');
        const setting = flag.startsWith('--') ? settings().find((known) => known.key === key) : undefined;
        if (setting) {
          const given = value();
          if (given !== undefined) result.error = setSetting(config, key, given, setting);
          break;
        }
        const meant = flag.startsWith('--') ? didYouMean(key.split('.'), settings()) : undefined;
        result.error = `unknown argument ${arg}${meant ? `; did you mean --${meant}?` : ''}`;
      }
    }
    if (result.error) break;
  }
  if (result.tls && (!result.tls.cert || !result.tls.key)) result.error ??= '--tls-cert and --tls-key go together';
  return result;
}

