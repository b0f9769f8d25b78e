/**
 * A coordinator's Prometheus metrics (`--metrics ADDR`, prom-client), served at /metrics; loaded
 * only when asked for. What the team's store knows (tasks by state, approvals waiting, the work
 * queue and its consumer's lag) is the same on every replica; what this replica does (records it
 * appended, its turns and agents running) is its own — add them up across replicas.
 */
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../logger.js';
import { agentsRunning } from './agents/processes.js';
import { kindOf, type TaskEngine, type TaskLog, type TaskRecord, type TaskState } from './tasks/store.js';

export interface MetricsSource {
  engine: TaskEngine;
  replica: string;
  /** Turns running on this replica. */
  runningHere(): number;
}

const STATES: TaskState['status'][] = ['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];
/** How long one scrape may wait for the store (NATS away): the last figures are served then. */
const SCRAPE_DEADLINE_MS = 5_000;

/** The engine, its appends counted by kind of record (events/s is the rate of `kind="event"`). */
export function countedEngine(engine: TaskEngine, registry: Registry): TaskEngine {
  const records = new Counter({ name: 'buckley_task_records_total', help: "Records this replica appended to tasks' streams, by kind (event: what callers see)", labelNames: ['kind'], registers: [registry] });
  const append = engine.log.append.bind(engine.log);
  // Each method named (a spread of the class instance would carry none of them, and the type would not say so).
  const log: TaskLog = {
    follow: engine.log.follow.bind(engine.log),
    read: engine.log.read.bind(engine.log),
    last: engine.log.last.bind(engine.log),
    append: async (taskId: string, record: TaskRecord) => {
      const seq = await append(taskId, record);
      // A task's last event is its final record.
      records.inc({ kind: kindOf(record) });
      return seq;
    },
  };
  return { name: engine.name, log, states: engine.states, queue: engine.queue, ...(engine.health ? { health: engine.health } : {}), stopping: () => engine.stopping(), close: () => engine.close() };
}

interface StoreFigures {
  states: Map<TaskState['status'], number>;
  /** Requests waiting for a caller's reply. */
  pending: number;
  queue: { pending: number; unacknowledged: number };
}

/** What the store says now, or undefined when it does not say within SCRAPE_DEADLINE_MS (NATS away). */
async function readStore(engine: TaskEngine): Promise<StoreFigures | undefined> {
  const read = Promise.all([engine.states.list(), engine.queue.lag()]);
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), SCRAPE_DEADLINE_MS).unref());
  const result = await Promise.race([read, timeout]).catch(() => undefined);
  if (!result) return undefined;
  const [tasks, queue] = result;
  const states = new Map(STATES.map((state) => [state, 0]));
  let pending = 0;
  for (const state of tasks.values()) {
    states.set(state.status, (states.get(state.status) ?? 0) + 1);
    pending += state.pending?.length ?? 0;
  }
  return { states, pending, queue };
}

/**
 * The gauges: the store read once per scrape (prom-client collects the metrics all at once);
 * `scrape` begins a new one.
 */
function gauges(source: MetricsSource, registry: Registry): { scrape(): void } {
  let reading: Promise<StoreFigures | undefined> | undefined;
  const read = () => (reading ??= readStore(source.engine));
  const fromStore = (name: string, help: string, labelNames: string[], set: (gauge: Gauge, figures: StoreFigures) => void) =>
    new Gauge({ name, help, labelNames, registers: [registry], async collect() {
      const figures = await read();
      if (figures) set(this, figures);
    } });
  fromStore('buckley_tasks', 'Tasks known to the store, by state', ['state'], (gauge, { states }) => {
    for (const [state, count] of states) gauge.set({ state }, count);
  });
  fromStore('buckley_approvals_waiting', 'Tasks waiting for their caller to decide an approval', [], (gauge, { states }) => gauge.set(states.get('awaiting_approval') ?? 0));
  fromStore('buckley_requests_waiting', "Requests waiting for a caller's reply (approvals, files, questions)", [], (gauge, { pending }) => gauge.set(pending));
  fromStore('buckley_queue_depth', 'Tasks queued, not yet taken by a replica', [], (gauge, { queue }) => gauge.set(queue.pending));
  fromStore('buckley_queue_consumer_lag', "The work queue consumer's lag: pending (not handed out) and unacknowledged (handed out, not done)", ['kind'], (gauge, { queue }) => {
    gauge.set({ kind: 'pending' }, queue.pending);
    gauge.set({ kind: 'unacknowledged' }, queue.unacknowledged);
  });
  new Gauge({ name: 'buckley_store_scrape_ok', help: 'Whether this scrape read the store (0: its figures are the last ones read)', registers: [registry], async collect() {
    this.set((await read()) ? 1 : 0);
  } });
  new Gauge({ name: 'buckley_store_away_seconds', help: "How long this replica has not reached the team's store (NATS), 0 while it does", registers: [registry], collect() {
    const since = source.engine.health?.awaySince();
    this.set(since === undefined ? 0 : (Date.now() - since) / 1000);
  } });
  new Gauge({ name: 'buckley_turns_running', help: 'Agent turns running on this replica', registers: [registry], collect() {
    this.set(source.runningHere());
  } });
  new Gauge({ name: 'buckley_agents_running', help: 'Agent processes running on this replica', registers: [registry], collect() {
    this.set(agentsRunning());
  } });
  return { scrape: () => (reading = undefined) };
}

/** Serves /metrics on `address` (host:port); the engine to use, its appends counted. */
export async function serveMetrics(address: string, engine: TaskEngine, logger: Logger): Promise<{ engine: TaskEngine; address: string; start(source: MetricsSource): void; close(): Promise<void> }> {
  const registry = new Registry();
  // Under their standard names (process_cpu_seconds_total, nodejs_heap_size_used_bytes): the
  // dashboards and alerts people have for any Node.js process work as they are.
  collectDefaultMetrics({ register: registry });
  const counted = countedEngine(engine, registry);
  let store: { scrape(): void } | undefined;
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    store?.scrape();
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(503, { 'content-type': 'text/plain' }).end(`the metrics could not be read: ${(error as Error).message}\n`),
    );
  });
  const listening = await listen(server, address);
  logger.info(`metrics on http://${listening}/metrics`);
  return {
    engine: counted,
    address: listening,
    start: (source) => {
      registry.setDefaultLabels({ replica: source.replica });
      store = gauges({ ...source, engine: counted }, registry);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function listen(server: Server, address: string): Promise<string> {
  const at = address.lastIndexOf(':');
  const host = at > 0 ? address.slice(0, at).replace(/^\[|\]$/g, '') : '127.0.0.1';
  const port = Number(address.slice(at + 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(`the metrics cannot listen on ${address}: ${error.message}`)));
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  return typeof bound === 'object' && bound ? `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}` : address;
}
