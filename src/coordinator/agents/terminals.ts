/**
 * ACP terminals (`terminal/create`, `output`, `wait_for_exit`, `kill`, `release`): commands an
 * agent runs through us rather than by itself, so that none runs unseen. A command is judged and
 * decided like any tool call (an ask declines it, a task asks above the auto-approve level) —
 * unless the user just approved that very command in the tool call that asked for it (Claude
 * Code's older adapter asks first, then creates the terminal). It runs where the agent runs (its
 * sandbox), in a process group of its own; its output is kept up to the agent's byte limit (the
 * end of it) and shown as the tool's output. A turn's terminals are killed when it is cancelled
 * or ends.
 */
import type { ChildProcess } from 'node:child_process';
import type { Logger } from '../../logger.js';
import * as z from '../../schema.js';
import { FileAccessError } from '../files.js';
import type { TurnSink } from './driver.js';
import { closeOwnDescriptors, spawnGroup, stopGroup } from './processes.js';
import { sandboxStdio, SANDBOX_STARTS, vanishedMount } from './sandbox.js';
import { TERMINAL_COMMAND_META } from '../../wire/contract.js';

export interface TerminalTurn {
  sink: Pick<TurnSink, 'permission' | 'terminal'>;
  signal: AbortSignal;
  /** The turn's workspace, if it names one. */
  cwd?: string;
}

type TerminalExit = { exitCode: number | null; signal: string | null };

interface Terminal {
  id: string;
  sessionId: string;
  /** The command's process (its latest start). */
  child?: ChildProcess;
  output: string;
  truncated: boolean;
  limit: number;
  exit?: TerminalExit;
  exited: Promise<TerminalExit>;
}

const createParams = z.object({
  sessionId: z.string(),
  command: z.string().check(z.minLength(1)),
  args: z.optional(z.nullable(z.array(z.string()))),
  env: z.optional(z.nullable(z.array(z.object({ name: z.string(), value: z.string() })))),
  cwd: z.optional(z.nullable(z.string())),
  outputByteLimit: z.optional(z.nullable(z.int().check(z.minimum(0)))),
});
const terminalParams = z.object({ sessionId: z.string(), terminalId: z.string() });

/** Output kept when the agent sets no limit. */
const DEFAULT_OUTPUT_BYTES = 1024 * 1024;
/** The most output kept whatever the agent asks for. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
/**
 * What all the commands of one agent process may hold at once — each bounded, their sum too: an
 * agent (or its model, in a loop) that starts command after command without releasing them must
 * not fill the coordinator's memory, nor the machine's process table.
 */
export const TERMINALS_OUTPUT_BYTES = 64 * 1024 * 1024;
export const MAX_TERMINALS = 32;
/** Less room than this for a new command's output: it is refused rather than run with next to none. */
const LEAST_OUTPUT_BYTES = 64 * 1024;

export class Terminals {
  private readonly terminals = new Map<string, Terminal>();
  /** Terminals the caller's client runs: the id the agent knows → the session's and the client's. */
  private readonly inClient = new Map<string, { sessionId: string; clientId: string }>();
  /** Commands the user approved in a tool call of a session's turn, not yet run. */
  private readonly approvedCommands = new Map<string, string[]>();
  private next = 0;

  constructor(
    private readonly options: {
      logger: Logger;
      /** Wraps a command to run where the agent runs (its sandbox), by us or (`client`) by the caller's client; none: as it is. */
      wrap?: (command: string[], cwd: string, client?: { env: Record<string, string> }) => { program: string; args: string[]; sandboxed?: boolean } | undefined;
      /** The agent's environment (without the user's secrets), as it is when the command starts. */
      env?: () => NodeJS.ProcessEnv | undefined;
      /** Where the agent runs (its workspace, or the empty folder of one with none): a command's folder unless it names one. */
      cwd: () => string | undefined;
    },
  ) {}

  /** A tool call was approved: a terminal that runs its command is not asked again. */
  approved(sessionId: string, input: unknown): void {
    const command = commandOf(input);
    if (command) this.approvedCommands.set(sessionId, [...(this.approvedCommands.get(sessionId) ?? []), command]);
  }

  async handle(method: string, params: unknown, turnOf: (sessionId: string) => TerminalTurn | undefined): Promise<unknown> {
    if (method === 'terminal/create') return this.create(params, turnOf);
    const parsed = terminalParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`${method} needs sessionId and terminalId: ${z.problems(parsed.error)}`);
    const inClient = this.inClient.get(parsed.data.terminalId);
    if (inClient && inClient.sessionId === parsed.data.sessionId) return this.inTheClient(method, parsed.data.terminalId, inClient.clientId, turnOf(inClient.sessionId));
    const terminal = this.terminals.get(parsed.data.terminalId);
    if (!terminal || terminal.sessionId !== parsed.data.sessionId) throw new FileAccessError(`no terminal ${parsed.data.terminalId} in this session (released, or its turn ended)`, true);
    switch (method) {
      case 'terminal/output':
        return { output: terminal.output, truncated: terminal.truncated, ...(terminal.exit ? { exitStatus: terminal.exit } : {}) };
      case 'terminal/wait_for_exit':
        return await terminal.exited;
      case 'terminal/kill':
        if (terminal.child) await stopGroup(terminal.child);
        return {};
      case 'terminal/release':
        this.terminals.delete(terminal.id);
        if (terminal.child) void stopGroup(terminal.child);
        return {};
      default:
        throw new FileAccessError(`${method} is not a terminal method`);
    }
  }

  private async create(params: unknown, turnOf: (sessionId: string) => TerminalTurn | undefined): Promise<{ terminalId: string }> {
    const parsed = createParams.safeParse(params);
    if (!parsed.success) throw new FileAccessError(`terminal/create needs a command: ${z.problems(parsed.error)}`);
    const { sessionId, command, args, env, cwd, outputByteLimit } = parsed.data;
    const turn = turnOf(sessionId);
    if (!turn || turn.signal.aborted) throw new FileAccessError(`cannot run \`${command}\`: the session has no turn running`);
    const line = [command, ...(args ?? [])].join(' ');
    const wanted = Math.min(outputByteLimit ?? DEFAULT_OUTPUT_BYTES, MAX_OUTPUT_BYTES);
    // Refused before the user is asked, where it would run here (a client's terminal holds its output itself).
    if (!turn.sink.terminal) this.roomFor(wanted, line);
    if (!this.takeApproved(sessionId, line)) {
      const input = { command: args?.length ? [command, ...args] : command, ...(cwd ? { cwd } : {}) };
      const decision = await turn.sink.permission({ tool: line, kind: 'execute', title: line, parameters: { command: line, ...(cwd ? { cwd } : {}) }, input, locations: [], writes: [] }, turn.signal);
      if (decision === 'reject') throw new FileAccessError(`running \`${line}\` was not approved (denied, an ask is read-only, or no answer in time)`);
    }
    // No arguments: a command line for the shell, as agents write them (`npm test && git status`).
    const argv = args?.length ? [command, ...args] : ['/bin/sh', '-c', command];
    // Never this process's own folder: a command of an agent with no workspace runs in its empty one.
    const workdir = cwd ?? turn.cwd ?? this.options.cwd();
    if (!workdir) throw new FileAccessError(`cannot run \`${line}\`: the agent has no folder to run it in (no workspace)`);
    if (turn.sink.terminal) {
      try {
        return await this.createInClient(turn, sessionId, argv, workdir, Object.fromEntries((env ?? []).map((variable) => [variable.name, variable.value])), wanted, line);
      } catch (error) {
        if (turn.signal.aborted) throw error;
        // The command is approved: it runs here, in the agent's sandbox, rather than not at all.
        this.options.logger.warn(`the client's terminal did not run \`${line}\` (${(error as Error).message}): it runs in the agent's sandbox here`);
      }
    }
    const limit = this.roomFor(wanted, line);
    const id = `term-${++this.next}`;
    let settle!: (exit: TerminalExit) => void;
    const terminal: Terminal = { id, sessionId, output: '', truncated: false, limit, exited: new Promise((resolve) => (settle = resolve)) };
    this.start(terminal, { argv, workdir, env: { ...(this.options.env?.() ?? process.env), ...Object.fromEntries((env ?? []).map((variable) => [variable.name, variable.value])) }, line }, settle);
    this.terminals.set(id, terminal);
    this.options.logger.info(`running \`${line}\` for the agent (terminal ${id})`);
    return { terminalId: id };
  }

  /**
   * The command run in the caller's client's terminal (an ACP panel shows it): inside the agent's
   * sandbox all the same, with the agent's environment whole (the client's cleared); without a
   * sandbox, with that environment alone (`env -i`).
   */
  private async createInClient(turn: TerminalTurn, sessionId: string, argv: string[], workdir: string, extra: Record<string, string>, limit: number, line: string): Promise<{ terminalId: string }> {
    const env = { ...definedOnly(this.options.env?.() ?? process.env), ...extra };
    const launch = this.options.wrap?.(argv, workdir, { env }) ?? { program: '/usr/bin/env', args: ['-i', ...Object.entries(env).map(([name, value]) => `${name}=${value}`), ...argv] };
    const created = await turn.sink.terminal!('terminal/create', { command: launch.program, args: launch.args, cwd: workdir, outputByteLimit: limit, _meta: { [TERMINAL_COMMAND_META]: line } }, turn.signal);
    const clientId = (created as { terminalId?: unknown } | undefined)?.terminalId;
    if (typeof clientId !== 'string' || !clientId) throw new FileAccessError(`cannot run \`${line}\`: the client's terminal/create gave no terminal id`);
    const id = `client-${++this.next}`;
    this.inClient.set(id, { sessionId, clientId });
    this.options.logger.info(`running \`${line}\` for the agent in the client's terminal ${clientId} (terminal ${id}${launch.program === '/usr/bin/env' ? ', no sandbox' : ', in its sandbox'})`);
    return { terminalId: id };
  }

  /** A call on a terminal the client runs, made there (within the turn that made it). */
  private inTheClient(method: string, id: string, clientId: string, turn: TerminalTurn | undefined): Promise<unknown> {
    if (!turn?.sink.terminal || turn.signal.aborted) throw new FileAccessError(`terminal ${id} is gone: its turn ended`, true);
    if (method === 'terminal/release') this.inClient.delete(id);
    return turn.sink.terminal(method, { terminalId: clientId }, turn.signal);
  }

  /**
   * Starts the command (in the agent's sandbox) for the terminal; `settle` once it has ended. Where
   * bubblewrap could not make the sandbox because something it was to mount went away meanwhile
   * (another program's socket) — its only words, the command never run — it is started again in
   * a sandbox made as the machine is now (at most SANDBOX_STARTS), said in the log.
   */
  private start(terminal: Terminal, command: { argv: string[]; workdir: string; env: NodeJS.ProcessEnv; line: string }, settle: (exit: TerminalExit) => void, starts = 1): void {
    const launch = this.options.wrap?.(command.argv, command.workdir) ?? { program: command.argv[0]!, args: command.argv.slice(1) };
    const stdio = launch.sandboxed ? sandboxStdio(['ignore', 'pipe', 'pipe'] as const) : (['ignore', 'pipe', 'pipe'] as const);
    const child = spawnGroup(launch.program, launch.args, { cwd: command.workdir, env: command.env, stdio: [...stdio] });
    closeOwnDescriptors(stdio);
    terminal.child = child;
    // Decoded by each stream (a character written in two pieces is read whole), never read by read.
    const append = (text: string) => this.append(terminal, text);
    child.stdout?.setEncoding('utf8').on('data', append);
    child.stderr?.setEncoding('utf8').on('data', append);
    child.once('error', (error) => {
      terminal.output += `${error.message}\n`;
      settle((terminal.exit = { exitCode: 127, signal: null }));
    });
    child.once('close', (exitCode, signal) => {
      const lines = terminal.output.split('\n').filter((text) => text.trim());
      const unmade = launch.sandboxed && exitCode === 1 && lines.every((text) => text.startsWith('bwrap: '));
      const gone = unmade && starts < SANDBOX_STARTS && this.terminals.get(terminal.id) === terminal ? vanishedMount(lines) : undefined;
      if (!gone) return settle((terminal.exit = { exitCode, signal }));
      this.options.logger.info(`${gone} went away while the sandbox of \`${command.line}\` was made (another program's socket or file, removed meanwhile): started again in a sandbox made as the machine is now`);
      terminal.output = '';
      this.start(terminal, command, settle, starts + 1);
    });
  }

  /** The output limit a new command gets within what the open ones hold; refused in words past the bounds. */
  private roomFor(wanted: number, line: string): number {
    const open = [...this.terminals.values()];
    const release = 'release the terminals it is done with (terminal/release) before starting another';
    if (open.length >= MAX_TERMINALS) throw new FileAccessError(`cannot run \`${line}\`: ${MAX_TERMINALS} commands are open at once already; ${release}`);
    const room = TERMINALS_OUTPUT_BYTES - open.reduce((sum, terminal) => sum + terminal.limit, 0);
    // A limit of 0 keeps nothing: it costs nothing.
    if (wanted > 0 && room < Math.min(wanted, LEAST_OUTPUT_BYTES)) throw new FileAccessError(`cannot run \`${line}\`: the open commands keep ${TERMINALS_OUTPUT_BYTES / 1024 / 1024} MB of output already; ${release}`);
    return Math.min(wanted, room);
  }

  /** Adds output, keeping its end within the terminal's byte limit (cut at a character). */
  private append(terminal: Terminal, text: string): void {
    terminal.output += text;
    if (Buffer.byteLength(terminal.output, 'utf8') <= terminal.limit) return;
    const bytes = Buffer.from(terminal.output, 'utf8');
    let start = bytes.length - terminal.limit;
    while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
    terminal.output = bytes.subarray(start).toString('utf8');
    terminal.truncated = true;
  }

  private takeApproved(sessionId: string, line: string): boolean {
    const approved = this.approvedCommands.get(sessionId) ?? [];
    const index = approved.findIndex((command) => command.trim() === line.trim());
    if (index < 0) return false;
    approved.splice(index, 1);
    return true;
  }

  /** The output of the first of these terminals, for the tool call that shows them. */
  outputOf(terminalIds: string[]): string | undefined {
    for (const id of terminalIds) {
      const terminal = this.terminals.get(id);
      if (terminal) return terminal.output;
    }
    return undefined;
  }

  /** Kills and forgets the terminals of a session's turn (cancelled, or ended). */
  endTurn(sessionId: string): void {
    this.approvedCommands.delete(sessionId);
    // The client's are killed by the caller, whose turn it is too.
    for (const [id, terminal] of this.inClient) if (terminal.sessionId === sessionId) this.inClient.delete(id);
    for (const terminal of [...this.terminals.values()]) {
      if (terminal.sessionId !== sessionId) continue;
      this.terminals.delete(terminal.id);
      if (terminal.child) void stopGroup(terminal.child);
    }
  }

  closeAll(): void {
    this.approvedCommands.clear();
    this.inClient.clear();
    for (const terminal of this.terminals.values()) if (terminal.child) void stopGroup(terminal.child);
    this.terminals.clear();
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The command line a tool call's input holds (`command` as a string or an argv array). */
function commandOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const command = (input as { command?: unknown; cmd?: unknown }).command ?? (input as { cmd?: unknown }).cmd;
  if (typeof command === 'string') return command;
  if (Array.isArray(command) && command.every((word) => typeof word === 'string')) return command.join(' ');
  return undefined;
}
