/**
 * What the sandbox costs at an agent's start: the time from spawning the scripted agent to its
 * answer to ACP `initialize`, started bare, in the sandbox (bubblewrap), and in the sandbox with
 * its network confined (our proxy's gate, socat relays inside, the wait until they listen).
 */
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { RootLogger } from '../src/logger.js';
import { probeSandbox, sandboxArgs, sandboxStdio, type SandboxPlan } from '../src/coordinator/agents/sandbox.js';
import { findSocat, NetworkGate } from '../src/coordinator/agents/sandboxNetwork.js';
import { ruleOf } from '../src/coordinator/agents/egress.js';

export interface SandboxStarts {
  bare: number[];
  sandboxed: number[];
  confined: number[];
}

/** Milliseconds from spawn to the answer to initialize, for `program args`. */
async function startOnce(program: string, args: string[], sandboxed: boolean): Promise<number> {
  const t0 = performance.now();
  const stdio = sandboxed ? sandboxStdio(['pipe', 'pipe', 'ignore'] as const) : (['pipe', 'pipe', 'ignore'] as const);
  const child = spawn(program, args, { stdio: [...stdio] as never });
  if (sandboxed) closeSync(stdio[3] as number);
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
  const connection = acp.client({ name: 'bench' }).connect(stream);
  try {
    await connection.agent.request('initialize', { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    return performance.now() - t0;
  } finally {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

/** `samples` starts of each kind, interleaved (so the machine's moods fall on all alike); undefined where no sandbox runs here. */
export async function sandboxStarts(agent: string, cwd: string, samples: number): Promise<SandboxStarts | undefined> {
  const probe = await probeSandbox();
  const socat = findSocat();
  if (!probe.ok || 'problem' in socat) return undefined;
  const command = [process.execPath, agent];
  const plan: SandboxPlan = { writesWorkspace: false, stateDirs: [], stateFiles: [], workspaceCredentials: [], home: process.env.HOME ?? '/', programPaths: command, cwd };
  const gate = await NetworkGate.open([ruleOf('api.example.com')!, ruleOf('127.0.0.1:11434')!], new RootLogger('error'), socat.socat);
  const starts: SandboxStarts = { bare: [], sandboxed: [], confined: [] };
  try {
    for (let i = 0; i < samples; i++) {
      starts.bare.push(await startOnce(command[0]!, command.slice(1), false));
      starts.sandboxed.push(await startOnce('bwrap', sandboxArgs(plan, command), true));
      starts.confined.push(await startOnce('bwrap', sandboxArgs({ ...plan, network: gate.plan }, command), true));
    }
  } finally {
    await gate.close();
  }
  return starts;
}
