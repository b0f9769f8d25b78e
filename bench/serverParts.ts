/**
 * What the server does with big inputs and many peers: context building, the framing guard,
 * big documents, a team's editors, completions, the real agents' asks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { StreamMessageReader } from 'vscode-jsonrpc/node.js';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { buildContext } from '../src/bridge/flows/context.js';
import { FramingGuard } from '../src/bridge/transport.js';
import { anthropicModel } from '../test/helpers/models/anthropic.js';
import { quick, REPO, BIN, ECHO_SERVER, PROFILE_ARGS, record, pct, median, now, rssMb, temporary, tracked, showsPlanStep, spawnLsp, initialize, untilReady } from './kit.js';

export function context(): void {
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
export async function readTime(message: Buffer, guarded: boolean): Promise<number> {
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
export async function guardTime(message: Buffer): Promise<number> {
  const guard = new FramingGuard(() => {});
  let passed = 0;
  const done = new Promise<void>((resolve) => guard.on('data', (chunk: Buffer) => (passed += chunk.length) >= message.length && resolve()));
  const t0 = now();
  for (let offset = 0; offset < message.length; offset += 65_536) guard.write(message.subarray(offset, offset + 65_536));
  await done;
  return now() - t0;
}

export async function reading(): Promise<void> {
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
export function peakMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}
/** Starts a new peak-memory measurement (Linux: "5" to clear_refs resets VmHWM). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Big documents through the real server: didOpen of 1, 10 and 50 MB, then a request; the time
 * until it is answered against vscode-jsonrpc's reader alone on the same bytes, its growth with
 * size, and the server's peak memory for the largest (and what is left after didClose).
 */
export async function bigDocuments(): Promise<void> {
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
export async function standaloneCoordinator(): Promise<{ child: ChildProcess; address: string }> {
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
export async function team(): Promise<void> {
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
export async function completions(): Promise<void> {
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
export async function agentAsks(): Promise<void> {
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

