/**
 * `buckley-lsp acp` started as an ACP client starts its agent — spawn → `initialize` answered —
 * beside the agent behind it started directly (Gemini CLI where `npm run install-agents` put it,
 * else the scripted agent), interleaved round by round. The face answers `initialize` without
 * starting its agent (that waits for the first session), so the two are what a panel waits for
 * before it can be used.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';

interface AcpCommand {
  name: string;
  command: string;
  args: string[];
}

export interface AcpStartupKit {
  quick: boolean;
  repo: string;
  bin: string;
  record(figure: { figure: string; value: number; unit: string; baseline: string; baselineValue: number; goal: string; met?: boolean | null }): void;
  median(values: number[]): number;
}

/** A server that has not answered `initialize` by then fails the benchmark, named. */
const INITIALIZE_WITHIN_MS = 30_000;

export async function acpStartup(kit: AcpStartupKit): Promise<void> {
  const gemini = join(kit.repo, '.agents/node_modules/.bin/gemini');
  const behind: AcpCommand = existsSync(gemini)
    ? { name: 'Gemini CLI', command: gemini, args: ['--acp'] }
    : { name: 'the scripted agent', command: process.execPath, args: [join(kit.repo, 'fixtures/scripted-agent.mjs')] };
  const face: AcpCommand = { name: 'buckley-lsp acp', command: process.execPath, args: [kit.bin, 'acp', '--agent', [behind.command, ...behind.args].join(' ')] };
  const rounds = kit.quick ? 3 : 10;
  const times = { face: [] as number[], behind: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    times.face.push(await initializeMs(face));
    times.behind.push(await initializeMs(behind));
  }
  const value = kit.median(times.face);
  const baselineValue = kit.median(times.behind);
  kit.record({ figure: `acp: spawn → initialize answered (median of ${rounds})`, value, unit: 'ms', baseline: `${behind.name} started directly (interleaved)`, baselineValue, goal: '≤ 1.2×', met: value / baselineValue <= 1.2 });
}

async function initializeMs(agent: AcpCommand): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), 'buckley-bench-acp-'));
  const started = performance.now();
  const child = spawn(agent.command, agent.args, { env: { ...process.env, HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home }, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  const connection = acp.client({ name: 'bench' }).connect(acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>));
  let timer: NodeJS.Timeout | undefined;
  try {
    const answered = connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false }, clientInfo: { name: 'bench', version: '1' } });
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${agent.name} did not answer initialize within ${INITIALIZE_WITHIN_MS / 1000} s`)), INITIALIZE_WITHIN_MS)));
    await Promise.race([answered, late]);
    return performance.now() - started;
  } finally {
    clearTimeout(timer);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
    rmSync(home, { recursive: true, force: true });
  }
}
