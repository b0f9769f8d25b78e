/**
 * The coordinator at a team's scale: task events through NATS JetStream against the in-memory
 * store; 1,000 tasks at once on one coordinator, in memory and on NATS (its peak memory, and
 * that every call ends); 100 agents × 100 tasks across 3 replicas; and an editor's task followed
 * again after the replica it streamed from is killed. The NATS parts need the pinned nats-server
 * (`npm run install-nats`) and say so when it is not there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoordinatorClient } from '../src/wire/client.js';
import { FINAL_STATUSES, taskEventSchema } from '../src/wire/contract.js';
import { memoryEngine } from '../src/coordinator/tasks/memory.js';
import { natsEngine } from '../src/coordinator/tasks/nats.js';
import type { TaskEngine } from '../src/coordinator/tasks/store.js';

export interface ScaleKit {
  quick: boolean;
  repo: string;
  bin: string;
  record(figure: { figure: string; value: number; unit: string; baseline: string; baselineValue: number; goal: string; met?: boolean | null }): void;
  rssMb(pid: number): number;
  tracked(child: ChildProcess): ChildProcess;
  /** A temporary folder, removed when the benchmark exits. */
  tempDir(prefix: string): string;
  /** An LSP client of the built server, initialized, with `args`. */
  editor(args: string[]): Promise<{ request<R>(method: string, params: unknown): Promise<R>; onNotification(method: string, handler: (params: any) => void): void; stop(): Promise<void> }>;
}

export async function scale(kit: ScaleKit): Promise<void> {
  const server = natsServer(kit.repo);
  const nats = server ? await startNats(kit, server) : undefined;
  if (!nats) console.log(`scale: the NATS parts skipped: no nats-server at ${join(kit.repo, '.nats/bin/nats-server')} (npm run install-nats)`);
  // BUCKLEY_BENCH_SCALE=failover,…: just those (while working on one figure).
  const chosen = process.env.BUCKLEY_BENCH_SCALE?.split(',');
  const runs = (name: string) => !chosen || chosen.includes(name);
  if (runs('events')) await eventRates(kit, nats);
  if (runs('memory')) await manyAtOnce(kit, undefined);
  if (!nats) return;
  if (runs('nats')) await manyAtOnce(kit, nats);
  if (runs('replicas')) await agentsAcrossReplicas(kit, nats);
  if (runs('failover')) await failover(kit, nats);
}

function natsServer(repo: string): string | undefined {
  const path = process.env.BUCKLEY_NATS_SERVER ?? join(repo, '.nats', 'bin', 'nats-server');
  return existsSync(path) ? path : undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function startNats(kit: ScaleKit, program: string): Promise<string> {
  const port = await freePort();
  kit.tracked(spawn(program, ['--jetstream', '--addr', '127.0.0.1', '--port', String(port), '--store_dir', kit.tempDir('bench-nats-')], { stdio: 'ignore' }));
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket.end() !== undefined)).once('error', () => resolve(false));
    });
    if (up) return `nats://127.0.0.1:${port}`;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A coordinator process (a replica with `--nats`), with the scripted agent. */
async function coordinator(kit: ScaleKit, args: string[]): Promise<{ child: ChildProcess; address: string }> {
  const child = kit.tracked(spawn(process.execPath, [kit.bin, 'coordinator', '--listen', '127.0.0.1:0', ...args, '--agent', process.execPath, join(kit.repo, 'fixtures/scripted-agent.mjs')], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let said = '';
  let stopping = false;
  const address = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the coordinator exited (${code}) before listening: ${said}`)));
    child.stderr!.on('data', (chunk) => {
      // Its last words are kept: a coordinator that dies under the load says why.
      said = (said + chunk).slice(-4_000);
      const match = /listening on (127\.0\.0\.1:\d+)/.exec(said);
      if (match) resolve(match[1]!);
    });
  });
  child.once('exit', (code, signal) => {
    if (!stopping && signal !== 'SIGTERM' && signal !== 'SIGKILL') console.log(`scale: the coordinator ${args.join(' ')} exited (${code ?? signal}) under load; its last words:\n${said.split('\n').slice(-15).join('\n')}`);
  });
  const kill = child.kill.bind(child);
  child.kill = (signal?: NodeJS.Signals | number) => ((stopping = true), kill(signal));
  return { child, address };
}

/** Events appended to 50 tasks at once, each task followed: events a second until every follower has all. */
async function eventRate(engine: TaskEngine, total: number): Promise<number> {
  const tasks = 50;
  const each = Math.ceil(total / tasks);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: tasks }, async () => {
      const taskId = randomUUID();
      const controller = new AbortController();
      const followed = (async () => {
        let seen = 0;
        for await (const _record of engine.log.follow(taskId, 1, controller.signal)) if (++seen === each) break;
      })();
      await Promise.all(Array.from({ length: each }, (_, i) => engine.log.append(taskId, { event: { answer_delta: `piece ${i} ` } })));
      await followed;
      controller.abort();
    }),
  );
  return (tasks * each) / ((performance.now() - t0) / 1000);
}

async function eventRates(kit: ScaleKit, nats: string | undefined): Promise<void> {
  const total = kit.quick ? 5_000 : 100_000;
  const memory = memoryEngine();
  const inMemory = await eventRate(memory, total);
  await memory.close();
  if (!nats) return;
  const engine = await natsEngine({ servers: [nats] });
  const onNats = await eventRate(engine, total);
  await engine.close();
  kit.record({ figure: `scale: task events through NATS JetStream (${total.toLocaleString('en')}, 50 tasks, each followed)`, value: onNats, unit: 'events/s', baseline: 'the in-memory store, the same load', baselineValue: inMemory, goal: '≥ 20,000/s', met: onNats >= 20_000 });
}

/** A workspace of `files` small source files. */
function workspace(kit: ScaleKit, files: number): string {
  const root = kit.tempDir('bench-scale-ws-');
  for (let i = 0; i < files; i++) {
    const folder = join(root, `dir${i % 50}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file${i}.ts`), `export const value${i} = ${i};\n`.repeat(40));
  }
  return root;
}

/** Clients, each its own agent id, with a session in `root` on `address`. */
async function callers(count: number, addresses: string[], root: string, prefix: string) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const agentId = `${prefix}-${i}`;
      const client = new CoordinatorClient({ address: addresses[i % addresses.length]!, agentId, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
      const session = await client.call.CreateSession({ agent_id: agentId, metadata: { workspace_root: pathToFileURL(root).href } }, { timeoutMs: 30_000 });
      return { client, agentId, metadata: { 'x-buckley-session-id': session.session_id } };
    }),
  );
}

/** One task run to its end: its final status, or what failed. */
async function runTask(caller: Awaited<ReturnType<typeof callers>>[number], query: string): Promise<string> {
  try {
    let final = 'no final state';
    for await (const event of caller.client.stream('StreamTask', { task_id: '', agent_id: caller.agentId, query }, taskEventSchema, { timeoutMs: 600_000, metadata: caller.metadata })) if (FINAL_STATUSES.has(event.status)) final = event.status;
    return final;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Peak RSS of `pids` while `work` runs, polled. */
async function peakWhile<T>(kit: ScaleKit, pids: number[], work: () => Promise<T>): Promise<{ result: T; peaks: number[] }> {
  const peaks = pids.map((pid) => kit.rssMb(pid));
  // A process that died meanwhile keeps the peak it had (its death is the coordinator's to say).
  const rss = (pid: number) => {
    try {
      return kit.rssMb(pid);
    } catch {
      return 0;
    }
  };
  const poll = setInterval(() => pids.forEach((pid, i) => (peaks[i] = Math.max(peaks[i]!, rss(pid)))), 50);
  try {
    return { result: await work(), peaks };
  } finally {
    clearInterval(poll);
  }
}

/** 1,000 tasks at once from 20 callers on one coordinator, in a workspace of 5,000 files. */
async function manyAtOnce(kit: ScaleKit, nats: string | undefined): Promise<void> {
  const total = kit.quick ? 200 : 1_000;
  const root = workspace(kit, kit.quick ? 500 : 5_000);
  const { child, address } = await coordinator(kit, nats ? ['--nats', nats, '--replica', 'solo'] : []);
  const all = await callers(20, [address], root, 'editor');
  const idle = kit.rssMb(child.pid!);
  const t0 = performance.now();
  const { result: ends, peaks } = await peakWhile(kit, [child.pid!], () => Promise.all(Array.from({ length: total }, (_, i) => runTask(all[i % all.length]!, 'INSTANT'))));
  const seconds = (performance.now() - t0) / 1000;
  const completed = ends.filter((end) => end === 'completed').length;
  const where = nats ? 'on NATS' : 'in memory';
  if (completed < total) console.log(`scale: ${total - completed} tasks ${where} did not complete, e.g. ${ends.find((end) => end !== 'completed')}`);
  kit.record({ figure: `scale: ${total.toLocaleString('en')} tasks at once on one coordinator ${where}, peak memory (${completed} completed, in ${seconds.toFixed(1)} s)`, value: peaks[0]!, unit: 'MB', baseline: 'the coordinator idle', baselineValue: idle, goal: '< 600 MB, every task completes', met: peaks[0]! < 600 && completed === total });
  for (const { client } of all) client.close();
  child.kill('SIGTERM');
}

/** 100 agents (callers) × 100 tasks each across 3 replicas, each agent 5 at a time. */
async function agentsAcrossReplicas(kit: ScaleKit, nats: string): Promise<void> {
  const [agents, each] = kit.quick ? [10, 5] : [100, 100];
  const replicas = await Promise.all(['a', 'b', 'c'].map((name) => coordinator(kit, ['--nats', nats, '--replica', name])));
  const root = workspace(kit, 100);
  const all = await callers(agents, replicas.map((replica) => replica.address), root, 'agent');
  const idle = Math.max(...replicas.map((replica) => kit.rssMb(replica.child.pid!)));
  const t0 = performance.now();
  const { result: ends, peaks } = await peakWhile(
    kit,
    replicas.map((replica) => replica.child.pid!),
    () =>
      Promise.all(
        all.map(async (caller) => {
          const done: string[] = [];
          for (let started = 0; started < each; started += 5) done.push(...(await Promise.all(Array.from({ length: Math.min(5, each - started) }, () => runTask(caller, 'INSTANT')))));
          return done;
        }),
      ),
  );
  const seconds = (performance.now() - t0) / 1000;
  const completed = ends.flat().filter((end) => end === 'completed').length;
  const total = agents * each;
  kit.record({ figure: `scale: ${agents} agents × ${each} tasks across 3 replicas, memory of the busiest (${completed} of ${total} completed, ${(total / seconds).toFixed(0)} tasks/s)`, value: Math.max(...peaks), unit: 'MB', baseline: 'the busiest replica idle', baselineValue: idle, goal: 'every task completes', met: completed === total });
  for (const { client } of all) client.close();
  for (const replica of replicas) replica.child.kill('SIGTERM');
}

/** An editor's task streamed through a replica that is killed: the time until the editor has its next event, through another. */
async function failover(kit: ScaleKit, nats: string): Promise<void> {
  const rounds = kit.quick ? 1 : 5;
  const runner = await coordinator(kit, ['--nats', nats, '--replica', 'runner']);
  const gateways = await Promise.all(Array.from({ length: rounds + 1 }, (_, i) => coordinator(kit, ['--nats', nats, '--replica', `g${i}`, '--max-running', '0'])));
  const editor = await kit.editor(['--coordinator', gateways.map((gateway) => gateway.address).join(',')]);
  const times: number[] = [];
  let killedAt = 0;
  let resumed: (ms: number) => void = () => undefined;
  let stepping: () => void = () => undefined;
  const said: string[] = [];
  editor.onNotification('window/logMessage', (params: { message: string }) => {
    said.push(params.message);
    if (killedAt && params.message.includes(': followed again on ')) resumed(performance.now() - killedAt);
  });
  // The round's own task under way: it streams for a minute and a half (a piece every 100 ms), so the
  // kill finds it running and its next piece says when it was followed again; then it is cancelled.
  let current = '';
  editor.onNotification('$/buckley/taskProgress', (params: { taskId: string; status: string }) => {
    if (params.taskId === current && params.status === 'in_progress') stepping();
  });
  for (let round = 0; round < rounds; round++) {
    const back = new Promise<number>((resolve) => (resumed = resolve));
    const stepped = new Promise<void>((resolve) => (stepping = resolve));
    killedAt = 0;
    current = (await editor.request<{ taskId: string }>('buckley/executeTask', { task: `STREAM 900 100 failover ${round}` })).taskId;
    await stepped;
    // The replica the editor streams from dies.
    const { coordinator: now } = await editor.request<{ coordinator: { address: string } }>('buckley/status', {});
    killedAt = performance.now();
    gateways.find((gateway) => gateway.address === now.address)!.child.kill('SIGKILL');
    // Not followed again within a minute: the figure fails, with what the editor said.
    const late = setTimeout(() => resumed(Number.POSITIVE_INFINITY), 60_000);
    const ms = await back;
    clearTimeout(late);
    if (ms === Number.POSITIVE_INFINITY) console.log(`scale: round ${round + 1} of the failover: the editor did not follow its task again within a minute; it said:\n${said.slice(-20).join('\n')}`);
    times.push(ms);
    await editor.request('buckley/cancelTask', { taskId: current });
  }
  await editor.stop();
  const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
  kit.record({ figure: `scale: an editor's task followed again after its replica is killed (median of ${rounds})`, value: median, unit: 'ms', baseline: 'goal', baselineValue: 5_000, goal: '≤ 5 s', met: median <= 5_000 });
  runner.child.kill('SIGTERM');
  for (const gateway of gateways) gateway.child.kill('SIGTERM');
}
