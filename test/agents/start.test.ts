/**
 * The real agents started as users start them, in the sandbox they run in: as installed, and
 * through a wrapper script that `exec`s them (recognised then by their ACP agentInfo, and started
 * again in the sandbox they need); with a fresh home (no state folder yet) and with a home under
 * /tmp (which the sandbox replaces with its own). Each answers, and its state lands in the real
 * home. And each reaches its model's API through the proxy it is given: the API listens on an
 * address of the machine that the sandbox has no route to, so an agent that went around the proxy
 * could not reach it.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { knownByCommand } from '../../src/coordinator/agents/recognize.js';
import { agentHome, REAL_AGENTS, requireAgent, stepsScript, type RealAgent } from '../helpers/agents.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';
import type { ModelServer } from '../helpers/models/standIn.js';
import { fileUri } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

// Registered first, so run last: the agents' homes go once the servers (and their agents) have stopped.
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const start = startingClients();

/** An IPv4 address of this machine that is not loopback, if it has one. */
const LAN = Object.values(networkInterfaces())
  .flat()
  .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
if (!LAN) process.stdout.write('real-agent proxy tests skipped: this machine has no address but loopback\n');

/** A script that runs the agent's command, as people wrap agents to set their environment. */
function wrapper(agent: RealAgent): string[] {
  const bin = tempDir('buckley-wrapper');
  const quoted = agent.command.map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(' ');
  writeFileSync(join(bin, 'my-ai'), `#!/bin/sh\nexport MY_WRAPPER=1\nexec ${quoted} "$@"\n`, { mode: 0o755 });
  return [join(bin, 'my-ai')];
}

async function answered(agent: RealAgent, command: string[], home: string, model: ModelServer): Promise<TestClient> {
  const root = tempDir('buckley-agent-ws');
  const client = await start({
    env: { BUCKLEY_AGENT: undefined },
    initialize: { rootUri: fileUri(root), workspaceFolders: [{ uri: fileUri(root), name: 'ws' }], initializationOptions: { agent: { command, env: agent.setup(model, home) } } },
  });
  const { answer } = await client.request('buckley/ask', { question: 'Are you there?' });
  expect(answer).toContain('Answered.');
  return client;
}

describe.each(REAL_AGENTS)('$name, started in its sandbox', (agent) => {
  const installed = requireAgent(agent);
  const known = knownByCommand(agent.command);

  for (const wrapped of [false, true]) {
    for (const underTmp of [false, true]) {
      it.runIf(installed)(`answers ${wrapped ? 'through a wrapper script' : 'as installed'}, with a ${underTmp ? 'home under /tmp' : 'fresh home'}: its state lands in that home`, async () => {
        const model = await agent.model(stepsScript([{ text: 'Answered.' }]));
        cleanups.push(() => model.close());
        let home: string;
        if (underTmp) {
          home = tempDir('buckley-home');
        } else {
          const made = agentHome();
          cleanups.push(made.cleanup);
          home = made.home;
        }
        const env = agent.setup(model, home);
        const stateDir = known!.stateDirs({ ...env, HOME: home })[0]!;
        const client = await answered(agent, wrapped ? wrapper(agent) : agent.command, home, model);
        expect(existsSync(stateDir), `${stateDir} made in the real home`).toBe(true);
        // Known by the script's words, or else by its agentInfo (and started again).
        if (wrapped) await client.waitFor('window/logMessage', (params) => new RegExp(`(runs|is) ${known!.title} \\(its (script|ACP agentInfo)`).test(params.message));
        // What keeps it from working there by its own rules (Codex's helpers under /tmp) is said.
        if (!wrapped) for (const caveat of known!.caveats?.({ ...env, HOME: home }) ?? []) await client.waitFor('window/logMessage', (params) => params.message.includes(caveat));
      });
    }
  }

  // The machine's own address on its network: inside the sandbox nothing routes there, and no agent
  // leaves it out of the proxy (as it may a name under localhost), so only the proxy reaches it.
  it.runIf(installed && LAN !== undefined)('reaches its model through the proxy it is given: at an address of the machine the sandbox has no route to', async () => {
    const model = await agent.model(stepsScript([{ text: 'Answered.' }]), LAN);
    cleanups.push(() => model.close());
    const { home, cleanup } = agentHome();
    cleanups.push(cleanup);
    const client = await answered(agent, agent.command, home, model);
    expect(client.all('window/logMessage').map((params) => params.message).join('\n')).not.toContain(`refused a connection to ${LAN}`);
  });
});
