/**
 * The ACP agent as our coordinator runs it: one agent process per sandbox (sandbox.ts), since what
 * a process may touch is fixed when it starts — asks in one that can write nothing of the user's,
 * tasks in one that can write their workspace, each workspace its own. Before every turn the
 * workspace's credential files are looked for again: one that appeared since the process started
 * is not hidden from it, so that process is retired (stopped once its turns end) and the turn
 * gets a new one.
 *
 * Bounded: at most `maxProcesses` processes are kept (the one idle longest is stopped first), and
 * a process idle for `idleMs` is stopped; its conversations come back with the agent's session
 * (`session/load`) or their earlier turns (acp.ts).
 *
 * Without a sandbox (not Linux, no bubblewrap, or turned off) there is one process for everything,
 * as before, and the caller says so to the user (`sandboxProblem`).
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { Logger } from '../../logger.js';
import { CredentialScan } from '../credentialScan.js';
import { workspaceOf } from '../files.js';
import type { AcpDriver } from './acp.js';
import { AgentError, type AgentDriver, type AgentTurn, type TurnResult, type TurnSink } from './driver.js';
import { knownByCommand } from './known.js';
import { probeSandbox, sandboxArgs, type SandboxPlan } from './sandbox.js';
import { agentNotFound, agentProgram } from './choose.js';
import type { AgentChoices } from './choices.js';
import type { EditorMcpServer } from './editorMcp.js';
import type { AgentControls } from '../../wire/contract.js';

/** How a process is started: the program and its arguments (bwrap and the agent, or the agent). */
export interface Launch {
  program: string;
  args: string[];
  /** The sandbox it runs in; none without one. */
  sandbox?: 'ask' | 'task';
  /** Started with `sandboxArgs`: it needs `sandboxStdio`. */
  sandboxed?: boolean;
  /** Runs another command in the same sandbox (the agent's terminals); none without one. */
  wrap?: (command: string[], cwd: string) => { program: string; args: string[]; sandboxed: true };
}

export interface PoolOptions {
  command: string[];
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Where the agent works when a turn names no workspace. */
  cwd?: string;
  sandbox: { enabled: boolean; writable: string[] };
  /** Makes the driver of one process. */
  driver(launch: Launch, cwd: string | undefined): AcpDriver;
  /** What the agent offers and the model wanted: the same for all its processes. */
  choices: AgentChoices;
  /** Our editor MCP server, for all its processes: closed with the pool. */
  editorMcp?: EditorMcpServer;
  maxProcesses?: number;
  idleMs?: number;
}

interface Entry {
  key: string;
  driver: AcpDriver;
  /** The credential files hidden from it, as found when it started. */
  hidden: string;
  running: number;
  lastUsed: number;
  retired: boolean;
  idleTimer?: NodeJS.Timeout;
}

export const MAX_PROCESSES = 4;
export const PROCESS_IDLE_MS = 15 * 60_000;

export class AgentPool implements AgentDriver {
  readonly writesFiles = true;
  private readonly entries = new Map<string, Entry>();
  /** Retired processes still running a turn: stopped when it ends. */
  private readonly retiring = new Set<Entry>();
  /** Retired processes still running a turn: stopped when it ends. */
  private readonly scans = new Map<string, CredentialScan>();
  /** Workspace folders said to be missing (said once each). */
  private readonly missing = new Set<string>();
  private latest: AcpDriver;
  /** Why agents run without a sandbox, once known; undefined while they run in one. */
  sandboxProblem: string | undefined;
  private probed: Promise<void> | undefined;

  constructor(private readonly options: PoolOptions) {
    this.latest = options.driver({ program: options.command[0]!, args: options.command.slice(1) }, options.cwd);
  }

  get description(): string {
    return this.latest.description;
  }

  get shortName(): string {
    return this.latest.shortName;
  }

  get unsafeAsks(): string | undefined {
    return this.sandboxProblem && `the agent runs without a sandbox — ${this.sandboxProblem}`;
  }

  prepare(): Promise<void> {
    return this.whenProbed();
  }

  /** Finds out (once) whether agents can run sandboxed here. */
  whenProbed(): Promise<void> {
    this.probed ??= (async () => {
      if (!this.options.sandbox.enabled) {
        this.sandboxProblem = 'the sandbox is turned off (buckley.agent.sandbox.enabled: false)';
        return;
      }
      const probe = await probeSandbox();
      if (!probe.ok) this.sandboxProblem = probe.reason;
    })();
    return this.probed;
  }

  async run(turn: AgentTurn, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const entry = await this.entryFor(turn);
    clearTimeout(entry.idleTimer);
    entry.running++;
    entry.lastUsed = Date.now();
    try {
      return await entry.driver.run(turn, sink, signal);
    } finally {
      entry.running--;
      entry.lastUsed = Date.now();
      this.reap();
    }
  }

  async check(): Promise<string> {
    const entry = await this.entryFor({ sessionKey: 'doctor', prompt: '', readOnly: true, cwd: this.options.cwd });
    const answer = await entry.driver.check();
    return this.sandboxProblem ? `${answer}; no sandbox: ${this.sandboxProblem}` : `${answer}, in a sandbox (bubblewrap)`;
  }

  /** What the agent offers; with `discover`, an agent not started yet is asked (in the ask's sandbox). */
  async controls(discover: boolean): Promise<AgentControls> {
    const { choices } = this.options;
    if (discover && !choices.snapshot('').known) await (await this.entryFor({ sessionKey: 'controls', prompt: '', readOnly: true, cwd: this.options.cwd })).driver.check();
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
    for (const entry of this.entries.values()) entry.driver.endSession(sessionKey);
  }

  async close(): Promise<void> {
    const entries = [...this.entries.values()];
    this.entries.clear();
    for (const entry of entries) clearTimeout(entry.idleTimer);
    await Promise.all(entries.map((entry) => entry.driver.close()));
    this.options.editorMcp?.close();
  }

  private async entryFor(turn: AgentTurn): Promise<Entry> {
    await this.whenProbed();
    const intent = turn.readOnly ? 'ask' : 'task';
    if (this.sandboxProblem) return this.entry('unsandboxed', '', () => this.options.driver({ program: this.options.command[0]!, args: this.options.command.slice(1) }, this.options.cwd));
    // A workspace folder that is not here (an editor's made-up root) is no workspace: nothing to bind.
    const wanted = workspaceOf(turn.cwd ?? this.options.cwd);
    const workspace = wanted && isDirectory(wanted) ? wanted : undefined;
    if (wanted && !workspace && !this.missing.has(wanted)) {
      this.missing.add(wanted);
      this.options.logger.warn(`the workspace folder ${wanted} is not a directory here: starting ${this.description} in ${process.cwd()}`);
    }
    // The sandbox would say a missing program in its own words, after starting: said here, at once.
    const program = this.program();
    if (!program) throw new AgentError(agentNotFound(this.options.command));
    const credentials = workspace ? this.scanOf(workspace).find() : { paths: [], complete: true };
    if (!credentials.complete) this.options.logger.warn(`the workspace ${workspace} is too big to look for all its credential files: those in folders not looked at are not hidden from the agent`);
    const hidden = credentials.paths.join('\0');
    return this.entry(`${intent}\0${workspace ?? ''}`, hidden, () => {
      const plan = this.plan(intent, workspace, credentials.paths);
      const wrap = (command: string[], cwd: string) => ({ program: 'bwrap', args: sandboxArgs({ ...plan, cwd }, command), sandboxed: true as const });
      return this.options.driver({ ...wrap(this.options.command, plan.cwd), sandbox: intent, wrap }, plan.cwd);
    });
  }

  /** The entry under `key`, a new one when there is none or its sandbox hides other credentials. */
  private entry(key: string, hidden: string, make: () => AcpDriver): Entry {
    const current = this.entries.get(key);
    if (current && current.hidden === hidden) return current;
    if (current) {
      this.options.logger.info(`credential files in the workspace changed: the agent gets a new sandbox that hides them (${this.latest.description})`);
      this.retire(current);
    }
    const entry: Entry = { key, driver: make(), hidden, running: 0, lastUsed: Date.now(), retired: false };
    this.entries.set(key, entry);
    this.latest = entry.driver;
    this.reap();
    return entry;
  }

  private plan(intent: 'ask' | 'task', workspace: string | undefined, credentials: string[]): SandboxPlan {
    const { env, command } = this.options;
    const known = knownByCommand(command);
    const stateDirs = [...(known?.stateDirs(env) ?? []), ...this.options.sandbox.writable.map((path) => resolve(path.replace(/^~(?=\/|$)/, env.HOME || homedir())))];
    // An agent's state that does not exist yet could not be written: it is made first.
    const stateFiles = known?.stateFiles?.(env) ?? [];
    for (const path of [...stateDirs, ...stateFiles.map((file) => file.path)]) {
      const file = stateFiles.find((candidate) => candidate.path === path);
      try {
        if (!file) mkdirSync(path, { recursive: true });
        else if (!existsSync(path)) writeFileSync(path, file.initial, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') this.options.logger.warn(`cannot make ${path} for the agent's state: ${(error as Error).message}`);
      }
    }
    return {
      workspace,
      writesWorkspace: intent === 'task',
      stateDirs,
      stateFiles: stateFiles.map((file) => file.path).filter((path) => existsSync(path)),
      workspaceCredentials: credentials,
      home: env.HOME || homedir(),
      // The program as PATH finds it, and the files the command names (`node /x/agent.js`).
      programPaths: [this.program() ?? command[0]!, ...command.slice(1)].filter((word) => isAbsolute(word)),
      cwd: workspace ?? [this.options.cwd].find((folder) => folder && isDirectory(folder)) ?? process.cwd(),
    };
  }

  /** The agent's program as it will run: its path, found on PATH; undefined when there is none. */
  private program(): string | undefined {
    return agentProgram(this.options.command, this.options.env);
  }


  private scanOf(workspace: string): CredentialScan {
    let scan = this.scans.get(workspace);
    if (!scan) this.scans.set(workspace, (scan = new CredentialScan(workspace)));
    return scan;
  }

  private retire(entry: Entry): void {
    entry.retired = true;
    this.entries.delete(entry.key);
    this.stopWhenIdle(entry);
  }

  private stopWhenIdle(entry: Entry): void {
    if (entry.running > 0) {
      // Checked again when its turn ends (reap).
      this.retiring.add(entry);
      return;
    }
    this.retiring.delete(entry);
    clearTimeout(entry.idleTimer);
    void entry.driver.close();
  }


  /** Stops what is over the bounds: retired processes whose turns ended, the idle beyond `maxProcesses`; arms idle timers. */
  private reap(): void {
    for (const entry of [...this.retiring]) if (entry.running === 0) this.stopWhenIdle(entry);
    const idle = [...this.entries.values()].filter((entry) => entry.running === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    let over = this.entries.size - (this.options.maxProcesses ?? MAX_PROCESSES);
    for (const entry of idle) {
      if (over-- > 0) {
        this.options.logger.debug(`stopping the agent process of ${entry.key.replace('\0', ' in ')}: more than ${this.options.maxProcesses ?? MAX_PROCESSES} kept`);
        this.retire(entry);
        continue;
      }
      clearTimeout(entry.idleTimer);
      entry.idleTimer = setTimeout(() => {
        if (entry.running === 0 && this.entries.get(entry.key) === entry) this.retire(entry);
      }, this.options.idleMs ?? PROCESS_IDLE_MS);
      entry.idleTimer.unref();
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

