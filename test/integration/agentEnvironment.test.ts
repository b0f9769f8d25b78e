/**
 * Our variables stay ours: none of the BUCKLEY_* variables buckley-lsp reads reaches an agent
 * (`buckley acp` reads a BUCKLEY_AGENT of its own, the path of its agent profile, and exits when
 * it cannot read it: the scripted agent's --buckley-acp does the same); nor do the variables that look
 * like secrets, but for those buckley.agent.passEnv names; the agent gets the rest of the environment
 * plus buckley.agent.env.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startingClients } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();
const ask = async (client: Awaited<ReturnType<typeof start>>, question: string) => (await client.request('buckley/ask', { question })).answer as string;

describe("the agent's environment", () => {
  it('has none of our BUCKLEY_* variables, nor what looks like a secret, and everything else', async () => {
    const client = await start({ env: { BUCKLEY_LOG: 'info', BUCKLEY_LOG_FILE: 'off', SOME_API_KEY: 'k-123', SOME_SETTING: 'on' } });
    expect(await ask(client, 'ENV BUCKLEY_AGENT')).toMatch(/^BUCKLEY_AGENT unset/);
    expect(await ask(client, 'ENV BUCKLEY_LOG')).toMatch(/^BUCKLEY_LOG unset/);
    expect(await ask(client, 'ENV BUCKLEY_LOG_FILE')).toMatch(/^BUCKLEY_LOG_FILE unset/);
    expect(await ask(client, 'ENV SOME_API_KEY')).toMatch(/^SOME_API_KEY unset/);
    expect(await ask(client, 'ENV SOME_SETTING')).toMatch(/^SOME_SETTING=on/);
    const passed = await start({ env: { SOME_API_KEY: 'k-123' }, initialize: { initializationOptions: { agent: { passEnv: ['SOME_API_KEY'] } } } });
    expect(await ask(passed, 'ENV SOME_API_KEY')).toMatch(/^SOME_API_KEY=k-123/);
  });

  it('has what buckley.agent.env gives it, BUCKLEY_AGENT included', async () => {
    const client = await start({ initialize: { initializationOptions: { agent: { env: { BUCKLEY_AGENT: '/profiles/reviewer.yaml', EXTRA: 'yes' } } } } });
    expect(await ask(client, 'ENV BUCKLEY_AGENT')).toMatch(/^BUCKLEY_AGENT=\/profiles\/reviewer\.yaml/);
    expect(await ask(client, 'ENV EXTRA')).toMatch(/^EXTRA=yes/);
  });

  it('lets an agent that reads BUCKLEY_AGENT itself (as `buckley acp` does) start when BUCKLEY_AGENT is our agent command', async () => {
    // A stand-in for the Buckley CLI on PATH: `buckley acp` as users run it.
    const bin = tempDir('buckley-bin');
    writeFileSync(join(bin, 'buckley'), `#!/bin/sh\nexec "${process.execPath}" "${SCRIPTED_AGENT}" --buckley-acp "$@"\n`, { mode: 0o755 });
    const client = await start({ env: { BUCKLEY_AGENT: 'buckley acp', PATH: `${bin}:${process.env.PATH}` } });
    expect(await ask(client, 'INSTANT')).toBe('ok');
  });

  it('says so when BUCKLEY_AGENT holds an agent profile rather than a command, and how to set both', async () => {
    const profile = join(tempDir('buckley-profile'), 'agent.yaml');
    writeFileSync(profile, 'name: reviewer\n');
    chmodSync(profile, 0o644);
    const client = await start({ env: { BUCKLEY_AGENT: profile } });
    await expect(client.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringContaining(`BUCKLEY_AGENT is "${profile}", which buckley-lsp reads as the command of its ACP agent, but it is a file, not a program`),
    });
    await expect(client.request('buckley/ask', { question: 'hello?' })).rejects.toMatchObject({
      message: expect.stringContaining(`buckley.agent.env: {"BUCKLEY_AGENT": "${profile}"}`),
    });
  });
});
