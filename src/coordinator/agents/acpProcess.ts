/**
 * One ACP agent process: started (in its sandbox, as pool.ts launches it), spoken to with the ACP
 * SDK over its stdio, initialized — what it is (`agentInfo`), what it can do (close and load
 * sessions), how it authenticates — and watched: its death fails whatever waits on it, with its
 * exit status and the line of its stderr that says why.
 *
 * What the client offers the agent: file reads and writes through us (the editor's buffers first,
 * writes approved: ../files.ts), and terminals (commands run through us: terminals.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import type * as acp from '@agentclientprotocol/sdk';
import type { Logger } from '../../logger.js';
import { errorLine, errorText } from './acpErrors.js';
import { parseSessionUpdate, type SessionUpdate } from './acpMessages.js';
import { AgentError } from './driver.js';
import { LineSplitter } from './lines.js';
import { closeOwnDescriptors, spawnGroup, stopGroup } from './processes.js';
import { knownByAcpName, knownByCommand } from './recognize.js';
import { sandboxStdio, SANDBOX_STARTS, vanishedMount, type SandboxPlan } from './sandbox.js';
import { takeSessionUpdates } from './updateStream.js';
import { boundedLines, INVALID_REQUEST, OVERSIZED_METHOD, oversizedParams, oversizedWords } from '../../jsonLines.js';
import { paramsBy, wordedErrors } from '../../invalidParams.js';

export interface AuthMethod {
  id: string;
  name: string;
  description?: string;
  /** `env_var` methods: the variables that must be set. */
  vars?: string[];
}

export interface AgentProcess {
  child: ChildProcess;
  connection: acp.ClientConnection;
  /** Why it died, once it has. */
  death?: AgentError;
  /** Calls waiting on it that its death must fail (see `orDeath`). */
  readonly deathListeners: Set<(error: AgentError) => void>;
  /** Its ACP `agentInfo`. */
  info?: { name?: string; title?: string; version?: string };
  authMethods: AuthMethod[];
  /** It offers `session/close`. */
  canClose: boolean;
  /** It offers `session/load`: a conversation's session comes back after a restart. */
  canLoad: boolean;
  /** It offers `session/resume`: the session comes back without its history replayed (preferred to load). */
  canResume?: boolean;
  /** It takes images in a prompt (ACP `promptCapabilities.image`). */
  takesImages?: boolean;
  /** The MCP transports it takes besides stdio (ACP `mcpCapabilities`). */
  mcpTransports?: { http: boolean; sse: boolean };
  /** We are stopping it: its exit is expected, not news. */
  stopping?: boolean;
  /** The last lines it wrote on stderr. */
  readonly stderrTail: string[];
}

/** What the process answers the agent's requests and updates with. */
export interface ClientHandlers {
  update(update: SessionUpdate): void;
  permission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse>;
  readTextFile(params: unknown): Promise<acp.ReadTextFileResponse>;
  writeTextFile(params: unknown): Promise<acp.WriteTextFileResponse>;
  /** `terminal/*`: the method and its params. */
  terminal(method: string, params: unknown): Promise<unknown>;
  /** `elicitation/create`: the user's answer to the agent's question. */
  elicit(params: unknown): Promise<acp.CreateElicitationResponse>;
  died(agent: AgentProcess, error: AgentError): void;
}

/** How an agent process starts (pool.ts makes it: bubblewrap with the agent, in its sandbox). */
export interface Launch {
  program: string;
  args: string[];
  /** Its environment; else the driver's. */
  env?: NodeJS.ProcessEnv;
  /** The sandbox it runs in; none without one. */
  sandbox?: 'ask' | 'task';
  /** Started with `sandboxArgs`: it needs `sandboxStdio`. */
  sandboxed?: boolean;
  /**
   * Runs another command in the same sandbox (the agent's terminals); none without one. `client`:
   * for a client to run (an ACP panel's terminal): no descriptor of ours needed, and the
   * environment given whole (the client's own is cleared).
   */
  wrap?: (command: string[], cwd: string, client?: { env: Record<string, string> }) => { program: string; args: string[]; sandboxed: true };
  /** The sandbox's plan: what the agent may write, for the words of a write it was refused. */
  plan?: SandboxPlan;
  /**
   * Told the agent's ACP `agentInfo.name` once it answered initialize: another launch where the
   * agent needs another sandbox than the one it started in (it is started again, once, before its
   * first session), else undefined.
   */
  relaunch?(acpName: string | undefined): Promise<Launch | undefined>;
}

export interface ProcessSpec {
  /** The agent's command, as configured (for messages: a missing program is named). */
  command: string[];
  /** What runs: the command, or bubblewrap with it (`sandboxed`). */
  program: string;
  args: string[];
  sandboxed?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  logger: Logger;
  clientVersion: string;
  requestTimeoutMs: number;
  /** How the agent is called in messages, before it says its name. */
  name: string;
  /** The program and arguments made again (a sandbox as the machine is now), for a start whose sandbox could not be made. */
  remake?: () => { program: string; args: string[] };
}


const STDERR_LINES_KEPT = 50;
/** A line of stderr longer than this is kept in pieces of this size (an agent that never ends one). */
const MAX_STDERR_LINE_CHARS = 64 * 1024;
/** How long an agent's death waits, past its exit, for the rest of its stderr. */
const STDERR_DRAIN_MS = 1_000;
/** How long an agent whose first output was not JSON-RPC still has to answer initialize. */
const NOT_ACP_GRACE_MS = 5_000;
/** The longest line an agent may write (the SDK's own default). */
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
/** The process started, before its handshake: what it wrote, how it died, whether it speaks ACP. */
interface Spawned {
  child: ChildProcess;
  stderrTail: string[];
  /** Rejects with why it died (it never resolves). */
  died: Promise<never>;
  /** Rejects when its first output was not JSON-RPC and it still did not answer within NOT_ACP_GRACE_MS. */
  notSpeakingAcp: Promise<never>;
  /** What to add to a failure when its first output was not JSON-RPC (else ''). */
  notAcp(): string;
  /** What it calls itself, once it said (agentInfo): messages use it from then on. */
  named(title: string | undefined): void;
  stopWatching(): void;
}

/**
 * Starts the agent and initializes it. `onSpawn` gets the process at once, so that a close while
 * it starts can stop it without waiting for its initialize deadline.
 */
export async function startAgentProcess(spec: ProcessSpec, handlers: ClientHandlers, isNotFound: (error: unknown) => boolean, onSpawn: (child: ChildProcess) => void): Promise<AgentProcess> {
  for (let start = 1; ; start++) {
    try {
      return await startOnce(spec, handlers, isNotFound, onSpawn);
    } catch (error) {
      const gone = spec.remake && start < SANDBOX_STARTS && error instanceof AgentError ? vanishedMount([error.message, ...error.output]) : undefined;
      if (!gone) throw error;
      spec.logger.info(`${gone} went away while ${spec.name}'s sandbox was made (another program's socket or file, removed meanwhile): started again in a sandbox made as the machine is now`);
      spec = { ...spec, ...spec.remake!() };
    }
  }
}

async function startOnce(spec: ProcessSpec, handlers: ClientHandlers, isNotFound: (error: unknown) => boolean, onSpawn: (child: ChildProcess) => void): Promise<AgentProcess> {
  // The SDK loads with the first agent, not with the coordinator: an idle server stays small.
  const sdk = await import('@agentclientprotocol/sdk');
  const spawned = spawnAgent(spec);
  onSpawn(spawned.child);
  const connection = connect(sdk, spec, spawned.child, handlers, isNotFound);
  const agent: AgentProcess = { child: spawned.child, connection, deathListeners: new Set(), authMethods: [], canClose: false, canLoad: false, stderrTail: spawned.stderrTail };
  spawned.died.catch((error: AgentError) => {
    agent.death = error;
    for (const listener of agent.deathListeners) listener(error);
    if (agent.stopping) spec.logger.debug(error.message);
    else spec.logger.warn(error.message);
    connection.close(error);
    handlers.died(agent, error);
  });
  try {
    await handshake(sdk, spec, agent, spawned);
  } catch (error) {
    if (error instanceof AgentError) {
      void stopGroup(spawned.child, 0);
      throw error;
    }
    // The connection closed under us: say why the process went away, if it did.
    const death = await Promise.race([spawned.died.catch((reason: unknown) => reason), delay(STDERR_DRAIN_MS + 1_000)]);
    void stopGroup(spawned.child, 0);
    throw death instanceof AgentError ? death : new AgentError(`${spec.name} failed to start: ${errorText(error)}`);
  } finally {
    spawned.stopWatching();
  }
  return agent;
}

/** The agent process: spawned (in its sandbox), its stderr kept, its death and its first output watched. */
function spawnAgent(spec: ProcessSpec): Spawned {
  const { logger, name } = spec;
  const stdio = spec.sandboxed ? sandboxStdio(['pipe', 'pipe', 'pipe'] as const) : (['pipe', 'pipe', 'pipe'] as const);
  const child = spawnGroup(spec.program, spec.args, { cwd: spec.cwd, env: spec.env ?? process.env, stdio: [...stdio] }, 'agent');
  closeOwnDescriptors(stdio);
  const stderrTail: string[] = [];
  let title: string | undefined;
  const keep = (line: string) => {
    if (!line.trim()) return;
    logger.debug(`agent stderr: ${line}`);
    stderrTail.push(line);
    if (stderrTail.length > STDERR_LINES_KEPT) stderrTail.shift();
  };
  // Lines as the agent wrote them: a pipe hands over what was written so far, which may end in
  // the middle of a line ("cat: ~/.config/gh/hosts.yml" read apart from ": Permission denied").
  const lines = new LineSplitter(keep, MAX_STDERR_LINE_CHARS);
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => lines.add(chunk));
  // A process's exit can come before the last of its stderr is read: its death is told once that
  // is (or, where a process it left behind holds the pipe open, after STDERR_DRAIN_MS).
  const stderrRead = new Promise<void>((resolve) => {
    if (!child.stderr) return resolve();
    child.stderr.once('end', resolve).once('close', resolve).once('error', () => resolve());
  });
  // An agent must speak ACP (JSON-RPC, one message per line) on stdout: anything else first says
  // it is not an ACP agent, or not started as one (a usage text, a banner). Some agents print a
  // banner and then speak ACP after all: they get NOT_ACP_GRACE_MS to answer initialize.
  let firstOutput: string | undefined;
  const notAcp = () =>
    firstOutput !== undefined && !firstOutput.startsWith('{')
      ? ` It is not speaking ACP: it wrote \`${firstOutput.slice(0, 80)}\` where ACP has JSON-RPC — is this an ACP agent, started in its ACP mode (\`gemini --acp\`, \`buckley acp\`)? Check buckley.agent.command (or BUCKLEY_AGENT).`
      : '';
  const died = new Promise<never>((_, reject) => {
    child.once('error', (error) => {
      reject(new AgentError(`cannot start ACP agent \`${spec.command.join(' ')}\`: ${error.message}. Check that the command exists and is executable (setting buckley.agent.command or BUCKLEY_AGENT).`));
    });
    child.once('exit', (code, signal) => {
      const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      let drained: NodeJS.Timeout | undefined;
      void Promise.race([stderrRead, new Promise<void>((resolve) => (drained = setTimeout(resolve, STDERR_DRAIN_MS)))]).then(() => {
        clearTimeout(drained);
        lines.end();
        const said = errorLine(stderrTail);
        reject(new AgentError(`${title ?? name} ${why}.${said ? ` Its last output: ${said}` : ''}${notAcp()}`, [...stderrTail]));
      });
    });
  });
  let notAcpTimer: NodeJS.Timeout | undefined;
  let giveUpNotAcp: (error: AgentError) => void = () => undefined;
  const notSpeakingAcp = new Promise<never>((_, reject) => (giveUpNotAcp = reject));
  notSpeakingAcp.catch(() => undefined);
  const watchOutput = (chunk: Buffer) => {
    const line = chunk.toString('utf8').split('\n').find((text) => text.trim());
    if (line === undefined) return;
    child.stdout?.off('data', watchOutput);
    firstOutput = line.trim();
    if (notAcp()) notAcpTimer = setTimeout(() => giveUpNotAcp(new AgentError(`${name} did not answer ACP initialize.${notAcp()}`)), NOT_ACP_GRACE_MS);
  };
  child.stdout?.on('data', watchOutput);
  return { child, stderrTail, died, notSpeakingAcp, notAcp, named: (given) => (title = given), stopWatching: () => clearTimeout(notAcpTimer) };
}

/** The ACP client over the process's stdio: session updates read first with our schema, the agent's requests answered by `handlers`. */
function connect(sdk: typeof acp, spec: ProcessSpec, child: ChildProcess, handlers: ClientHandlers, isNotFound: (error: unknown) => boolean): acp.ClientConnection {
  // Updates are read here, with our schema, before the SDK (see updateStream.ts).
  const onUpdate = (params: unknown) => {
    const update = parseSessionUpdate(params);
    if (update) handlers.update(update);
    else spec.logger.debug(`ignored a session/update that is not ACP: ${JSON.stringify(params)?.slice(0, 200)}`);
  };
  // A message too large to read costs its call (or, an update, itself), not the agent.
  const bounded = boundedLines(Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>, MAX_MESSAGE_BYTES, 'buckley-lsp', (line) =>
    spec.logger.warn(`${spec.name}: ${oversizedWords(line, MAX_MESSAGE_BYTES, 'buckley-lsp')} (${line.id === undefined ? 'dropped' : line.response ? 'the request it answered failed' : 'refused'})`),
  );
  // An update too large, in its place in the answer: what was there is not lost without a word.
  const tooLarge = ({ sessionId, bytes }: { sessionId: string; bytes: number }) =>
    onUpdate({ sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `\n\n[${spec.name} sent an update of ${Math.round(bytes / 1024 / 1024)} MB here, over the ${MAX_MESSAGE_BYTES / 1024 / 1024} MB buckley-lsp reads in one message: left out]\n\n` } } });
  const stream = wordedErrors(sdk.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, takeSessionUpdates(bounded, onUpdate, MAX_MESSAGE_BYTES, tooLarge), { maxMessageBytes: 2 * MAX_MESSAGE_BYTES }));
  child.stdin?.on('error', () => undefined); // EPIPE after a crash is reported through `died`
  const refused = (error: unknown) => Promise.reject(requestError(sdk, error, isNotFound));
  const terminal = (method: string) => (ctx: { params: unknown }) => handlers.terminal(method, ctx.params).catch(refused) as Promise<never>;
  return sdk
    .client({ name: 'buckley-lsp' })
    .onRequest('session/request_permission', (ctx) => handlers.permission(ctx.params))
    .onRequest('fs/read_text_file', (ctx) => handlers.readTextFile(ctx.params).catch(refused))
    .onRequest('fs/write_text_file', (ctx) => handlers.writeTextFile(ctx.params).catch(refused))
    .onRequest('terminal/create', terminal('terminal/create'))
    .onRequest('terminal/output', terminal('terminal/output'))
    .onRequest('terminal/wait_for_exit', terminal('terminal/wait_for_exit'))
    .onRequest('terminal/kill', terminal('terminal/kill'))
    .onRequest('terminal/release', terminal('terminal/release'))
    .onRequest('elicitation/create', (ctx) => handlers.elicit(ctx.params).catch(refused))
    .onRequest(OVERSIZED_METHOD, paramsBy(oversizedParams, (words) => sdk.RequestError.invalidParams(undefined, words)), ({ params }) => {
      throw new sdk.RequestError(INVALID_REQUEST, oversizedWords(params, MAX_MESSAGE_BYTES, 'buckley-lsp'));
    })
    // Another notification too large (not an update: taken above): the log has said it.
    .onNotification(OVERSIZED_METHOD, paramsBy(oversizedParams, (words) => sdk.RequestError.invalidParams(undefined, words)), () => undefined)
    .connect(stream);
}

/**
 * A refused or failed request of the agent, as the SDK's error of its kind (not found, or any
 * other failure) — in our words, which the agent reads and repeats: never the bare "Internal error".
 */
function requestError(sdk: typeof acp, error: unknown, isNotFound: (error: unknown) => boolean): acp.RequestError {
  const refusal = isNotFound(error) ? sdk.RequestError.resourceNotFound() : sdk.RequestError.internalError();
  refusal.message = errorText(error);
  return refusal;
}

/** ACP initialize, within the agent's request deadline (and its death): what it is, can do, and how it logs in. */
async function handshake(sdk: typeof acp, spec: ProcessSpec, agent: AgentProcess, spawned: Spawned): Promise<void> {
  const init = await withDeadline(
    Promise.race([
      agent.connection.agent.request('initialize', {
        protocolVersion: sdk.PROTOCOL_VERSION,
        // Reads and writes go through the coordinator: the editor's buffers first, writes approved
        // (../files.ts); commands too, judged and approved (terminals.ts).
        // The agent's questions (elicitation) are asked in the editor as a choice (elicitation.ts).
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true, elicitation: { form: {}, url: {} } },
        clientInfo: { name: 'buckley-lsp', version: spec.clientVersion },
      }),
      spawned.died,
      spawned.notSpeakingAcp,
    ]),
    spec.requestTimeoutMs,
    () => `${spec.name} did not answer ACP initialize within ${spec.requestTimeoutMs} ms (setting buckley.agent.requestTimeoutMs).${spawned.notAcp()}`,
  );
  agent.canClose = Boolean(init.agentCapabilities?.sessionCapabilities?.close);
  agent.canLoad = Boolean(init.agentCapabilities?.loadSession);
  agent.mcpTransports = { http: Boolean(init.agentCapabilities?.mcpCapabilities?.http), sse: Boolean(init.agentCapabilities?.mcpCapabilities?.sse) };
  // An agent known to drop the images it says it takes is given none: the user is told instead.
  agent.takesImages = Boolean(init.agentCapabilities?.promptCapabilities?.image) && !(knownByAcpName(init.agentInfo?.name) ?? knownByCommand(spec.command))?.dropsImages;
  agent.canResume = Boolean((init.agentCapabilities?.sessionCapabilities as { resume?: unknown } | undefined)?.resume);
  agent.info = init.agentInfo ? { name: init.agentInfo.name, title: init.agentInfo.title ?? undefined, version: init.agentInfo.version } : undefined;
  agent.authMethods = (init.authMethods ?? []).map((method) => readAuthMethod(method));
  spawned.named(agent.info?.title ?? agent.info?.name);
  spec.logger.info(`${agent.info?.title ?? spec.name}${agent.info?.version ? ` ${agent.info.version}` : ''} speaks ACP v${init.protocolVersion}`);
}

function readAuthMethod(method: unknown): AuthMethod {
  const { id, name, description, type, vars } = method as { id: string; name: string; description?: string | null; type?: string; vars?: { name?: unknown }[] };
  return {
    id,
    name,
    ...(description ? { description } : {}),
    ...(type === 'env_var' && Array.isArray(vars) ? { vars: vars.flatMap((variable) => (typeof variable?.name === 'string' ? [variable.name] : [])) } : {}),
  };
}

export function isAlive(agent: AgentProcess): boolean {
  return !agent.connection.signal.aborted && agent.child.exitCode === null && agent.child.signalCode === null;
}

/**
 * `work`, failed by the agent's death should that come first. Unlike a Promise.race with a
 * long-lived "died" promise, this leaves nothing attached once the work has settled (a race per
 * turn kept a reaction per turn for the agent's whole life).
 */
export function orDeath<T>(agent: Pick<AgentProcess, 'death' | 'deathListeners'>, work: Promise<T>): Promise<T> {
  if (agent.death) return Promise.reject(agent.death);
  return new Promise<T>((resolve, reject) => {
    agent.deathListeners.add(reject);
    work.then(resolve, reject).finally(() => agent.deathListeners.delete(reject));
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export function withDeadline<T>(promise: Promise<T>, ms: number, message: string | (() => string)): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError(typeof message === 'string' ? message : message())), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

export const GAVE_UP = Symbol('gave up');

/**
 * Resolves `graceMs` after the signal aborts. Disposed when the turn ends, so a finished turn
 * leaves no listener or timer behind (a timer would keep the turn's whole request alive).
 */
export function abortedAfter(signal: AbortSignal, graceMs: number): { promise: Promise<typeof GAVE_UP>; dispose(): void } {
  let timer: NodeJS.Timeout | undefined;
  let arm = () => {};
  const promise = new Promise<typeof GAVE_UP>((resolve) => {
    arm = () => {
      timer = setTimeout(() => resolve(GAVE_UP), graceMs);
      timer.unref();
    };
  });
  if (signal.aborted) arm();
  else signal.addEventListener('abort', arm, { once: true });
  return {
    promise,
    dispose: () => {
      signal.removeEventListener('abort', arm);
      clearTimeout(timer);
    },
  };
}
