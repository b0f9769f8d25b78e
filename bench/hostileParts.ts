/** Hostile input and the sandbox's cost at an agent's start. */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sandboxStarts } from './sandbox.js';
import { quick, REPO, BIN, record, pct, median, now, rssMb, spawnLsp, initialize, untilReady } from './kit.js';

export async function hostile(): Promise<void> {
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
export async function sandbox(): Promise<void> {
  const starts = await sandboxStarts(join(REPO, 'fixtures', 'scripted-agent.mjs'), REPO, quick ? 5 : 30);
  if (!starts) {
    console.log('sandbox: skipped, no sandbox here (bubblewrap and socat)');
    return;
  }
  record({ figure: 'sandbox: agent start to ACP initialize, in the sandbox (median)', value: median(starts.sandboxed), unit: 'ms', baseline: 'the agent started bare', baselineValue: median(starts.bare), goal: 'report', met: null });
  record({ figure: 'sandbox: agent start to ACP initialize, its network confined (median)', value: median(starts.confined), unit: 'ms', baseline: 'in the sandbox, network not confined', baselineValue: median(starts.sandboxed), goal: '≤ 1.2×', met: median(starts.confined) / median(starts.sandboxed) <= 1.2 });
}

