/**
 * `npm run bench`: what users feel — latency, streaming, startup, memory, context building —
 * each figure a ratio against a baseline measured in the same run. Prints a table, writes
 * bench/results/latest.json and two SVG charts. `--quick` is the smoke run CI does.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scale } from './scale.js';
import { acpStartup } from './acpStartup.js';
import { quick, only, runs, REPO, BIN, OUT, figures, record, median, rssMb, temporary, tracked, part, spawnLsp, initialize, untilReady } from './kit.js';
import { startup, memory, latency, streaming, responsiveness, answerStreaming } from './editorParts.js';
import { context, reading, bigDocuments, team, completions, agentAsks } from './serverParts.js';
import { hostile, sandbox } from './hostileParts.js';
import { histogramSvg, timelineSvg } from './svg.js';

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

