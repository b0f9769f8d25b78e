/**
 * Traces (OpenTelemetry) and metrics (Prometheus), from real processes: an editor's bridge and a standalone coordinator,
 * each exporting over OTLP/HTTP to a collector on 127.0.0.1 (a local HTTP server that takes OTLP
 * JSON, as a collector does), make one trace of a task — the editor's span, the coordinator's
 * task, the agent's turn, its tool call and the approval it waited for — and the agent gets the
 * turn's trace context in its prompt request's `_meta`. A coordinator with `--metrics` serves
 * Prometheus metrics of its tasks, queue, records and agents.
 */
import { createServer } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCoordinatorProcess, type CoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS, fileUri, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { metricsAddress, scrape } from '../helpers/metrics.js';

const start = startingClients();
const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

interface ExportedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

/** An OTLP/HTTP collector taking JSON: the spans it got, and a wait for those a test needs. */
async function collector(): Promise<{ endpoint: string; spans: ExportedSpan[]; until(done: (spans: ExportedSpan[]) => boolean): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const waiters: (() => void)[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      for (const resource of JSON.parse(body).resourceSpans ?? []) {
        const service = resource.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue;
        for (const scope of resource.scopeSpans) {
          for (const span of scope.spans) {
            const attributes = Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
            spans.push({ service, name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', attributes, status: span.status ?? {} });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };
  const until = async (done: (spans: ExportedSpan[]) => boolean) => {
    while (!done(spans)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { endpoint: `http://127.0.0.1:${port}`, spans, until };
}

async function kept(started: Promise<CoordinatorProcess>): Promise<CoordinatorProcess> {
  const coordinator = await started;
  stops.push(() => coordinator.stop());
  return coordinator;
}

/** An editor (Neovim 0.10's payload, opted in to progress and approvals) on `coordinator`, approving everything. */
function editor(coordinator: string, env: Record<string, string | undefined>) {
  const root = tempDir('buckley-traced');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'README.md'), '# read me\n');
  const base = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}neovim-0.10.4.json`, 'utf8'));
  const folder = fileUri(root);
  return start({
    client: 'neovim-0.10.4',
    args: ['--coordinator', coordinator],
    env: { BUCKLEY_AGENT: undefined, ...env },
    initialize: { rootUri: folder, workspaceFolders: [{ uri: folder, name: 'traced' }], capabilities: { ...base.capabilities, experimental: { buckley: { taskProgress: true, approveTool: true } } } },
    handlers: { 'buckley/approveTool': () => ({ approved: true }) },
  });
}

describe('traces', () => {
  it("make one trace of a task across the editor's bridge, the coordinator and the agent: its turn, tool calls and approval waits", async () => {
    const otlp = await collector();
    // Spans sent at once, not after the SDK's default 5 s.
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '20' };
    const coordinator = await kept(startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT], env));
    const client = await editor(coordinator.address, env);
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy the config' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    const asked = await client.request('buckley/ask', { question: 'SHOW TRACEPARENT' });
    const names = ['buckley.task', 'buckley.task', 'buckley.turn', 'buckley.turn', 'buckley.ask', 'buckley.approval', 'buckley.approval', 'buckley.tool_call', 'buckley.tool_call'];
    await otlp.until((spans) => names.every((name) => spans.filter((span) => span.name === name).length >= names.filter((one) => one === name).length));

    const bridge = otlp.spans.find((span) => span.name === 'buckley.task' && span.service === 'buckley-lsp')!;
    expect(bridge).toMatchObject({ parentSpanId: '', attributes: { 'buckley.task_id': taskId, 'buckley.status': 'completed' } });
    const trace = otlp.spans.filter((span) => span.traceId === bridge.traceId);
    const child = (name: string, parent: ExportedSpan) => trace.filter((span) => span.name === name && span.parentSpanId === parent.spanId);
    const [task] = child('buckley.task', bridge);
    expect(task).toMatchObject({ service: 'buckley-lsp coordinator', attributes: { 'buckley.intent': 'task', 'buckley.status': 'completed' } });
    const [turn] = child('buckley.turn', task!);
    expect(turn).toMatchObject({ attributes: { 'buckley.agent': 'scripted-agent.mjs', 'buckley.stop_reason': 'end_turn' } });
    // The scripted agent reads README.md and edits config.json, each asked first.
    expect(child('buckley.approval', turn!).map((span) => span.attributes)).toEqual([
      expect.objectContaining({ 'buckley.tool': 'Read README.md', 'buckley.decision': 'allow_once', 'buckley.decided_by': 'editor' }),
      expect.objectContaining({ 'buckley.tool': 'Edit config.json', 'buckley.decision': 'allow_once', 'buckley.decided_by': 'editor' }),
    ]);
    expect(child('buckley.tool_call', turn!).map((span) => span.attributes['buckley.status'])).toEqual(['completed', 'completed']);

    // The agent got its turn's trace context with the prompt.
    const ask = otlp.spans.find((span) => span.name === 'buckley.ask' && span.service === 'buckley-lsp')!;
    const askTurn = otlp.spans.find((span) => span.name === 'buckley.turn' && span.traceId === ask.traceId)!;
    expect(asked.answer).toContain(`traceparent: 00-${ask.traceId}-${askTurn.spanId}-01`);
  });

  it("join the embedded coordinator's spans (its worker thread) to the editor's", async () => {
    const otlp = await collector();
    const client = await start({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_BSP_SCHEDULE_DELAY: '20' } });
    const asked = await client.request('buckley/ask', { question: 'SHOW TRACEPARENT' });
    await otlp.until((spans) => ['buckley.ask', 'buckley.task', 'buckley.turn'].every((name) => spans.some((span) => span.name === name)));
    const ask = otlp.spans.find((span) => span.name === 'buckley.ask')!;
    const task = otlp.spans.find((span) => span.name === 'buckley.task')!;
    const turn = otlp.spans.find((span) => span.name === 'buckley.turn')!;
    expect([task.traceId, task.parentSpanId, task.attributes['buckley.intent']]).toEqual([ask.traceId, ask.spanId, 'ask']);
    expect(turn.parentSpanId).toBe(task.spanId);
    expect(asked.answer).toContain(`traceparent: 00-${ask.traceId}-${turn.spanId}-01`);
  });

  it('are ids only where no OTLP endpoint is set: the agent still gets a trace context', async () => {
    const coordinator = await kept(startCoordinatorProcess(['--agent', process.execPath, SCRIPTED_AGENT]));
    const client = await editor(coordinator.address, {});
    const asked = await client.request('buckley/ask', { question: 'SHOW TRACEPARENT' });
    expect(asked.answer).toMatch(/traceparent: 00-[0-9a-f]{32}-[0-9a-f]{16}-01/);
  });
});


describe('metrics', () => {
  it('serves Prometheus metrics on --metrics: tasks by state, the queue and its lag, records appended, approvals waiting, agents running', async () => {
    const coordinator = await kept(startCoordinatorProcess(['--metrics', '127.0.0.1:0', '--replica', 'r1', '--agent', process.execPath, SCRIPTED_AGENT]));
    const address = metricsAddress(coordinator);
    const idle = await scrape(address);
    expect(idle.get('buckley_tasks{state="completed"}')).toBe(0);
    expect(idle.get('buckley_agents_running')).toBe(0);
    // The process's own under their standard names, as any Node.js dashboard reads them.
    expect(idle.get('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(idle.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    let waiting: Map<string, number> | undefined;
    const client = await start({
      client: 'neovim-0.10.4',
      args: ['--coordinator', coordinator.address],
      env: { BUCKLEY_AGENT: undefined },
      initialize: { capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } } },
      handlers: {
        // Scraped while the task waits for its approval.
        'buckley/approveTool': async () => {
          waiting ??= await scrape(address);
          return { approved: true };
        },
      },
    });
    const { taskId } = await client.request('buckley/executeTask', { task: 'Tidy the config' });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'completed');
    const whileWaiting = ['buckley_approvals_waiting', 'buckley_tasks{state="awaiting_approval"}', 'buckley_turns_running', 'buckley_agents_running', 'buckley_queue_consumer_lag{kind="unacknowledged"}'];
    expect(whileWaiting.map((name) => [name, waiting?.get(name)])).toEqual(whileWaiting.map((name) => [name, 1]));
    const after = await scrape(address);
    expect(after.get('buckley_tasks{state="completed"}')).toBe(1);
    expect(after.get('buckley_approvals_waiting')).toBe(0);
    expect(after.get('buckley_queue_depth')).toBe(0);
    expect(after.get('buckley_turns_running')).toBe(0);
    expect(after.get('buckley_task_records_total{kind="event"}')).toBeGreaterThan(3);
    expect(after.get('buckley_task_records_total{kind="final"}')).toBe(1);
    expect(after.get('buckley_store_scrape_ok')).toBe(1);
    expect(await fetch(`http://${address}/`).then((response) => response.status)).toBe(404);
  });
});
