/**
 * The ACP agent as our coordinator runs it: one agent process per sandbox (sandbox.ts), since what
 * a process may touch is fixed when it starts — asks in one that can write nothing of the user's,
 * tasks in one that can write their workspace, each workspace its own. Before every turn the
 * workspace's credential files are looked for again: one that appeared since the process started
 * is not hidden from it, so that process is retired (stopped once its turns end) and the turn
 * gets a new one.
 *
 * The sandbox is made for the agent (sandboxPlans.ts): its state, its key variables, its model's
 * hosts. An agent recognised only by its ACP `agentInfo` (behind a wrapper script) is started
 * again, once, in the sandbox it needs, before its first session.
 *
 * Bounded: at most `maxProcesses` processes are kept (the one idle longest is stopped first), and
 * a process idle for `idleMs` is stopped; its conversations come back with the agent's session
 * (`session/load`) or their earlier turns (acp.ts).
 *
 * Without a sandbox (not Linux, no bubblewrap, or turned off) there is one process for everything,
 * as before, and the caller says so to the user (`sandboxProblem`).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Logger } from '../../logger.js';
import type { McpServerSetting } from '../../config.js';
import { CredentialScan } from '../credentialScan.js';
import { boundSockets } from './sandboxSockets.js';
import { workspaceOf } from '../files.js';
import type { AcpDriver, Launch } from './acp.js';
import { AgentError, type AgentDriver, type AgentTurn, type TurnResult, type TurnSink } from './driver.js';
import type { StartGate } from './acp.js';
import type { KnownAgent } from './known.js';
import { knownByAcpName, knownByCommand, knownByScript, pathsInScript } from './recognize.js';
import { probeNetworkNamespace, probeSandbox, sandboxArgs, sandboxCover, type CoveredFile, type SandboxPlan } from './sandbox.js';
import { watchCovers } from './coverWatch.js';
import { agentEnvironmentFor, egressRules, expandHome, guardedKeys, guardedPlaces, holdsTheSystem, statePlaces, visibleFolders, type EgressSettings, type EnvironmentSettings } from './sandboxPlans.js';
import { watchGuarded, type GuardedKeys, type GuardWatch } from './guardedState.js';
import { guardJournalOf, type GuardJournal } from './guardJournal.js';
import { settingsOf, type SettingsText } from './agentSettings.js';
import { findSocat, NetworkGate, userProxyEnvironment } from './sandboxNetwork.js';
import { findOnPath } from './which.js';
import { withheldNames, type AgentEnvironment } from './secrets.js';
import { agentNotFound, agentProgram } from './choose.js';
import type { AgentChoices } from './choices.js';
import type { EditorMcpServer } from './editorMcp.js';
import type { AgentControls } from '../../wire/contract.js';
import { PoolEntries, type Entry } from './poolEntries.js';

export interface PoolOptions {
  command: string[];
  /** The server's environment, which the agent's is made from. */
  env: NodeJS.ProcessEnv;
  /** buckley.agent.env and passEnv. */
  environment: EnvironmentSettings;
  logger: Logger;
  /** Where the agent works when a turn names no workspace. */
  cwd?: string;
  sandbox: { enabled: boolean; writable: string[]; show?: string[]; network: EgressSettings & { confine: boolean } };
  /** buckley.agent.mcpServers: their hosts are the agent's to reach. */
  mcpServers?: Record<string, McpServerSetting>;
  /** Makes the driver of one process (`startGate`: its process starts only when no other of the pool's is starting). */
  driver(launch: Launch, cwd: string | undefined, startGate: StartGate): AcpDriver;
  /** What the agent offers and the model wanted: the same for all its processes. */
  choices: AgentChoices;
  /** Our editor MCP server, for all its processes: closed with the pool. */
  editorMcp?: EditorMcpServer;
  maxProcesses?: number;
  idleMs?: number;
}

export { MAX_PROCESSES, PROCESS_IDLE_MS } from './poolEntries.js';
/** The workspaces whose credential scans are kept (each up to 20,000 folders' names). */
const MAX_SCANS = 16;

export class AgentPool implements AgentDriver {
  private starting: Promise<unknown> = Promise.resolve();
  /**
   * Agent processes start one at a time — an ask's and a task's, the panel's discovery and its
   * first prompt, one started again after it died or was restarted: an agent that keeps one store
   * in its home fails when two of it start at once (opencode: "database is locked", and the
   * second died). A running agent's turns wait for nothing.
   */
  private readonly startGate: StartGate = (start) => {
    const started = this.starting.then(start);
    this.starting = started.catch(() => undefined);
    return started;
  };

  readonly writesFiles = true;
  private readonly entries: PoolEntries;
  private readonly scans = new Map<string, CredentialScan>();
  /** The turns under way, each watching what in the agent's state runs code later. */
  private readonly guards = new Set<GuardWatch>();
  /** The files each process's sandbox binds alone, watched through its turns (coverWatch.ts). */
  private readonly covers = new WeakMap<Entry, CoveredFile[]>();
  /** Each turn's watch, on disk until it is checked: for a coordinator killed mid-turn. */
  private readonly journal: GuardJournal;
  /** Workspace folders said to be missing (said once each). */
  private readonly missing = new Set<string>();
  /** The network gates of the sandboxes, by sandbox and the agent they were made for. */
  private readonly gates = new Map<string, Promise<NetworkGate | undefined>>();
  /** Sandboxes whose process is being made, by their key: their gates are in use. */
  private readonly launching = new Map<string, number>();
  /** The agent its ACP agentInfo named, where its command did not say. */
  private identified: KnownAgent | undefined;
  private saidAtLaunch = false;
  /** Why agents run without a sandbox, once known; undefined while they run in one. */
  sandboxProblem: string | undefined;
  /** Why the agent's network is not confined, once known. */
  networkProblem: string | undefined;
  private probed: Promise<void> | undefined;

  constructor(private readonly options: PoolOptions) {
    this.journal = guardJournalOf(options.env, options.logger);
    const environment = this.environment();
    this.entries = new PoolEntries(options.driver({ program: options.command[0]!, args: options.command.slice(1), env: environment.env }, options.cwd, this.startGate), { ...options, unused: (key) => this.closeGates(key) });
  }

  get description(): string {
    return this.entries.latest.description;
  }

  get shortName(): string {
    return this.entries.latest.shortName;
  }

  get unsafeAsks(): string | undefined {
    return this.sandboxProblem && `the agent runs without a sandbox — ${this.sandboxProblem}`;
  }

  prepare(): Promise<void> {
    return this.whenProbed();
  }

  /** Finds out (once) whether agents can run sandboxed here, and with a network of their own. */
  whenProbed(): Promise<void> {
    this.probed ??= (async () => {
      // Before any agent starts: what a killed coordinator's turns left, and the folder each sandbox keeps read-only.
      this.journal.prepare();
      this.journal.recover();
      if (!this.options.sandbox.enabled) {
        this.sandboxProblem = 'the sandbox is turned off (buckley.agent.sandbox.enabled: false)';
        return;
      }
      const probe = await probeSandbox();
      if (!probe.ok) {
        this.sandboxProblem = probe.reason;
        return;
      }
      if (!this.options.sandbox.network.confine) this.networkProblem = 'buckley.agent.sandbox.network.confine is false';
      else {
        const socat = findSocat(this.options.env);
        this.networkProblem = 'problem' in socat ? socat.problem : await probeNetworkNamespace();
      }
      if (this.networkProblem) this.options.logger.warn(`the agent keeps the whole network (the machine's own services included): ${this.networkProblem}`);
    })();
    return this.probed;
  }

  async run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const entry = await this.entryFor(turn);
    const writes = turn.readOnly ? undefined : workspaceOf(turn.cwd ?? this.options.cwd);
    const agent = () => this.known()?.title ?? 'the agent';
    const guard = this.sandboxProblem ? undefined : watchGuarded(...this.guarded(writes), agent, this.options.logger, this.journal.record());
    if (guard) this.guards.add(guard);
    const stop = new AbortController();
    const relay = () => stop.abort(signal.reason);
    if (signal.aborted) relay();
    signal.addEventListener('abort', relay, { once: true });
    let uncovered: CoveredFile | undefined;
    const unwatch = watchCovers(this.covers.get(entry) ?? [], (file) => {
      uncovered = file;
      this.options.logger.warn(uncoveredWords(file, agent()));
      stop.abort();
    }, this.options.logger);
    try {
      let result: TurnResult | undefined;
      try {
        result = await this.entries.use(entry, () => entry.driver.run(turn, sink, stop.signal));
      } catch (error) {
        if (!uncovered) throw error;
      }
      // Stopped for a file uncovered, the turn ends in those words, whether the agent ended it or failed.
      if (uncovered) throw new AgentError(uncoveredWords(uncovered, agent()));
      return result!;
    } finally {
      unwatch();
      signal.removeEventListener('abort', relay);
      if (guard) this.guards.delete(guard);
      guard?.check((path) => sink.wroteThroughUs?.(path) ?? false);
    }
  }

  /**
   * What runs code later (guardedState.ts): in the agent's state, as the agent is known now, and
   * the user's own where a task's workspace (`task`) or `writable` holds it.
   */
  private guarded(task?: string): [string[], GuardedKeys[]] {
    const { env } = this.environment();
    const { writable } = this.options.sandbox;
    const workspace = task && !holdsTheSystem(task, env) ? task : undefined;
    return [guardedPlaces(this.known(), env, writable, workspace), guardedKeys(this.known(), env, writable)];
  }

  /** Starts the agent in the ask's sandbox and in the task's, opening a session in each, as `doctor` asks. */
  async check(): Promise<string> {
    const ask = await this.entryFor({ sessionKey: 'doctor', prompt: '', readOnly: true, cwd: this.options.cwd });
    const answer = await this.entries.use(ask, () => ask.driver.check());
    if (this.sandboxProblem) return `${answer}; no sandbox: ${this.sandboxProblem}`;
    const task = await this.entryFor({ sessionKey: 'doctor', prompt: '', readOnly: false, cwd: this.options.cwd });
    await this.entries.use(task, () => task.driver.check());
    return `${answer}, in an ask's sandbox and in a task's (bubblewrap)`;
  }

  sandboxNotes(): string[] {
    const environment = this.environment();
    const { withheld } = environment;
    const notes = [withheld.length ? `the agent's environment keeps back ${withheld.length} variable(s) that look like secrets: ${withheldNames(withheld, 20)} (buckley.agent.passEnv passes one on)` : "the agent's environment holds no variable that looks like a secret"];
    const named = namedWords(environment);
    if (named) notes.push(named);
    notes.push(...this.cloudWords(environment));
    if (this.sandboxProblem) return notes;
    const tasks = this.options.sandbox.network.allowInTasks.join(', ') || 'nothing';
    notes.push(this.networkProblem ? `the agent keeps the whole network, the machine's own services included: ${this.networkProblem}` : `the agent's network is confined: it reaches ${this.reachable()}, nothing else (tasks add: ${tasks})`);
    return notes;
  }

  /** What the agent offers; with `discover`, an agent not started yet is asked (in the ask's sandbox). */
  async controls(discover: boolean): Promise<AgentControls> {
    const { choices } = this.options;
    if (discover && !choices.snapshot('').known) {
      const entry = await this.entryFor({ sessionKey: 'controls', prompt: '', readOnly: true, cwd: this.options.cwd });
      // Its start and its one session: what it offers is known when a session opens.
      await this.entries.use(entry, () => (choices.snapshot('').known ? Promise.resolve('') : entry.driver.check()));
    }
    return choices.snapshot(this.shortName);
  }

  chooseModel(model: string): AgentControls | { error: string } {
    const chosen = this.options.choices.choose(model);
    return 'error' in chosen ? chosen : this.options.choices.snapshot(this.shortName);
  }

  chooseMode(mode: string): AgentControls | { error: string } {
    const chosen = this.options.choices.chooseMode(mode);
    return 'error' in chosen ? chosen : this.options.choices.snapshot(this.shortName);
  }

  endSession(sessionKey: string): void {
    this.entries.endSession(sessionKey);
  }

  /** Where an agent with no workspace starts: an empty folder, made once, removed at the end. */
  private noWorkspace(): string {
    this.emptyFolder ??= mkdtempSync(join(tmpdir(), 'buckley-no-workspace-'));
    return this.emptyFolder;
  }
  private emptyFolder: string | undefined;

  async close(): Promise<void> {
    await this.entries.close();
    if (this.emptyFolder) rmSync(this.emptyFolder, { recursive: true, force: true });
    const gates = [...this.gates.values()];
    this.gates.clear();
    await Promise.all(gates.map(async (gate) => (await gate.catch(() => undefined))?.close()));
    this.options.editorMcp?.close();
  }

  /** The known agent the sandbox is made for: its command's, its wrapper script's, else the one its agentInfo named. */
  private known(): KnownAgent | undefined {
    return this.identified ?? knownByCommand(this.options.command) ?? this.byScript();
  }

  private scriptRead = false;
  private scripted: KnownAgent | undefined;

  /** The known agent the command's program runs, where it is a wrapper script (read once, said once). */
  private byScript(): KnownAgent | undefined {
    if (this.scriptRead) return this.scripted;
    this.scriptRead = true;
    const program = this.program();
    this.scripted = knownByScript(program);
    if (this.scripted) this.options.logger.info(`the agent \`${this.options.command.join(' ')}\` runs ${this.scripted.title} (its script ${program} says so): its sandbox is made for ${this.scripted.title}`);
    return this.scripted;
  }

  private environment(): AgentEnvironment {
    return agentEnvironmentFor(this.options.env, this.options.environment, this.known(), this.agentSettings());
  }

  /** The agent's own settings as the user wrote them: before the turns under way, which may have changed them. */
  private agentSettings(): SettingsText[] {
    return settingsOf(this.known(), this.options.env, this.journal.beforeTurns());
  }

  private async entryFor(turn: AgentTurn): Promise<Entry> {
    await this.whenProbed();
    const intent = turn.readOnly ? 'ask' : 'task';
    if (this.sandboxProblem) return this.entries.entry('unsandboxed', '', () => this.options.driver({ program: this.options.command[0]!, args: this.options.command.slice(1), env: this.environment().env }, this.options.cwd ?? this.noWorkspace(), this.startGate));
    // A workspace folder that is not here (an editor's made-up root) is no workspace: nothing to bind.
    const wanted = workspaceOf(turn.cwd ?? this.options.cwd);
    const workspace = wanted && isDirectory(wanted) ? wanted : undefined;
    if (wanted && !workspace && !this.missing.has(wanted)) {
      if (this.missing.size >= MAX_SCANS * 64) this.missing.clear();
      this.missing.add(wanted);
      this.options.logger.warn(`the workspace folder ${wanted} is not a directory here: ${this.description} starts in an empty folder, with no workspace to write`);
    }
    // The sandbox would say a missing program in its own words, after starting: said here, at once.
    if (!this.program()) throw new AgentError(agentNotFound(this.options.command));
    // A workspace that holds the system (`/`, `/home`) is no project: its credential files are
    // not looked for (a walk of the whole disk, each turn); yours and the system's stay hidden.
    const credentials = workspace && !holdsTheSystem(workspace, this.environment().env) ? this.scanOf(workspace).find() : { paths: [], complete: true };
    if (!credentials.complete) this.options.logger.warn(`the workspace ${workspace} is too big to look for all its credential files: those in folders not looked at are not hidden from the agent`);
    const key = `${intent}\0${workspace ?? ''}`;
    // Made before the entry (a network gate listens first), and again for an agent its agentInfo names.
    this.launching.set(key, (this.launching.get(key) ?? 0) + 1);
    try {
      const launch = await this.launch(intent, workspace, credentials.paths);
      const cover = sandboxCover(launch.plan);
      const entry = this.entries.entry(key, cover.key, () =>
        this.options.driver({ ...launch, relaunch: (acpName) => this.relaunch(acpName, intent, workspace, credentials.paths) }, launch.plan.cwd, this.startGate),
      );
      // The same files as when its sandbox was made (else the key differs, and the entry is new).
      this.covers.set(entry, cover.files);
      return entry;
    } finally {
      this.launching.set(key, this.launching.get(key)! - 1);
    }
  }

  /**
   * An agent its command did not name, named by its agentInfo: its sandbox again, made for it, or
   * undefined where the sandbox it runs in is already the one it needs.
   */
  private async relaunch(acpName: string | undefined, intent: 'ask' | 'task', workspace: string | undefined, credentials: string[]): Promise<Launch | undefined> {
    const named = knownByAcpName(acpName);
    if (!named || named === this.known()) return undefined;
    this.identified = named;
    // Before it starts again in its own sandbox: the turns under way watch what it may touch there.
    for (const guard of this.guards) guard.watch(...this.guarded(intent === 'task' ? workspace : undefined));
    const launch = await this.launch(intent, workspace, credentials);
    this.options.logger.info(
      `the agent \`${this.options.command.join(' ')}\` is ${named.title} (its ACP agentInfo says "${acpName}"): it starts again, once, in the sandbox ${named.title} needs (writable: ${launch.plan.stateDirs.join(', ') || 'nothing of its own'})`,
    );
    return launch;
  }

  /** How a process of this sandbox starts: bubblewrap with the agent, its environment, its plan. */
  private async launch(intent: 'ask' | 'task', workspace: string | undefined, credentials: string[]): Promise<Launch & { plan: SandboxPlan }> {
    const environment = this.environment();
    this.sayAtFirstLaunch(environment);
    const plan = await this.plan(intent, workspace, credentials, environment.env);
    const wrap = (command: string[], cwd: string, client?: { env: Record<string, string> }) => ({
      // A client finds bwrap where we do (its PATH may not).
      program: client ? (findOnPath('bwrap', process.env.PATH ?? '') ?? 'bwrap') : 'bwrap',
      // Each sandbox made as the machine is now: a command's hides the sockets bound since the agent started.
      args: sandboxArgs({ ...plan, cwd, sockets: boundSockets() }, command, client),
      sandboxed: true as const,
    });
    return { ...wrap(this.options.command, plan.cwd), env: environment.env, sandbox: intent, wrap, plan };
  }

  private async plan(intent: 'ask' | 'task', workspace: string | undefined, credentials: string[], env: NodeJS.ProcessEnv): Promise<SandboxPlan> {
    const { command } = this.options;
    const known = this.known();
    const places = { ...statePlaces(known, env, command, this.options.sandbox.writable, this.options.logger), guarded: this.guarded(intent === 'task' ? workspace : undefined)[0] };
    const gate = await this.gateFor(`${intent}\0${workspace ?? ''}\0${known?.title ?? ''}`, intent, env);
    return {
      workspace,
      writesWorkspace: intent === 'task' && this.mayWrite(workspace, env),
      ...places,
      workspaceCredentials: credentials,
      // Credentials the agent is given to read: its cloud's login, and what the user shows it.
      shown: [...(known?.cloudLogins?.(env) ?? []).flatMap((cloud) => cloud.shown), ...(this.options.sandbox.show ?? []).map((path) => expandHome(path, env))],
      home: env.HOME || homedir(),
      // The program as PATH finds it, the files the command names (`node /x/agent.js`), and those a
      // wrapper script it is names (`exec node /tmp/x/agent.js`).
      programPaths: [this.program() ?? command[0]!, ...command.slice(1), ...pathsInScript(this.program())].filter((word) => isAbsolute(word)),
      // No workspace named: an empty folder of its own, not the coordinator's (nothing of it to read or write).
      cwd: workspace ?? this.noWorkspace(),
      visible: visibleFolders(env),
      sockets: boundSockets(),
      ...(gate ? { network: gate.plan } : {}),
    };
  }

  /** Whether a task may write the workspace: not one that holds the system (said once per workspace). */
  private mayWrite(workspace: string | undefined, env: NodeJS.ProcessEnv): boolean {
    const why = workspace === undefined ? undefined : holdsTheSystem(workspace, env);
    if (why && !this.saidSystem.has(workspace!)) {
      this.saidSystem.add(workspace!);
      this.options.logger.warn(`a task does not write the workspace ${workspace}: ${why}. Open a project's folder as the workspace, or name the folders a task may write in buckley.agent.sandbox.writable`);
    }
    return !why;
  }
  private readonly saidSystem = new Set<string>();

  /** Closes the network gates of a sandbox whose processes are all stopped (but for one starting). */
  private closeGates(key: string): void {
    if (this.launching.get(key)) return;
    for (const [gateKey, gate] of this.gates) {
      if (!gateKey.startsWith(`${key}\0`)) continue;
      this.gates.delete(gateKey);
      void gate.then((open) => open?.close()).catch(() => undefined);
    }
  }

  /** The network gate of a sandbox (made once): undefined where the network is not confined. */
  private gateFor(key: string, intent: 'ask' | 'task', env: NodeJS.ProcessEnv): Promise<NetworkGate | undefined> {
    if (this.networkProblem) return Promise.resolve(undefined);
    let gate = this.gates.get(key);
    if (!gate) {
      const socat = findSocat(this.options.env);
      gate = (async () => {
        if ('problem' in socat) return undefined;
        const editorMcp = await this.options.editorMcp?.endpoint();
        return NetworkGate.open(this.rules(intent === 'task', env, editorMcp), this.options.logger, socat.socat, userProxyEnvironment(this.options.env, this.options.environment.env));
      })();
      this.gates.set(key, gate);
      gate.catch((error: unknown) => {
        this.gates.delete(key);
        this.options.logger.warn(`the agent's network gate could not listen: ${(error as Error).message}`);
      });
    }
    return gate;
  }

  private rules(task: boolean, env: NodeJS.ProcessEnv, editorMcp: string | undefined) {
    return egressRules({ known: this.known(), env, given: this.options.environment.env, mcpServers: this.options.mcpServers, editorMcp, settings: this.options.sandbox.network, task, agentSettings: this.agentSettings() });
  }

  /** "api.openai.com, 127.0.0.1:4000 and buckley-lsp's editor tools": what an ask's network reaches, in words. */
  private reachable(): string {
    const hosts = [...new Set(this.rules(false, this.environment().env, undefined).map((rule) => (rule.port === undefined ? rule.host : `${rule.host}:${rule.port}`)))];
    const editor = this.options.editorMcp ? ["buckley-lsp's editor tools"] : [];
    const all = [...hosts, ...editor];
    return all.length === 0 ? 'no host' : all.length === 1 ? all[0]! : `${all.slice(0, -1).join(', ')} and ${all.at(-1)}`;
  }

  /** The secret-looking variables kept from the agent, and what keeps it from working here by its own rules: said once. */
  private sayAtFirstLaunch(environment: AgentEnvironment): void {
    if (this.saidAtLaunch) return;
    this.saidAtLaunch = true;
    for (const caveat of this.known()?.caveats?.(environment.env) ?? []) this.options.logger.warn(caveat);
    const named = namedWords(environment);
    if (named) this.options.logger.info(named);
    for (const words of this.cloudWords(environment)) this.options.logger.info(words);
    if (environment.withheld.length === 0) return;
    this.options.logger.info(`the agent's environment keeps back what looks like secrets: ${withheldNames(environment.withheld, 20)} (buckley.agent.passEnv passes one on)`);
  }

  /** The cloud the agent's model is reached through, and what of its login the sandbox gives it, in words. */
  private cloudWords(environment: AgentEnvironment): string[] {
    const known = this.known();
    return (known?.cloudLogins?.(environment.env) ?? []).map(
      (cloud) => `${known!.title} reaches its model through ${cloud.what}: its login is shown to it (${cloud.shown.join(', ')}, read-only; ${cloud.keys.join(', ')} passed on), and its network reaches ${cloud.hosts.join(', ')}`,
    );
  }

  /** The agent's program as it will run: its path, found on PATH; undefined when there is none. */
  private program(): string | undefined {
    return agentProgram(this.options.command, { ...this.options.env, ...this.options.environment.env });
  }

  /** The workspace's scan, kept for the next turn there: of the MAX_SCANS workspaces used last (callers name any). */
  private scanOf(workspace: string): CredentialScan {
    const scan = this.scans.get(workspace) ?? new CredentialScan(workspace);
    this.scans.delete(workspace);
    this.scans.set(workspace, scan);
    for (const oldest of [...this.scans.keys()].slice(0, Math.max(0, this.scans.size - MAX_SCANS))) this.scans.delete(oldest);
    return scan;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A turn stopped because a file its sandbox covered alone was replaced on disk. */
function uncoveredWords(file: CoveredFile, agent: string): string {
  const lost = file.covers === 'hidden' ? 'hid it' : 'kept it read-only';
  return `${file.path} was replaced on disk while ${agent} worked, and its sandbox no longer ${lost} (a file bound alone goes with the file replaced): the turn was stopped. Run it again: it gets a new sandbox that covers the new file`;
}

/** The secret-looking variables passed on because the agent's settings name them, by file: "GITHUB_TOKEN (named in ~/.gemini/settings.json)". */
function namedWords(environment: AgentEnvironment): string | undefined {
  if (!environment.named?.length) return undefined;
  const byFile = new Map<string, string[]>();
  for (const { name, file } of environment.named) byFile.set(file, [...(byFile.get(file) ?? []), name]);
  const words = [...byFile].map(([file, names]) => `${names.join(', ')} (named in ${file})`);
  return `the agent's environment keeps what looks like secrets but its own settings name: ${words.join('; ')}`;
}
