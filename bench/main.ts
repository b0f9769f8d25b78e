/**
 * `npm run bench`: what users feel — latency, streaming, startup, memory, context building —
 * each figure a ratio against a baseline measured in the same run. Prints a table, writes
 * bench/results/latest.json and two SVG charts. `--quick` is the smoke run CI does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, ProgressType, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { CoordinatorClient } from '../src/wire/client.js';
import { sendMessageResponseSchema, sessionSchema } from '../src/wire/contract.js';
import { buildContext } from '../src/bridge/flows/context.js';
import { FramingGuard } from '../src/bridge/transport.js';
import { anthropicModel } from '../test/helpers/models/anthropic.js';
import { copilotServer, measureStartups, type StartupSample, type StartupServer } from './startup.js';
import { sandboxStarts } from './sandbox.js';
import { scale } from './scale.js';
import { acpStartup } from './acpStartup.js';

const quick = process.argv.includes('--quick');
const AskPartialResult = new ProgressType<{ answer: string }>();
/** `--only=latency,streaming`: run just those parts (while working on one figure). */
const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length).split(',');
const runs = (part: string) => !only || only.includes(part);
/** `--profile`: the bridge and coordinator processes write CPU profiles to bench/profiles/. */
const PROFILE_ARGS = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${fileURLToPath(new URL('../bench/profiles/', import.meta.url))}`] : [];
const REPO = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(REPO, 'dist/buckley-lsp.js');
const AGENT = `${process.execPath} ${join(REPO, 'fixtures/scripted-agent.mjs')}`;
const OUT = join(REPO, 'bench/results');
const ECHO_SERVER = join(REPO, 'dist/bench-echo-server.mjs');

interface Figure {
  figure: string;
  value: number;
  unit: string;
  baseline: string;
  baselineValue: number;
  ratio: number;
  goal: string;
  met: boolean | null;
}
const figures: Figure[] = [];
const record = (figure: Omit<Figure, 'ratio' | 'met'> & { ratio?: number; met?: boolean | null }) => {
  const ratio = figure.ratio ?? figure.value / figure.baselineValue;
  figures.push({ ...figure, ratio, met: figure.met ?? null });
};
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const median = (values: number[]) => pct(values, 50);
const now = () => performance.now();

/** CPU time (user + system) a process has used so far, in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 10 ms
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

interface Lsp {
  child: ChildProcess;
  connection: MessageConnection;
  /** shutdown + exit, and waits for the process to end. */
  stop(): Promise<void>;
  /** Ends the process at once (startup runs need nothing more from it). */
  kill(): void;
}

/** The benchmark's temporary state directories, removed as it exits. */
const temporary: string[] = [];
/** The processes it started and that still run: ended as it exits, however it exits (a part past its deadline too). */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tracked(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** How long one part may take before the benchmark fails, naming it: a part that waits for ever must not hold CI (the quick run's parts take under a minute each). */
const PART_DEADLINE_MS = Number(process.env.BENCH_PART_DEADLINE_S ?? (quick ? 180 : 1800)) * 1000;

async function part<T>(name: string, run: () => Promise<T> | T): Promise<T> {
  const t0 = now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`benchmark part "${name}" did not end within ${PART_DEADLINE_MS / 1000} s (run it alone: npm run bench -- --only=${name})`)), PART_DEADLINE_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(run), late]);
  } finally {
    clearTimeout(timer);
    console.log(`  ${name}: ${((now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** A task's progress shows a step of the agent's plan being worked on (the plan travels whole with the progress). */
const showsPlanStep = (p: { status: string; plan?: Array<{ status: string }> }) => p.status === 'in_progress' && (p.plan?.some((step) => step.status === 'in_progress') ?? false);

function spawnLsp(args: string[], env: Record<string, string | undefined> = {}): Lsp {
  const state = mkdtempSync(join(tmpdir(), 'buckley-bench-'));
  temporary.push(state);
  const child = tracked(spawn(process.execPath, [...PROFILE_ARGS, ...args], { env: { ...process.env, XDG_STATE_HOME: state, HOME: state, BUCKLEY_AGENT: AGENT, ...env } as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'ignore'] }));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('workspace/configuration', (p: { items: unknown[] }) => p.items.map(() => null));
  connection.onRequest('window/showDocument', () => ({ success: true }));
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();
  let stopping = false;
  // A process that dies under the benchmark must fail it, not leave it waiting for ever.
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`benchmark failed: ${args.join(' ')} exited (${signal ?? code}) while in use`);
    process.exit(1);
  });
  return {
    child,
    connection,
    stop: async () => {
      stopping = true;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await connection.sendRequest('shutdown').catch(() => undefined);
      await connection.sendNotification('exit').catch(() => undefined);
      await exited;
      connection.dispose();
    },
    kill: () => {
      stopping = true;
      child.kill();
      connection.dispose();
    },
  };
}

const initialize = (lsp: Lsp, capabilities: object = {}) =>
  lsp.connection.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(join(REPO, 'fixtures/workspace')).href, capabilities }).then(() =>
    lsp.connection.sendNotification('initialized', {}),
  );

async function untilReady(lsp: Lsp): Promise<void> {
  for (;;) {
    const status = await lsp.connection.sendRequest<any>('buckley/status', {});
    if (status.coordinator.state === 'ready') return;
    if (status.coordinator.state === 'unavailable') throw new Error(`coordinator unavailable: ${status.coordinator.error}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startup(): Promise<void> {
  const rounds = quick ? 5 : 15;
  const bridge: StartupServer = { name: 'bridge', command: process.execPath, args: [BIN, '--stdio'], env: { BUCKLEY_AGENT: AGENT } };
  const bare: StartupServer = { name: 'bare', command: process.execPath, args: [ECHO_SERVER] };
  const copilot = copilotServer(REPO);
  if (!copilot) console.log("startup: GitHub Copilot's language server is not installed (npm run install-agents -- --copilot): compared with the bare server only");
  const samples = await measureStartups([bridge, bare, ...(copilot ? [copilot] : [])], rounds, join(REPO, 'fixtures/workspace'));
  const of = (server: StartupServer, key: keyof StartupSample) => median(samples.get(server.name)!.map((sample) => sample[key]));
  const figures = [
    { key: 'initialize', what: 'spawn → initialize answered (median)', unit: 'ms', goal: 1.2 },
    { key: 'idleRss', what: 'idle RSS of the process tree (median)', unit: 'MB', goal: 1.3 },
    { key: 'cpuToIdle', what: 'CPU to idle, initialized sent (median)', unit: 'ms', goal: 2 },
  ] as const;
  for (const { key, what, unit, goal } of figures) {
    const value = of(bridge, key);
    record({ figure: `startup: ${what}`, value, unit, baseline: `bare vscode-languageserver server, bundled the same way (${rounds} rounds, interleaved)`, baselineValue: of(bare, key), goal: `≤ ${goal}×`, met: value / of(bare, key) <= goal });
    if (copilot) record({ figure: `startup: ${what}, against Copilot's`, value, unit, baseline: `${copilot.name} (same rounds)`, baselineValue: of(copilot, key), goal: 'report' });
  }
}

async function bareNodeRss(): Promise<number> {
  const child = tracked(spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] }));
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  const rss = rssMb(child.pid!);
  child.kill();
  return rss;
}

async function memory(): Promise<void> {
  const bare = await bareNodeRss();
  const lsp = spawnLsp([BIN, '--stdio']);
  await initialize(lsp, { experimental: { buckley: { taskProgress: true } } });
  await untilReady(lsp);
  const idle = rssMb(lsp.child.pid!);
  record({ figure: 'memory: idle, the embedded coordinator started (status asked)', value: idle, unit: 'MB', baseline: 'bare `node` idle', baselineValue: bare, goal: '≤ 1.5×', met: idle / bare <= 1.5 });

  const docs = quick ? 40 : 200;
  const text = `${'// a line of a document that is about a hundred kilobytes long, repeated\n'.repeat(1400)}`;
  for (let i = 0; i < docs; i++) {
    await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: pathToFileURL(join(REPO, `fixtures/workspace/doc${i}.ts`)).href, languageId: 'typescript', version: 1, text } });
  }
  const tasks = await Promise.all(Array.from({ length: 20 }, (_, i) => lsp.connection.sendRequest<{ taskId: string }>('buckley/executeTask', { task: `SLOW PLAN ${i}` })));
  await lsp.connection.sendRequest('buckley/status', {});
  const loaded = rssMb(lsp.child.pid!);
  record({ figure: `memory: ${docs} open documents of 100 KB + 20 running tasks`, value: loaded, unit: 'MB', baseline: 'bare `node` idle', baselineValue: bare, goal: 'report', met: null });
  for (const { taskId } of tasks) await lsp.connection.sendRequest('buckley/cancelTask', { taskId });

  const asks = quick ? 500 : 10_000;
  const batch = 20;
  const runAsks = async (count: number) => {
    for (let done = 0; done < count; done += batch) {
      await Promise.all(Array.from({ length: Math.min(batch, count - done) }, () => lsp.connection.sendRequest('buckley/ask', { question: 'INSTANT' })));
    }
  };
  await runAsks(quick ? 500 : 1000); // warm up: sessions, JIT, pools, the heap grown to its working size
  const before = rssMb(lsp.child.pid!);
  await runAsks(asks);
  const after = rssMb(lsp.child.pid!);
  record({ figure: `memory: after ${asks} more asks`, value: after, unit: 'MB', baseline: 'before them', baselineValue: before, goal: '≈ 1 (≤ 1.1×)', met: after / before <= 1.1 });
  await lsp.stop();
}

async function latency(): Promise<{ bridge: number[]; direct: number[]; echo: number[]; forwarder: number[] }> {
  const samples = quick ? 100 : 1000;
  // The coordinator with an instant agent, as its own process; the bridge and a direct client both talk to it.
  const { child: coordinator, address } = await standaloneCoordinator();
  const lsp = spawnLsp([BIN, '--stdio', '--coordinator', address]);
  await initialize(lsp);
  await untilReady(lsp);
  // The bridge alone, its coordinator elsewhere: what the embedded coordinator's worker costs is the difference.
  record({ figure: 'memory: idle, connected to a remote coordinator', value: rssMb(lsp.child.pid!), unit: 'MB', baseline: 'bare `node` idle', baselineValue: await bareNodeRss(), goal: 'report' });
  const direct = new CoordinatorClient({ address, agentId: 'bench' });
  const session = await direct.unary('CreateSession', { agent_id: 'bench' }, sessionSchema, { timeoutMs: 5000 });
  const echo = spawnLsp([ECHO_SERVER]);
  await echo.connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
  const forwarder = spawnLsp([join(REPO, 'dist/bench-forwarder.mjs'), address]);
  await forwarder.connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });

  /** Round trips after a warm-up, and the CPU the given process spent per call meanwhile. */
  const measure = async (call: () => Promise<unknown>, pid?: number) => {
    for (let i = 0; i < 50; i++) await call(); // warm up
    const times: number[] = [];
    const cpuBefore = pid ? cpuMs(pid) : 0;
    for (let i = 0; i < samples; i++) {
      const t0 = now();
      await call();
      times.push(now() - t0);
    }
    return { times, cpuPerCall: pid ? (cpuMs(pid) - cpuBefore) / samples : 0 };
  };
  const bridge = await measure(() => lsp.connection.sendRequest('buckley/ask', { question: 'INSTANT' }), lsp.child.pid);
  const directTimes = (
    await measure(() =>
      direct.unary('SendMessage', { agent_id: 'bench', message: { role: 'user', content: 'INSTANT' } }, sendMessageResponseSchema, { timeoutMs: 5000, metadata: { 'x-buckley-session-id': session.session_id, 'x-buckley-intent': 'ask' } }),
    )
  ).times;
  const echoTimes = (await measure(() => echo.connection.sendRequest('echo', { hello: 'world' }))).times;
  const forwarded = await measure(() => forwarder.connection.sendRequest('buckley/ask', { question: 'INSTANT' }), forwarder.child.pid);
  for (const p of [50, 99]) {
    const overhead = pct(bridge.times, p) - pct(directTimes, p);
    record({
      figure: `ask overhead p${p}: bridge ${pct(bridge.times, p).toFixed(2)} ms − direct gRPC ${pct(directTimes, p).toFixed(2)} ms`,
      value: overhead,
      unit: 'ms',
      baseline: `bare LSP echo p${p}`,
      baselineValue: pct(echoTimes, p),
      goal: p === 50 ? '≤ 1.5×' : '≤ 2×',
      met: overhead / pct(echoTimes, p) <= (p === 50 ? 1.5 : 2),
    });
  }
  // The floor: what a featureless forwarder pays over the direct call on this machine.
  record({
    figure: `reference: minimal forwarder overhead p50 (${pct(forwarded.times, 50).toFixed(2)} ms − direct gRPC)`,
    value: pct(forwarded.times, 50) - pct(directTimes, 50),
    unit: 'ms',
    baseline: 'bare LSP echo p50',
    baselineValue: pct(echoTimes, 50),
    goal: 'report',
  });
  record({ figure: 'ask: bridge CPU per ask', value: bridge.cpuPerCall, unit: 'ms', baseline: 'minimal forwarder CPU per ask', baselineValue: forwarded.cpuPerCall, goal: 'report' });
  direct.close();
  await lsp.stop();
  await echo.stop();
  await forwarder.stop();
  coordinator.kill();
  return { bridge: bridge.times, direct: directTimes, echo: echoTimes, forwarder: forwarded.times };
}

async function streaming(): Promise<{ timeline: number[]; seconds: number }> {
  const updates = quick ? 10_000 : Number(process.env.BENCH_UPDATES ?? 100_000);
  const lsp = spawnLsp([BIN, '--stdio']);
  const timeline: number[] = [];
  let finalAt = 0;
  let lastUpdateSentAt = 0;
  const started = Date.now();
  lsp.connection.onNotification('$/buckley/taskProgress', (p: any) => {
    timeline.push(Date.now() - started);
    if (['completed', 'failed', 'cancelled'].includes(p.status)) finalAt = Date.now();
  });
  lsp.connection.onNotification('window/logMessage', (p: { message: string }) => {
    const match = /Last update sent at (\d+)/.exec(p.message);
    if (match) lastUpdateSentAt = Number(match[1]);
  });
  let progressEndAt = 0;
  lsp.connection.onUnhandledProgress((p: any) => {
    if (p.value.kind === 'end') progressEndAt = Date.now();
    timeline.push(Date.now() - started);
  });
  await initialize(lsp, { window: { workDoneProgress: true }, experimental: { buckley: { taskProgress: true } } });
  await untilReady(lsp);
  const t0 = now();
  await lsp.connection.sendRequest('buckley/executeTask', { task: `FLOOD ${updates}` });
  while (!finalAt || !lastUpdateSentAt || !progressEndAt) await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (now() - t0) / 1000;
  const events = updates * 2; // a tool update and a text chunk per step
  record({ figure: `streaming: ${events} agent events through the bridge`, value: events / seconds, unit: 'events/s', baseline: 'goal', baselineValue: 60_000, goal: '≥ 60,000/s', met: events / seconds >= 60_000 });
  record({ figure: 'streaming: notifications sent to the editor', value: timeline.length, unit: 'messages', baseline: `${events} events`, baselineValue: events, goal: 'bounded (≤ 10/s per task and kind)', met: timeline.length <= Math.ceil(seconds * 20) + 6 });
  const lag = Math.max(finalAt, progressEndAt) - lastUpdateSentAt;
  record({ figure: "streaming: agent's last update → editor's final progress", value: lag, unit: 'ms', baseline: 'goal', baselineValue: 50, goal: '≤ 50 ms', met: lag <= 50 });
  await lsp.stop();
  return { timeline, seconds };
}

/**
 * The editor never waits on the agent: hover and code action round trips, and the time to take
 * 1,000 didChange (until the next request is answered), with no task and while a task streams
 * 100,000 updates through the embedded coordinator. Only samples taken while the task still ran count.
 */
async function responsiveness(): Promise<void> {
  const updates = quick ? 20_000 : 100_000;
  const lsp = spawnLsp([BIN, '--stdio']);
  let taskRunning = false;
  let taskEnded: () => void = () => {};
  lsp.connection.onNotification('$/buckley/taskProgress', (p: any) => {
    if (['completed', 'failed', 'cancelled'].includes(p.status)) {
      taskRunning = false;
      taskEnded();
    }
  });
  lsp.connection.onUnhandledProgress(() => {});
  await initialize(lsp, { window: { workDoneProgress: true }, textDocument: { codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'refactor'] } } } }, experimental: { buckley: { taskProgress: true } } });
  await untilReady(lsp);
  const uri = pathToFileURL(join(REPO, 'fixtures/workspace/responsive.ts')).href;
  const lines = Array.from({ length: 2000 }, (_, i) => `export const value${i} = compute(${i}); // line ${i}`);
  await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: lines.join('\n') } });
  let version = 1;
  const range = { start: { line: 100, character: 0 }, end: { line: 110, character: 0 } };
  /** Samples taken while `keepGoing()` holds, up to `count` of each kind. */
  const sample = async (count: number, keepGoing: () => boolean) => {
    const hover: number[] = [];
    const codeAction: number[] = [];
    const changes: number[] = [];
    for (let i = 0; i < count && keepGoing(); i++) {
      let t0 = now();
      await lsp.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 100 + (i % 50), character: 4 } });
      if (keepGoing()) hover.push(now() - t0);
      t0 = now();
      await lsp.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } });
      if (keepGoing()) codeAction.push(now() - t0);
      if (i % 20 === 0) {
        t0 = now();
        for (let k = 0; k < 1000; k++) {
          const line = (k * 7) % 2000;
          void lsp.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: ++version }, contentChanges: [{ range: { start: { line, character: 0 }, end: { line, character: 1 } }, text: 'e' }] });
        }
        await lsp.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
        if (keepGoing()) changes.push(now() - t0);
      }
    }
    return { hover, codeAction, changes };
  };
  const samples = quick ? 100 : 1000;
  await sample(50, () => true); // warm up
  const idle = await sample(samples, () => true);
  // While a task streams: when one ends before the samples are taken, the next one starts.
  const busy: { hover: number[]; codeAction: number[]; changes: number[] } = { hover: [], codeAction: [], changes: [] };
  for (let tasks = 0; busy.hover.length < samples && tasks < 10; tasks++) {
    taskRunning = true;
    const ended = new Promise<void>((resolve) => (taskEnded = resolve));
    await lsp.connection.sendRequest('buckley/executeTask', { task: `FLOOD ${updates}` });
    const taken = await sample(samples - busy.hover.length, () => taskRunning);
    for (const key of ['hover', 'codeAction', 'changes'] as const) busy[key].push(...taken[key]);
    await ended;
  }
  const kinds = [
    ['hover', idle.hover, busy.hover],
    ['codeAction', idle.codeAction, busy.codeAction],
  ] as const;
  for (const [kind, without, during] of kinds) {
    for (const p of [50, 99]) {
      record({ figure: `responsive: ${kind} p${p} during a ${updates}-update task (${during.length} samples)`, value: pct(during, p), unit: 'ms', baseline: `${kind} p${p} with no task`, baselineValue: pct(without, p), goal: '≤ 1.5×', met: during.length > 0 && pct(during, p) / pct(without, p) <= 1.5 });
    }
  }
  record({ figure: `responsive: 1,000 didChange during the task (${busy.changes.length} rounds)`, value: median(busy.changes), unit: 'ms', baseline: '1,000 didChange with no task', baselineValue: median(idle.changes), goal: '≤ 1.5×', met: busy.changes.length > 0 && median(busy.changes) / median(idle.changes) <= 1.5 });
  await lsp.stop();
}

/**
 * The answer shows as it is written: from the agent's first piece to the first words in the
 * editor (the progress message every editor shows; partial results for clients that ask), and
 * from its last piece to the whole answer in the editor (the request's result).
 */
async function answerStreaming(): Promise<void> {
  const asks = quick ? 5 : 30;
  const lsp = spawnLsp([BIN, '--stdio']);
  let firstShown: number | undefined;
  let firstPartial: number | undefined;
  lsp.connection.onUnhandledProgress((p: any) => {
    if (p.value?.kind === 'report' && String(p.value.message).includes('[first')) firstShown ??= Date.now();
  });
  await initialize(lsp, { window: { workDoneProgress: true } });
  await untilReady(lsp);
  const toFirstWords: number[] = [];
  const toPartial: number[] = [];
  const toWhole: number[] = [];
  const sentAt = (answer: string, which: 'first' | 'last') => Number(new RegExp(`\\[${which} (\\d+)\\]`).exec(answer)?.[1]);
  for (let i = 0; i < asks; i++) {
    firstShown = undefined;
    const result = await lsp.connection.sendRequest<{ answer: string }>('buckley/ask', { question: 'STREAM 10 20' });
    const done = Date.now();
    toFirstWords.push(firstShown! - sentAt(result.answer, 'first'));
    toWhole.push(done - sentAt(result.answer, 'last'));
    // The same with a partial-result token: the pieces go out as partial results.
    firstPartial = undefined;
    const pieces: string[] = [];
    const disposable = lsp.connection.onProgress(AskPartialResult, 'partial', (value: { answer: string }) => {
      firstPartial ??= Date.now();
      pieces.push(value.answer);
    });
    await lsp.connection.sendRequest('buckley/ask', { question: 'STREAM 10 20', partialResultToken: 'partial' });
    disposable.dispose();
    toPartial.push(firstPartial! - sentAt(pieces.join(''), 'first'));
  }
  record({ figure: "answer: agent's first piece → first words in the editor's progress (median)", value: median(toFirstWords), unit: 'ms', baseline: 'goal', baselineValue: 100, goal: '≤ 100 ms', met: pct(toFirstWords, 99) <= 100 });
  record({ figure: "answer: agent's first piece → first partial result (median)", value: median(toPartial), unit: 'ms', baseline: 'goal', baselineValue: 100, goal: '≤ 100 ms', met: pct(toPartial, 99) <= 100 });
  record({ figure: "answer: agent's last piece → the whole answer in the editor (median)", value: median(toWhole), unit: 'ms', baseline: 'goal', baselineValue: 50, goal: '≤ 50 ms', met: pct(toWhole, 99) <= 50 });
  record({ figure: `answer: the same, worst of ${asks}`, value: Math.max(...toWhole), unit: 'ms', baseline: 'goal', baselineValue: 50, goal: 'report' });
  await lsp.stop();
}

function context(): void {
  const line = 'const value = compute(input) + 42; // 😀 a line of a 5 MB file\n';
  const text = line.repeat(Math.ceil((5 * 1024 * 1024) / Buffer.byteLength(line)));
  const doc = TextDocument.create('file:///bench/big.ts', 'typescript', 1, text);
  const selection = { start: { line: 40_000, character: 0 }, end: { line: 40_050, character: 0 } };
  const runs = quick ? 10 : 50;
  const build: number[] = [];
  const copy: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = now();
    buildContext({ active: doc, selection, related: [], workspaceRoots: [], maxBytes: 250_000 });
    build.push(now() - t0);
    const t1 = now();
    Buffer.from(doc.getText(), 'utf8');
    copy.push(now() - t1);
  }
  record({ figure: 'context: EditorContext for a 5 MB file with a selection', value: median(build), unit: 'ms', baseline: 'copying the text (UTF-8)', baselineValue: median(copy), goal: '≤ 2×', met: median(build) / median(copy) <= 2 });
}

/** Time to read one framed message arriving in 64 KiB pieces: through the framing guard, or vscode-jsonrpc's reader alone. */
async function readTime(message: Buffer, guarded: boolean): Promise<number> {
  const input = new PassThrough();
  const guard = guarded ? new FramingGuard(() => {}) : undefined;
  guard?.pipe(input);
  const reader = new StreamMessageReader(input);
  const read = new Promise<void>((resolve) => reader.listen(() => resolve()));
  const target = guard ?? input;
  const t0 = now();
  for (let offset = 0; offset < message.length; offset += 65_536) target.write(message.subarray(offset, offset + 65_536));
  await read;
  const elapsed = now() - t0;
  reader.dispose();
  return elapsed;
}

/** Time for the framing guard alone to pass one framed message on. */
async function guardTime(message: Buffer): Promise<number> {
  const guard = new FramingGuard(() => {});
  let passed = 0;
  const done = new Promise<void>((resolve) => guard.on('data', (chunk: Buffer) => (passed += chunk.length) >= message.length && resolve()));
  const t0 = now();
  for (let offset = 0; offset < message.length; offset += 65_536) guard.write(message.subarray(offset, offset + 65_536));
  await done;
  return now() - t0;
}

async function reading(): Promise<void> {
  const sizes = quick ? [1, 10] : [1, 10, 50];
  const times = new Map<number, { guarded: number; reader: number; guard: number }>();
  for (const mb of sizes) {
    const text = 'x'.repeat(mb * 1024 * 1024);
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri: 'file:///big.ts', languageId: 'typescript', version: 1, text } } }));
    const message = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    const guarded: number[] = [];
    const reader: number[] = [];
    const guard: number[] = [];
    for (let i = 0; i < 5; i++) {
      guarded.push(await readTime(message, true));
      reader.push(await readTime(message, false));
      guard.push(await guardTime(message));
    }
    times.set(mb, { guarded: median(guarded), reader: median(reader), guard: median(guard) });
  }
  const largest = sizes.at(-1)!;
  const { guarded, reader } = times.get(largest)!;
  record({ figure: `reading a ${largest} MB didOpen: framing guard + reader`, value: guarded, unit: 'ms', baseline: "vscode-jsonrpc's reader alone", baselineValue: reader, goal: '≤ 1.5×', met: guarded / reader <= 1.5 });
  // The guard's own work grows with the input, no faster (it used to re-copy its buffer per chunk).
  const linear = (times.get(10)!.guard * largest) / 10;
  const own = times.get(largest)!.guard;
  record({ figure: `reading: the guard alone on ${largest} MB vs ${largest / 10}× its 10 MB time`, value: own, unit: 'ms', baseline: 'linear from 10 MB', baselineValue: linear, goal: '≤ 1.2× (linear)', met: own / linear <= 1.2 });
}

/** Peak resident memory since the last reset (`resetPeak`), in MB. */
function peakMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}
/** Starts a new peak-memory measurement (Linux: "5" to clear_refs resets VmHWM). */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Big documents through the real server: didOpen of 1, 10 and 50 MB, then a request; the time
 * until it is answered against vscode-jsonrpc's reader alone on the same bytes, its growth with
 * size, and the server's peak memory for the largest (and what is left after didClose).
 */
async function bigDocuments(): Promise<void> {
  const sizes = quick ? [1, 10] : [1, 10, 50];
  const lsp = spawnLsp([BIN, '--stdio']);
  await initialize(lsp);
  await untilReady(lsp);
  const pid = lsp.child.pid!;
  const echo = spawnLsp([ECHO_SERVER]);
  await echo.connection.sendRequest('initialize', { processId: null, rootUri: null, capabilities: {} });
  const idle = rssMb(pid);
  const line = 'export const value = compute(input) + 42; // a line of a big generated file\n';
  const results = new Map<number, { served: number; reader: number; peak: number; before: number; after: number }>();
  for (const mb of sizes) {
    const text = line.repeat(Math.ceil((mb * 1024 * 1024) / line.length));
    const uri = pathToFileURL(join(REPO, `fixtures/workspace/big-${mb}.ts`)).href;
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', method: 'textDocument/didOpen', params: { textDocument: { uri, languageId: 'typescript', version: 1, text } } }));
    const message = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
    const served: number[] = [];
    const reader: number[] = [];
    let peak = 0;
    let before = 0;
    let after = 0;
    for (let i = 0; i < (mb === 1 ? 15 : quick ? 2 : 3); i++) {
      await lsp.connection.sendRequest('buckley/status', {});
      before = rssMb(pid);
      resetPeak(pid);
      const t0 = now();
      lsp.child.stdin!.write(message);
      await lsp.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 0, character: 0 } });
      served.push(now() - t0);
      peak = Math.max(peak, peakMb(pid) - before);
      await lsp.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
      await lsp.connection.sendRequest('buckley/status', {});
      // What the server holds a second after the close (it collects 200 ms after a big document closes).
      await new Promise((resolve) => setTimeout(resolve, 1000));
      after = rssMb(pid);
      // The same bytes to a bare vscode-languageserver server (its reader and JSON parsing), then a request.
      const t1 = now();
      echo.child.stdin!.write(message);
      await echo.connection.sendRequest('echo', {});
      reader.push(now() - t1);
    }
    results.set(mb, { served: median(served), reader: median(reader), peak, before, after });
  }
  const largest = sizes.at(-1)!;
  const big = results.get(largest)!;
  for (const mb of sizes) {
    const { served, reader } = results.get(mb)!;
    record({ figure: `big document: ${mb} MB didOpen → next request answered`, value: served, unit: 'ms', baseline: 'bare vscode-languageserver server, same bytes', baselineValue: reader, goal: '≤ 1.5×', met: served / reader <= 1.5 });
  }
  const tenfold = results.get(10)!.served;
  record({ figure: `big document: ${largest} MB against 10 MB`, value: big.served, unit: 'ms', baseline: '10 MB', baselineValue: tenfold, goal: `≤ ${largest === 50 ? 6 : 1.2 * largest / 10}× (linear)`, met: big.served / tenfold <= (largest === 50 ? 6 : (1.2 * largest) / 10) });
  record({ figure: `big document: peak memory added by a ${largest} MB document`, value: big.peak, unit: 'MB', baseline: 'its size', baselineValue: largest, goal: '≤ 4×', met: big.peak / largest <= 4 });
  record({ figure: `big document: memory after didClose of ${largest} MB`, value: big.after, unit: 'MB', baseline: 'before the first big document', baselineValue: idle, goal: '≤ 1.5× (released)', met: big.after / idle <= 1.5 });
  await lsp.stop();
  await echo.stop();
}

/** Starts `buckley-lsp coordinator` with the scripted agent and waits for its address. */
async function standaloneCoordinator(): Promise<{ child: ChildProcess; address: string }> {
  const child = tracked(spawn(process.execPath, [...PROFILE_ARGS, BIN, 'coordinator', '--listen', '127.0.0.1:0', '--agent', process.execPath, join(REPO, 'fixtures/scripted-agent.mjs')], { stdio: ['ignore', 'ignore', 'pipe'] }));
  const address = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.once('exit', (code) => reject(new Error(`the coordinator exited (${code}) before listening: ${err}`)));
    child.stderr!.on('data', (chunk) => {
      err += chunk;
      const match = /listening on (127\.0\.0\.1:\d+)/.exec(err);
      if (match) resolve(match[1]!);
    });
  });
  return { child, address };
}

/**
 * A team's coordinator: 10 editors (each its own bridge) run 10 tasks at once each on one
 * standalone `buckley-lsp coordinator`. Every task must complete with its own answer, every editor
 * must see progress of its own tasks only; the figures are each editor's time to the first
 * progress from the agent, and the coordinator's memory per running task and after two rounds.
 */
async function team(): Promise<void> {
  // BENCH_TEAM=EDITORSxTASKS changes the shape, to see where time goes.
  const [editors, perEditor] = (process.env.BENCH_TEAM ?? (quick ? '3x4' : '10x10')).split('x').map(Number) as [number, number];
  const { child: coordinator, address } = await standaloneCoordinator();
  const bridges = await Promise.all(
    Array.from({ length: editors }, async () => {
      const lsp = spawnLsp([BIN, '--stdio', '--coordinator', address]);
      await initialize(lsp, { window: { workDoneProgress: true }, experimental: { buckley: { taskProgress: true } } });
      await untilReady(lsp);
      return lsp;
    }),
  );
  const idle = rssMb(coordinator.pid!);
  const firstProgress: number[] = [];
  const problems: string[] = [];
  let peak = 0;

  /** One round: every editor starts its tasks at once; resolves when all have ended. */
  const round = async (label: string) => {
    let showingSteps = 0;
    await Promise.all(
      bridges.map(async (lsp, editor) => {
        /** What each task id showed, when, and its end (known whether or not its id is back yet). */
        const progress = new Map<string, { firstStepAt?: number; end?: { status: string; message?: string }; ended: Promise<void>; endNow: () => void }>();
        const of = (taskId: string) => {
          let entry = progress.get(taskId);
          if (!entry) {
            let endNow!: () => void;
            const ended = new Promise<void>((resolve) => (endNow = resolve));
            entry = { ended, endNow };
            progress.set(taskId, entry);
          }
          return entry;
        };
        const notifications = lsp.connection.onNotification('$/buckley/taskProgress', (p: { taskId: string; status: string; message?: string; plan?: Array<{ status: string }> }) => {
          const entry = of(p.taskId);
          // The first progress that came from the agent: the first step of its plan.
          if (entry.firstStepAt === undefined && showsPlanStep(p)) {
            entry.firstStepAt = now();
            if (++showingSteps === editors * perEditor) peak = Math.max(peak, rssMb(coordinator.pid!));
          }
          if (['completed', 'failed', 'cancelled'].includes(p.status)) {
            entry.end = p;
            entry.endNow();
          }
        });
        // What the editor shows: a progress per task, titled with it, where the answer is written.
        const titles = new Map<string | number, string>();
        const shown: Array<{ token: string | number; text: string }> = [];
        const progressShown = lsp.connection.onUnhandledProgress(({ token, value }: { token: string | number; value: { kind: string; title?: string; message?: string } }) => {
          if (value.title) titles.set(token, value.title);
          for (const text of [value.title, value.message]) if (text) shown.push({ token, text });
        });
        const started = await Promise.all(
          Array.from({ length: perEditor }, async (_, i) => {
            const tag = `${label}-e${editor}-t${i}`;
            const sentAt = now();
            const { taskId } = await lsp.connection.sendRequest<{ taskId: string }>('buckley/executeTask', { task: `SLOW PLAN ${tag}` });
            await of(taskId).ended;
            return { taskId, tag, sentAt };
          }),
        );
        notifications.dispose();
        progressShown.dispose();
        const own = new Set(started.map(({ taskId }) => taskId));
        const tags = new Set(started.map(({ tag }) => tag));
        for (const { token, text } of shown) {
          for (const [tag] of text.matchAll(/\b(?:warm|measured)-e\d+-t\d+\b/g)) {
            if (!tags.has(tag)) problems.push(`${label}: editor ${editor} was shown another editor's task: ${text}`);
            else if (!titles.get(token)?.endsWith(tag)) problems.push(`${label}: editor ${editor} was shown ${tag} in the progress of ${titles.get(token)}`);
          }
        }
        for (const taskId of progress.keys()) if (!own.has(taskId)) problems.push(`${label}: editor ${editor} got progress of a task it did not start (${taskId})`);
        for (const { taskId, tag, sentAt } of started) {
          const { firstStepAt, end } = progress.get(taskId)!;
          if (end?.status !== 'completed') problems.push(`${label}: editor ${editor} task ${tag} ${end?.status}: ${end?.message}`);
          if (!shown.some(({ text }) => text === `All 3 steps done for: SLOW PLAN ${tag}`)) problems.push(`${label}: editor ${editor} was not shown the answer of ${tag}`);
          if (firstStepAt === undefined) problems.push(`${label}: editor ${editor} task ${tag} showed no step of its plan`);
          else firstProgress.push(firstStepAt - sentAt);
        }
      }),
    );
  };
  // The baseline: one task alone on the same coordinator (after a warm-up one).
  const alone: number[] = [];
  for (let i = 0; i < 6; i++) {
    const lsp = bridges[0]!;
    const t0 = now();
    let firstStep!: () => void;
    let end!: () => void;
    const stepped = new Promise<void>((resolve) => (firstStep = resolve));
    const ended = new Promise<void>((resolve) => (end = resolve));
    const listening = lsp.connection.onNotification('$/buckley/taskProgress', (p: { status: string; message?: string; plan?: Array<{ status: string }> }) => {
      if (showsPlanStep(p)) firstStep();
      if (['completed', 'failed', 'cancelled'].includes(p.status)) end();
    });
    const silent = lsp.connection.onUnhandledProgress(() => {});
    await lsp.connection.sendRequest('buckley/executeTask', { task: 'SLOW PLAN alone' });
    await stepped;
    if (i > 0) alone.push(now() - t0);
    // Its later progress must not reach the rounds' count.
    await ended;
    listening.dispose();
    silent.dispose();
  }
  await round('warm');
  const afterFirst = rssMb(coordinator.pid!);
  firstProgress.length = 0;
  await round('measured');
  const afterSecond = rssMb(coordinator.pid!);
  const tasks = editors * perEditor;
  record({ figure: `team: ${editors} editors × ${perEditor} tasks on one coordinator — tasks that ended wrong or saw another's progress`, value: problems.length, unit: 'problems', baseline: 'tasks', baselineValue: tasks, goal: 'none', met: problems.length === 0 });
  for (const problem of problems.slice(0, 5)) console.error(problem);
  for (const p of [50, 99]) {
    record({ figure: `team: time to the first progress from the agent p${p}, ${tasks} tasks at once`, value: pct(firstProgress, p), unit: 'ms', baseline: 'one task alone (median)', baselineValue: median(alone), goal: 'report' });
  }
  record({ figure: `team: coordinator memory per running task (${tasks} running)`, value: (peak - idle) / tasks, unit: 'MB', baseline: 'coordinator idle', baselineValue: idle, goal: 'report' });
  record({ figure: 'team: coordinator memory after the second round', value: afterSecond, unit: 'MB', baseline: 'after the first', baselineValue: afterFirst, goal: '≤ 1.1× (bounded)', met: afterSecond / afterFirst <= 1.1 });
  await Promise.all(bridges.map((lsp) => lsp.stop()));
  coordinator.kill();
}

/**
 * Inline completions: the editor's request → the completion, against the same model answering the
 * same request straight over HTTP. The model answers at once, so what is measured is what the
 * bridge and the coordinator add, with the default settings, as Neovim 0.12 asks: a didChange per
 * keystroke, then an automatic inlineCompletion request. Every request is at a new prefix, so none
 * is answered from the last.
 */
async function completions(): Promise<void> {
  const model = createServer(async (req, res) => {
    for await (const _chunk of req);
    if (req.url === '/v1/completions') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, text: 'a + b;', finish_reason: 'stop' }] }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(model.address() as { port: number }).port}`;
  const samples = quick ? 30 : 300;
  const body = JSON.stringify({ model: 'coder', prompt: 'const x = ', suffix: '\n', max_tokens: 128, temperature: 0, stream: false });
  const direct: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await (await fetch(`${url}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).text();
    direct.push(performance.now() - started);
  }
  const lsp = spawnLsp([BIN, '--stdio'], { BUCKLEY_AGENT: undefined });
  await lsp.connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(join(REPO, 'fixtures/workspace')).href,
    capabilities: { textDocument: { inlineCompletion: {} } },
    clientInfo: { name: 'Neovim', version: '0.12.4' },
    initializationOptions: { agent: { driver: 'openai', openai: { baseUrl: `${url}/v1`, model: 'coder' } } },
  });
  await lsp.connection.sendNotification('initialized', {});
  await untilReady(lsp);
  const uri = pathToFileURL(join(REPO, 'fixtures/workspace/bench-completion.ts')).href;
  let text = 'export function add(a: number, b: number): number {\n  return \n}\n';
  await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
  const bridge: number[] = [];
  for (let i = 0; i < samples; i++) {
    // A keystroke before the cursor: a new prefix each time.
    const at = text.indexOf('return ') + 'return '.length;
    text = `${text.slice(0, at)}x${text.slice(at)}`;
    const position = { line: 1, character: at + 1 - (text.indexOf('\n') + 1) };
    await lsp.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: i + 2 }, contentChanges: [{ text }] });
    const started = performance.now();
    const items = await lsp.connection.sendRequest<{ insertText: string }[] | null>('textDocument/inlineCompletion', { textDocument: { uri }, position, context: { triggerKind: 2 } });
    bridge.push(performance.now() - started);
    if (items?.[0]?.insertText !== 'a + b;') throw new Error(`no completion: ${JSON.stringify(items)}`);
  }
  await lsp.stop();
  model.close();
  for (const p of [50, 99]) {
    record({
      figure: `completion: editor → completion p${p} (the model answering at once)`,
      value: pct(bridge, p),
      unit: 'ms',
      baseline: `the model over HTTP directly p${p}`,
      baselineValue: pct(direct, p),
      goal: p === 50 ? '≤ +20 ms' : 'report',
      met: p === 50 ? pct(bridge, p) - pct(direct, p) <= 20 : null,
    });
  }
}

/**
 * Memory without bound, as users met it: every ask is an agent session, and Claude Code runs a
 * process per session. 50 asks (10 in the quick run) with the real claude-agent-acp (installed by
 * `npm run install-agents`; skipped without it) against a stand-in of Anthropic's API: the agent's
 * processes and their resident memory, after the asks against after the first five (when the idle
 * sessions kept are full).
 */
async function agentAsks(): Promise<void> {
  const claude = join(REPO, '.agents/node_modules/.bin/claude-agent-acp');
  if (!existsSync(claude)) {
    console.log('agents: skipped, Claude Code is not installed here (npm run install-agents)');
    return;
  }
  const model = await anthropicModel((call) => ({ text: call.tools.length > 2 ? 'Answered.' : 'ok' }));
  const home = join(REPO, '.state', 'bench-agent-home');
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const workspace = mkdtempSync(join(tmpdir(), 'buckley-bench-ws-'));
  temporary.push(workspace, home);
  const env = { HOME: home, ANTHROPIC_API_KEY: 'sk-ant-bench', ANTHROPIC_BASE_URL: model.url, DISABLE_TELEMETRY: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
  const lsp = spawnLsp([BIN, '--stdio'], { BUCKLEY_AGENT: undefined });
  await lsp.connection.sendRequest('initialize', { processId: process.pid, rootUri: pathToFileURL(workspace).href, capabilities: {}, initializationOptions: { agent: { command: [claude], env } } });
  await lsp.connection.sendNotification('initialized', {});
  await untilReady(lsp);
  const tree = () => {
    let processes = 0;
    let rss = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (!readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`HOME=${home}`)) continue;
        processes++;
        rss += rssMb(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
    return { processes, rss };
  };
  const asks = quick ? 10 : 50;
  let afterFive = { processes: 0, rss: 0 };
  for (let ask = 1; ask <= asks; ask++) {
    const { answer } = await lsp.connection.sendRequest<{ answer: string }>('buckley/ask', { question: `Question ${ask}?` });
    if (!answer.includes('Answered.')) throw new Error(`ask ${ask} was not answered: ${answer}`);
    if (ask === 5) afterFive = tree();
  }
  const after = tree();
  await lsp.stop();
  await model.close();
  record({ figure: `agents: Claude Code's processes after ${asks} asks`, value: after.processes, unit: 'processes', baseline: 'after 5 asks', baselineValue: afterFive.processes, goal: '≤ 1× (bounded)', met: after.processes <= afterFive.processes });
  record({ figure: `agents: Claude Code's memory after ${asks} asks (its processes' RSS)`, value: after.rss, unit: 'MB', baseline: 'after 5 asks', baselineValue: afterFive.rss, goal: '≤ 1.2× (bounded)', met: after.rss <= afterFive.rss * 1.2 });
}

function histogramSvg(series: Record<string, number[]>): string {
  const colors = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd'];
  const all = Object.values(series).flat();
  const max = pct(all, 99) * 1.2;
  const bins = 40;
  const width = 640;
  const height = 300;
  const bars = Object.entries(series).map(([name, values], index) => {
    const counts = new Array(bins).fill(0);
    for (const value of values) counts[Math.min(bins - 1, Math.floor((value / max) * bins))]++;
    const top = Math.max(...counts);
    const points = counts.map((count, i) => `${40 + (i / bins) * (width - 60)},${height - 30 - (count / top) * (height - 60)}`).join(' ');
    return `<polyline fill="none" stroke="${colors[index]}" stroke-width="2" points="${points}"/><text x="${width - 200}" y="${20 + index * 16}" fill="${colors[index]}" font-size="12">${name} (p50 ${median(values).toFixed(2)} ms)</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="10" y="16" font-size="13">Round-trip latency distribution (ms, 0–${max.toFixed(1)})</text><line x1="40" y1="${height - 30}" x2="${width - 20}" y2="${height - 30}" stroke="#999"/>${bars.join('')}<text x="40" y="${height - 10}" font-size="11">0 ms</text><text x="${width - 80}" y="${height - 10}" font-size="11">${max.toFixed(1)} ms</text></svg>\n`;
}

function timelineSvg(timeline: number[], seconds: number): string {
  const width = 640;
  const height = 200;
  const end = Math.max(seconds * 1000, ...timeline, 1);
  const ticks = timeline.map((t) => `<line x1="${40 + (t / end) * (width - 60)}" y1="40" x2="${40 + (t / end) * (width - 60)}" y2="${height - 40}" stroke="#1f77b4" stroke-opacity="0.6"/>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/><text x="10" y="16" font-size="13">Streaming: notifications sent to the editor over ${end.toFixed(0)} ms (${timeline.length} in all)</text>${ticks.join('')}<line x1="40" y1="${height - 40}" x2="${width - 20}" y2="${height - 40}" stroke="#999"/><text x="40" y="${height - 20}" font-size="11">0</text><text x="${width - 80}" y="${height - 20}" font-size="11">${end.toFixed(0)} ms</text></svg>\n`;
}

/**
 * Hostile agents: the bridge's memory while an agent holds 1,000 permissions open at once (asked
 * one at a time, the rest waiting), against the same server idle; and hover while a 20 MB answer
 * streams in, against hover with nothing running.
 */
async function hostile(): Promise<void> {
  const lsp = spawnLsp([BIN, '--stdio']);
  let waitingAll: () => void = () => {};
  const allWaiting = new Promise<void>((resolve) => (waitingAll = resolve));
  let decide: (answer: object) => void = () => {};
  const decided = new Promise<object>((resolve) => (decide = resolve));
  lsp.connection.onNotification('$/buckley/taskProgress', (p: any) => {
    if (String(p.message ?? '').startsWith('Waiting for your approval (1,000 waiting)')) waitingAll();
  });
  lsp.connection.onRequest('buckley/approveTool', () => decided);
  lsp.connection.onUnhandledProgress(() => {});
  await initialize(lsp, { window: { workDoneProgress: true }, textDocument: { hover: { contentFormat: ['markdown'] } }, experimental: { buckley: { taskProgress: true, approveTool: true } } });
  await untilReady(lsp);
  const uri = pathToFileURL(join(REPO, 'fixtures/workspace/hostile.ts')).href;
  const text = Array.from({ length: 200 }, (_, i) => `export const value${i} = ${i};`).join('\n');
  await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });
  const range = { start: { line: 10, character: 0 }, end: { line: 20, character: 0 } };
  await lsp.connection.sendRequest('buckley/ask', { question: 'INSTANT', uri, range });
  const idle = rssMb(lsp.child.pid!);

  const { taskId } = await lsp.connection.sendRequest<{ taskId: string }>('buckley/executeTask', { task: 'PERMISSIONS 1000 edit' });
  await allWaiting;
  const holding = rssMb(lsp.child.pid!);
  record({ figure: 'hostile: memory while a task holds 1,000 permissions open', value: holding, unit: 'MB', baseline: 'the same server idle', baselineValue: idle, goal: '≤ 1.5×', met: holding / idle <= 1.5 });
  const ended = new Promise<void>((resolve) => lsp.connection.onNotification('$/buckley/taskProgress', (p: any) => p.taskId === taskId && p.status === 'completed' && resolve()));
  decide({ approved: true, forTask: true });
  await ended;

  const hoverAt = async () => {
    const t0 = now();
    await lsp.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: 15, character: 4 } });
    return now() - t0;
  };
  const samples = quick ? 50 : 300;
  const still: number[] = [];
  for (let i = 0; i < samples; i++) still.push(await hoverAt());
  let streaming = true;
  const size = quick ? 5 : 20;
  const asked = lsp.connection.sendRequest('buckley/ask', { question: `BIG ${size}`, uri, range }).finally(() => (streaming = false));
  const during: number[] = [];
  // Every hover sent before the answer was whole counts, the one that meets its end too.
  while (streaming) during.push(await hoverAt());
  await asked;
  record({ figure: `hostile: hover p50 while a ${size} MB answer streams (${during.length} samples)`, value: pct(during, 50), unit: 'ms', baseline: 'hover p50 with nothing running', baselineValue: pct(still, 50), goal: '≤ 1.5×', met: during.length > 0 && pct(during, 50) / pct(still, 50) <= 1.5 });
  const worst = Math.max(...during);
  const idleWorst = Math.max(...still);
  record({ figure: `hostile: hover, slowest while a ${size} MB answer streams and ends`, value: worst, unit: 'ms', baseline: 'hover, slowest with nothing running', baselineValue: idleWorst, goal: '≤ 3× (or 750 ms)', met: worst <= Math.max(3 * idleWorst, 750) });
  await lsp.stop();
}

/** An agent's start in the sandbox, and with its network confined, beside its bare start. */
async function sandbox(): Promise<void> {
  const starts = await sandboxStarts(join(REPO, 'fixtures', 'scripted-agent.mjs'), REPO, quick ? 5 : 30);
  if (!starts) {
    console.log('sandbox: skipped, no sandbox here (bubblewrap and socat)');
    return;
  }
  record({ figure: 'sandbox: agent start to ACP initialize, in the sandbox (median)', value: median(starts.sandboxed), unit: 'ms', baseline: 'the agent started bare', baselineValue: median(starts.bare), goal: 'report', met: null });
  record({ figure: 'sandbox: agent start to ACP initialize, its network confined (median)', value: median(starts.confined), unit: 'ms', baseline: 'in the sandbox, network not confined', baselineValue: median(starts.sandboxed), goal: '≤ 1.2×', met: median(starts.confined) / median(starts.sandboxed) <= 1.2 });
}

/** What the team's benchmarks (scale.ts) use of this one. */
function scaleKit(): Parameters<typeof scale>[0] {
  return {
    quick,
    repo: REPO,
    bin: BIN,
    record,
    rssMb,
    tracked,
    tempDir: (prefix) => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      temporary.push(dir);
      return dir;
    },
    editor: async (args) => {
      const lsp = spawnLsp([BIN, '--stdio', ...args], { BUCKLEY_AGENT: undefined });
      await initialize(lsp, { window: { workDoneProgress: true }, experimental: { buckley: { taskProgress: true } } });
      await untilReady(lsp);
      lsp.connection.onUnhandledProgress(() => {});
      return {
        request: (method, params) => lsp.connection.sendRequest(method, params),
        onNotification: (method, handler) => void lsp.connection.onNotification(method, handler),
        stop: () => lsp.stop(),
      };
    },
  };
}

async function main(): Promise<void> {
  console.log(`buckley-lsp benchmarks${quick ? ' (quick smoke run)' : ''} on ${process.version}\n`);
  if (runs('startup')) await part('startup', startup);
  if (runs('acp')) await part('acp', () => acpStartup({ quick, repo: REPO, bin: BIN, record, median }));
  if (runs('memory')) await part('memory', memory);
  const latencies = runs('latency') ? await part('latency', latency) : undefined;
  const stream = runs('streaming') ? await part('streaming', streaming) : undefined;
  if (runs('responsive')) await part('responsive', responsiveness);
  if (runs('answer')) await part('answer', answerStreaming);
  if (runs('big')) await part('big', bigDocuments);
  if (runs('team')) await part('team', team);
  if (runs('context')) await part('context', context);
  if (runs('reading')) await part('reading', reading);
  if (runs('completions')) await part('completions', completions);
  if (runs('hostile')) await part('hostile', hostile);
  if (runs('agents')) await part('agents', agentAsks);
  if (runs('sandbox')) await part('sandbox', sandbox);
  if (runs('scale')) await part('scale', () => scale(scaleKit()));
  console.log('');

  const rows = figures.map((f) => [f.figure, `${f.value.toFixed(f.unit === 'events/s' ? 0 : 2)} ${f.unit}`, `${f.baseline}: ${f.baselineValue.toFixed(2)}`, `${f.ratio.toFixed(2)}×`, f.goal, f.met === null ? '—' : f.met ? 'met' : 'NOT met']);
  const header = ['figure', 'value', 'baseline', 'ratio', 'goal', 'result'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const row of rows) console.log(line(row));

  mkdirSync(OUT, { recursive: true });
  const name = quick || only ? 'quick' : 'latest';
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, quick, figures }, null, 2)}\n`);
  if (latencies) writeFileSync(join(OUT, `${name}-latency.svg`), histogramSvg({ bridge: latencies.bridge, 'direct gRPC': latencies.direct, 'bare LSP echo': latencies.echo, 'minimal forwarder': latencies.forwarder }));
  if (stream) writeFileSync(join(OUT, `${name}-streaming.svg`), timelineSvg(stream.timeline, stream.seconds));
  console.log(`\nresults: bench/results/${name}.json, ${name}-latency.svg, ${name}-streaming.svg`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
