/**
 * `buckley-lsp doctor`: checks what the editor will send and everything it depends on, and says
 * in plain words what is wrong and how to fix it (`doctor --help` lists the checks). Exit code 0
 * when all is well.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { homedir } from 'node:os';
import { PEM_MAX_BYTES, readFileBounded, unreadableWhy } from '../fileAccess.js';
import { acpSettingsFile, readSettingsFile } from '../settingsFile.js';
import { authWaysOf } from './acpAuth.js';
import { configFromEnv, resolveConfigLeniently, splitCommandLine, type Config, type ConfigInput, type ConfigSource } from '../config.js';
import { RootLogger } from '../logger.js';
import { addressesOf, isLoopbackHost } from '../net.js';
import { ASKS_NOT_READ_ONLY } from '../bridge/link/readOnly.js';
import { projectSettings } from '../bridge/projectSettings.js';
import { FEATURE } from '../wire/features.js';
import type { AgentDriver } from '../coordinator/agents/driver.js';
import type { AgentControls } from '../wire/contract.js';

export interface DoctorOptions {
  cliConfig: ConfigInput;
  /** The settings as the editor sends them (JSON), when given. */
  settingsFile?: string;
  /** Ask the agent one real question. */
  prompt?: boolean;
  /** As `buckley-lsp acp` runs: its settings file, and the ways to authenticate it offers. */
  acp?: boolean;
  env: NodeJS.ProcessEnv;
  version: string;
  out: (line: string) => void;
}

class Report {
  failures = 0;
  constructor(private readonly out: (line: string) => void) {}
  ok(line: string): void {
    this.out(`  ok    ${line}`);
  }
  fail(line: string): void {
    this.failures++;
    this.out(`  FAIL  ${line}`);
  }
  /** Works, but the user should know (not a failure: the exit code stays 0). */
  warn(line: string): void {
    this.out(`  WARN  ${line}`);
  }
  note(line: string): void {
    this.out(`        ${line}`);
  }
}

export async function runDoctor(options: DoctorOptions): Promise<number> {
  const report = new Report(options.out);
  options.out(`buckley-lsp ${options.version} doctor`);
  const settings = checkSettings(options, report);
  checkProjectSettings(process.cwd(), options.env, report);
  if (settings) {
    const { config, badKeys } = settings;
    // A check that hinges on a setting reported above would only say "set it" over "fix it".
    const section = config.coordinator.address ? 'coordinator' : 'agent';
    const bad = badKeys.filter((key) => key.startsWith(`buckley.${section}.`) || (section === 'agent' && key.startsWith('buckley.coordinator.')));
    if (bad.length) report.note(`the ${section} is not checked until ${bad.join(', ')} ${bad.length > 1 ? 'are' : 'is'} fixed`);
    else if (section === 'coordinator') await checkCoordinator(config, report);
    else await checkAgent(config, options, report);
    if (options.acp) checkAuthWays(config, options.env, report);
  }
  return report.failures ? 1 : 0;
}

/** The settings from every source doctor has; each problem named with its key and source. */
function checkSettings(options: DoctorOptions, report: Report): { config: Config; badKeys: string[] } | undefined {
  if (options.acp) options = { ...options, settingsFile: acpSettingsFile(options.settingsFile, options.env) };
  const sources: ConfigSource[] = [
    { name: 'environment', values: configFromEnv(options.env) },
    { name: 'command line', values: options.cliConfig },
  ];
  if (options.settingsFile) {
    const read = readSettingsFile(options.settingsFile);
    if ('problem' in read) {
      report.fail(read.problem);
      return undefined;
    }
    sources.push({ name: options.settingsFile, values: read.values });
  }
  const { config, problems } = resolveConfigLeniently(sources);
  for (const problem of problems) report.fail(`${problem.key} (from ${problem.source}): ${problem.message}`);
  if (problems.length === 0) {
    report.ok(`settings from ${sources.map((source) => source.name).join(', ')} are valid${options.settingsFile ? '' : options.acp ? ' (no settings file: --settings FILE, or ~/.config/buckley-lsp/settings.json)' : ' (give the editor\'s with --settings FILE)'}`);
  }
  return { config, badKeys: problems.map((problem) => problem.key) };
}

/** What the project here gives buckley-lsp of the settings that are the user's alone: the server leaves it out. */
function checkProjectSettings(folder: string, env: NodeJS.ProcessEnv, report: Report): void {
  for (const found of projectSettings([folder], env.HOME || homedir())) {
    const keys = found.keys.includes('*') ? "buckley-lsp's settings (eglot-workspace-configuration)" : found.keys.join(', ');
    report.warn(`${found.file} sets ${keys}: the server leaves out what a project's files say of where your code goes and what an agent may do — set those in your own settings`);
  }
}

/** The file's JSON: initializationOptions as they are, or an editor's settings with a `buckley` section. */
/** TLS files, then each address (a team's replicas): resolves, answers, speaks buckley.acp.v1. */
async function checkCoordinator(config: Config, report: Report): Promise<void> {
  if (config.coordinator.tls) checkTls(config.coordinator.tls, report);
  for (const address of addressesOf(config.coordinator.address)) await checkAddress(address, config, report);
}

async function checkAddress(address: string, config: Config, report: Report): Promise<void> {
  const tls = config.coordinator.tls;
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  if (!isLoopbackHost(host)) {
    try {
      const { address: ip } = await lookup(host);
      report.ok(`${host} resolves to ${ip}`);
    } catch {
      report.fail(`the coordinator's host ${host} does not resolve: fix buckley.coordinator.address (or BUCKLEY_COORDINATOR)`);
      return;
    }
  }
  const [{ CoordinatorClient }, { channelFor }, { describeConnectFailure }, { identityFor, isRefusal, refusalError }] = await Promise.all([
    import('../wire/client.js'),
    import('../wire/credentials.js'),
    import('../bridge/link/failures.js'),
    import('../bridge/link/identity.js'),
  ]);
  const identity = identityFor(config);
  let client: InstanceType<typeof CoordinatorClient>;
  try {
    const channel = channelFor(address, tls);
    client = new CoordinatorClient({ address, agentId: identity.agentId, credentials: channel.credentials, channelOptions: channel.options });
  } catch (error) {
    report.fail((error as Error).message);
    return;
  }
  try {
    const caps = await client.call.GetServerCapabilities({}, { timeoutMs: 5_000 });
    report.ok(`the coordinator at ${address} answers (protocol ${caps.protocol_version || '?'}; features: ${caps.features.join(', ') || 'none'})`);
    // What it does with an ask, from what it announces (see bridge/connection.ts).
    if (!caps.features.includes(FEATURE.readOnlyAsks)) {
      report.warn(`${ASKS_NOT_READ_ONLY(address, caps.notes.join('; ') || undefined)}${config.ask.requireReadOnly ? ' (it is true: asks will be refused there)' : ''}`);
    }
    report.note(
      !config.completions.enabled
        ? 'inline completions: turned off (buckley.completions.enabled)'
        : caps.features.includes(FEATURE.inlineCompletion)
          ? 'inline completions: available (it lists inline_completion), for editors that ask for them (LSP 3.18: Neovim 0.12)'
          : 'inline completions: none — it does not list inline_completion',
    );
    if (!caps.features.includes(FEATURE.readsContext)) {
      report.note('it does not read the editor context (no editor_context): buckley-lsp puts the question, the file, its language and the selection in the message it reads');
    }
    if (!caps.features.includes(FEATURE.answerStream)) {
      report.note('it streams no answer text (no answer_stream): what it sends while working is shown as its progress, and as its report when it sends no answer');
    }
  } catch (error) {
    report.fail(describeConnectFailure('remote', address, error, tls !== undefined).message);
    client.close();
    return;
  }
  // Who we are to it: a session, as the server makes one (Buckley checks the identity here).
  try {
    await client.call.CreateSession({ agent_id: identity.agentId, metadata: { client: 'buckley-lsp doctor' } }, { timeoutMs: 5_000 });
    report.ok(`it accepts buckley-lsp as agent id "${identity.agentId}" (${IDENTITY_SOURCES[identity.source]})`);
  } catch (error) {
    report.fail(isRefusal(error) ? refusalError(address, identity, error).message : `CreateSession failed: ${(error as Error).message}`);
  } finally {
    client.close();
  }
}

/** Each TLS file: there, readable, PEM of the right kind; the pair matches; dates; the client's name. */
function checkTls(tls: NonNullable<Config['coordinator']['tls']>, report: Report): void {
  const read = (key: 'ca' | 'cert' | 'key'): string | undefined => {
    const path = tls[key];
    if (!path) return undefined;
    let text: string;
    try {
      text = readFileBounded(path, PEM_MAX_BYTES).toString('utf8');
    } catch (error) {
      report.fail(`buckley.coordinator.tls.${key}: cannot read ${path}: ${unreadableWhy(error)}`);
      return undefined;
    }
    const wanted = key === 'key' ? /-----BEGIN [A-Z ]*PRIVATE KEY-----/ : /-----BEGIN CERTIFICATE-----/;
    if (!wanted.test(text)) {
      report.fail(`buckley.coordinator.tls.${key}: ${path} is not a PEM ${key === 'key' ? 'private key' : 'certificate'} (no "-----BEGIN ${key === 'key' ? 'PRIVATE KEY' : 'CERTIFICATE'}-----" line)`);
      return undefined;
    }
    return text;
  };
  const certificate = (key: 'ca' | 'cert', text: string | undefined): X509Certificate | undefined => {
    if (!text) return undefined;
    try {
      const parsed = new X509Certificate(text);
      const now = Date.now();
      if (Date.parse(parsed.validTo) < now) report.fail(`buckley.coordinator.tls.${key}: ${tls[key]} expired on ${parsed.validTo}`);
      else if (Date.parse(parsed.validFrom) > now) report.fail(`buckley.coordinator.tls.${key}: ${tls[key]} is valid only from ${parsed.validFrom}`);
      else report.ok(`buckley.coordinator.tls.${key}: ${tls[key]} (${parsed.subject.replace(/\n/g, ', ')}; valid until ${parsed.validTo})`);
      return parsed;
    } catch (error) {
      report.fail(`buckley.coordinator.tls.${key}: ${tls[key]} cannot be read as a certificate: ${(error as Error).message}`);
      return undefined;
    }
  };
  const ca = certificate('ca', read('ca'));
  const cert = certificate('cert', read('cert'));
  const keyText = read('key');
  if (cert && keyText) {
    try {
      if (cert.checkPrivateKey(createPrivateKey(keyText))) report.ok('buckley.coordinator.tls.key belongs to tls.cert');
      else report.fail(`buckley.coordinator.tls.key (${tls.key}) is not the key of tls.cert (${tls.cert}): give the key the certificate was made for`);
    } catch (error) {
      report.fail(`buckley.coordinator.tls.key: ${tls.key} cannot be read as a private key: ${(error as Error).message}`);
    }
  }
  if (cert) {
    const name = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1];
    report.note(name ? `the client certificate's name (CN) is "${name}": Buckley takes it as your identity, and so does buckley-lsp unless buckley.coordinator.agentId says otherwise` : 'the client certificate has no name (CN): Buckley needs one as your identity');
  }
  if (ca && cert && !cert.checkIssued(ca)) report.note(`tls.cert was not issued by tls.ca: fine if the coordinator's client CA is another one`);
}

const IDENTITY_SOURCES = {
  setting: 'buckley.coordinator.agentId',
  certificate: "the client certificate's name",
  instance: "this run's own: neither buckley.coordinator.agentId nor a client certificate names one; each editor gets its own",
} as const;

/** The embedded coordinator's agent: found, starts, speaks ACP — or its own error line. */
async function checkAgent(config: Config, options: DoctorOptions, report: Report): Promise<void> {
  report.ok('no coordinator address: the embedded coordinator will be used');
  const { detectAgent } = await import('../coordinator/agents/detect.js');
  const detection = await detectAgent({ config, env: options.env, logger: new RootLogger('error'), clientVersion: options.version });
  if (!detection.driver) {
    report.fail(detection.problem);
    return;
  }
  const ours = options.env.BUCKLEY_AGENT?.trim();
  if (ours && config.agent.command && splitCommandLine(ours).join('\0') !== config.agent.command.join('\0')) {
    report.note(
      `BUCKLEY_AGENT="${ours}" in the environment is not the agent command (buckley.agent.command is set) and is not passed to the agent, ` +
        'as none of buckley-lsp\'s BUCKLEY_* variables are; if it is the profile for `buckley acp`, give it with buckley.agent.env: {"BUCKLEY_AGENT": "…"}',
    );
  }
  // What inline completions this agent gives (a model completes code; an ACP agent has no such call).
  report.note(
    !config.completions.enabled
      ? 'inline completions: turned off (buckley.completions.enabled)'
      : detection.driver.complete
        ? `inline completions: available from ${detection.driver.description}, for editors that ask for them (LSP 3.18: Neovim 0.12)`
        : `inline completions: none — ${detection.driver.description} cannot complete code inline; a model can (buckley.agent.driver "openai")`,
  );
  const { driver } = detection;
  try {
    // The sandbox it will run in, or why there is none (asks are not read-only then).
    await driver.prepare?.();
    if (driver.unsafeAsks) report.warn(`${ASKS_NOT_READ_ONLY('the embedded coordinator', driver.unsafeAsks)}${config.ask.requireReadOnly ? ' (it is true: asks will be refused)' : ''}`);
    // Started as an ask and as a task would start it, in their sandboxes: what fails there is said here.
    report.ok(await driver.check(AbortSignal.timeout(60_000)));
    if (!driver.unsafeAsks && driver.writesFiles) report.ok('the sandbox (bubblewrap): asks write nothing of yours, tasks only the workspace, credentials are unreadable');
    for (const line of driver.sandboxNotes?.() ?? []) report.note(line);
    if (options.prompt) report.ok(await oneTurn(driver));
    // (its commands come when it sends them: after a turn, surely)
    const controls = await driver.controls?.(false);
    if (controls?.known) for (const line of controlLines(controls)) report.note(line);
  } catch (error) {
    report.fail((error as Error).message);
  } finally {
    await driver.close();
  }
}

/** What the agent offers, as its session said: its models (and the one used, and why), modes, commands. */
function controlLines(controls: AgentControls): string[] {
  const named = (choice: { id: string; name: string }) => (choice.name && choice.name !== choice.id ? `${choice.id} (${choice.name})` : choice.id);
  const lines: string[] = [];
  if (controls.models.length) lines.push(`models: ${controls.models.map(named).join(', ')} — uses ${controls.model || 'its default'}${controls.model_source ? ` (${controls.model_source})` : ''}; "Buckley: choose model" or buckley.agent.model picks another`);
  if (controls.modes.length) {
    const used = [controls.ask_mode && `asks run in ${controls.ask_mode}`, controls.task_mode && `tasks in ${controls.task_mode}${controls.mode_source ? ` (${controls.mode_source})` : ''}`].filter(Boolean).join(', ');
    const choose = controls.task_modes.length > 1 ? `; "Buckley: choose mode" or buckley.agent.mode picks another of ${controls.task_modes.join(', ')}` : '';
    lines.push(`modes: ${controls.modes.map(named).join(', ')}${used ? ` — ${used}` : ''}${choose}`);
  }
  if (controls.commands.length) lines.push(`commands: ${controls.commands.map((command) => `/${command.name}`).join(' ')}`);
  return lines;
}

/** `--prompt`: one real ask, within a minute — its model's answer, or why there is none. */
async function oneTurn(driver: AgentDriver): Promise<string> {
  const question = 'Reply with one short sentence: are you there?';
  const decline = async () => 'reject' as const;
  const refuse = async () => Promise.reject(new Error('doctor reads and writes nothing'));
  const result = await driver.run(
    { sessionKey: 'doctor', prompt: question, readOnly: true, cwd: process.cwd() },
    { text() {}, tool() {}, plan() {}, thought() {}, notice() {}, permission: decline, readFile: refuse, writeFile: refuse },
    AbortSignal.timeout(60_000),
  );
  const answer = result.text.replace(/\s+/g, ' ').trim();
  if (result.stopReason === 'cancelled') throw new Error(`${driver.shortName} did not answer "${question}" within 60 s${answer ? ` (it had said: ${answer.slice(0, 120)})` : ''}`);
  if (!answer) throw new Error(`${driver.shortName} answered "${question}" with nothing (it ended its turn: ${result.stopReason})`);
  return `${driver.shortName} answered a question: "${answer.length > 160 ? `${answer.slice(0, 159)}…` : answer}"`;
}

/** The ways to authenticate `buckley-lsp acp` offers an ACP client, and what each lacks now. */
function checkAuthWays(config: Config, env: NodeJS.ProcessEnv, report: Report): void {
  const ways = authWaysOf(config);
  if (!ways.length) return report.ok('an ACP client is offered no way to authenticate: none is needed here (the agent is unknown, or the team\'s coordinator holds the keys)');
  for (const way of ways) {
    const missing = way.missing(env);
    if (missing) report.warn(`ACP authentication "${way.method.name}": ${missing}`);
    else report.ok(`ACP authentication "${way.method.name}": ${way.askTheAgent ? 'the agent started above is the judge' : 'ready'}`);
  }
}
