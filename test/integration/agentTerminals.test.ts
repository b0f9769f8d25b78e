/**
 * Commands an agent runs through buckley-lsp (ACP terminal/*), over stdio with the scripted agent:
 * judged and decided like any tool call — declined in an ask, asked about in a task above the
 * auto-approval level — run in the agent's sandbox (a task writes its workspace, nothing else),
 * their output kept to the agent's limit, and killed when the turn is cancelled.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHome } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import { fileUri } from '../helpers/paths.js';

// Registered first, so run last: the agents' homes go once the servers (and their agents) have stopped.
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
const start = startingClients();

/** A workspace outside the system's /tmp (which the sandbox replaces), and buckley-lsp on it. */
async function session(approve: boolean, settings: object = {}): Promise<{ client: TestClient; root: string }> {
  const { home: root, cleanup } = agentHome();
  cleanups.push(cleanup);
  writeFileSync(join(root, 'notes.txt'), 'notes\n');
  const client = await start({
    initialize: {
      rootUri: fileUri(root),
      workspaceFolders: [{ uri: fileUri(root), name: 'ws' }],
      capabilities: { experimental: { buckley: { taskProgress: true, approveTool: true } } },
      initializationOptions: settings,
    },
    handlers: { 'buckley/approveTool': () => ({ approved: approve }) },
  });
  return { client, root };
}

async function task(client: TestClient, query: string): Promise<string> {
  await client.request('buckley/executeTask', { task: query });
  return (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${query}"`))).message;
}

describe("the agent's terminals", () => {
  it('run a command the user approved, in the sandbox: the workspace written, nothing outside it', async () => {
    const { client, root } = await session(true);
    const outside = join(root, '..', `outside-${randomUUID()}`);
    const answer = await task(client, `TERMINAL echo made > ${root}/made.txt && cat notes.txt; touch ${outside}`);
    expect(answer).toContain('terminal: exit 1');
    expect(answer).toContain('notes');
    expect(readFileSync(join(root, 'made.txt'), 'utf8')).toBe('made\n');
    expect(existsSync(outside)).toBe(false);
    const [asked] = client.all('buckley/approveTool');
    expect(asked).toMatchObject({ risk: 'destructive', parameters: { command: expect.stringContaining('echo made') } });
  });

  it('keep a character the command wrote in two pieces whole', async () => {
    const { client } = await session(true);
    // "é" is two bytes: written apart, the pipe hands them over in two reads.
    const answer = await task(client, "TERMINAL printf 'caf\\303'; sleep 0.3; printf '\\251 done\\n'");
    expect(answer).toContain('terminal: exit 0\ncafé done');
  });

  it('run nothing the user denied, and nothing in an ask', async () => {
    const { client, root } = await session(false);
    expect(await task(client, `TERMINAL touch ${root}/denied.txt`)).toContain('terminal failed (-32603): running `touch');
    const { answer } = await client.request('buckley/ask', { question: `TERMINAL touch ${root}/asked.txt` });
    expect(answer).toMatch(/terminal failed \(-32603\): running `touch .*` was not approved/);
    expect(existsSync(join(root, 'denied.txt')) || existsSync(join(root, 'asked.txt'))).toBe(false);
  });

  it('run unasked within autoApprove, and are killed when the turn is cancelled', async () => {
    const { client } = await session(true, { approvals: { autoApprove: 'high' } });
    const tag = randomUUID();
    const { taskId } = await client.request('buckley/executeTask', { task: `TERMINAL sleep 600 # ${tag}` });
    const running = async () => {
      for (;;) {
        const found = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid) && safeRead(`/proc/${pid}/cmdline`).includes(tag));
        if (found.length) return found;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const pids = await running();
    expect(client.all('buckley/approveTool')).toEqual([]);
    await client.request('buckley/cancelTask', { taskId });
    await client.waitFor('$/buckley/taskProgress', (p) => p.taskId === taskId && p.status === 'cancelled');
    for (;;) {
      if (pids.every((pid) => !existsSync(`/proc/${pid}`) || safeRead(`/proc/${pid}/stat`).split(') ')[1]?.startsWith('Z'))) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });
});

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
