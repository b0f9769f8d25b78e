/**
 * What the editor feels: startup and idle memory, an ask's latency, streaming, responsiveness
 * while a task runs, an answer's arrival.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoordinatorClient } from '../src/wire/client.js';
import { sendMessageResponseSchema, sessionSchema } from '../src/wire/contract.js';
import { copilotServer, measureStartups, type StartupSample, type StartupServer } from './startup.js';
import { quick, AskPartialResult, REPO, BIN, AGENT, ECHO_SERVER, record, pct, median, now, cpuMs, rssMb, tracked, spawnLsp, initialize, untilReady } from './kit.js';
import { standaloneCoordinator } from './serverParts.js';

export async function startup(): Promise<void> {
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

export async function bareNodeRss(): Promise<number> {
  const child = tracked(spawn(process.execPath, ['-e', 'process.stdout.write("ready\\n"); setInterval(() => {}, 1000)'], { stdio: ['ignore', 'pipe', 'ignore'] }));
  await new Promise((resolve) => child.stdout!.once('data', resolve));
  const rss = rssMb(child.pid!);
  child.kill();
  return rss;
}

export async function memory(): Promise<void> {
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

export async function latency(): Promise<{ bridge: number[]; direct: number[]; echo: number[]; forwarder: number[] }> {
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

export async function streaming(): Promise<{ timeline: number[]; seconds: number }> {
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
export async function responsiveness(): Promise<void> {
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
export async function answerStreaming(): Promise<void> {
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

