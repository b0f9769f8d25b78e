/**
 * The ACP driver against our scripted agent (a real process): what a turn leaves behind once it
 * has ended. grpc-js reports every finished server call as cancelled, so the coordinator aborts
 * a turn's signal after the turn — anything still listening then would keep the turn's whole
 * request (its context) alive.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { AcpDriver, orDeath } from '../../src/agents/acp.js';
import { AgentError } from '../../src/agents/driver.js';
import { RootLogger } from '../../src/logger.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

const drivers: AcpDriver[] = [];
afterEach(async () => {
  for (const driver of drivers.splice(0)) await driver.close();
});

const sink = { text() {}, tool() {}, plan() {}, permission: async () => 'reject' as const };

describe('AcpDriver', () => {
  it('leaves no listener on the signal of a turn that has ended', async () => {
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger: new RootLogger('error'), clientVersion: 'test' });
    drivers.push(driver);
    const controller = new AbortController();
    const result = await driver.run({ sessionKey: 'editor-1', prompt: 'INSTANT', readOnly: true }, sink, controller.signal);
    expect(result).toEqual({ text: 'ok', stopReason: 'end_turn' });
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  });

  it('goes on with the turn past a malformed session/update', async () => {
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger: new RootLogger('error'), clientVersion: 'test' });
    drivers.push(driver);
    const tools: unknown[] = [];
    const result = await driver.run({ sessionKey: 'editor-1', prompt: 'MALFORMED', readOnly: true }, { ...sink, tool: (tool) => tools.push(tool) }, new AbortController().signal);
    expect(result).toEqual({ text: 'ok', stopReason: 'end_turn' });
    expect(tools).toEqual([]);
  });

  it('waits on the agent\'s death per call without leaving anything attached to it afterwards', async () => {
    const agent = { deathListeners: new Set<(error: AgentError) => void>() };
    await expect(orDeath(agent, Promise.resolve('answered'))).resolves.toBe('answered');
    await expect(orDeath(agent, Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(agent.deathListeners.size).toBe(0);

    const waiting = orDeath(agent, new Promise(() => {}));
    expect(agent.deathListeners.size).toBe(1);
    for (const listener of agent.deathListeners) listener(new AgentError('the agent exited with code 3'));
    await expect(waiting).rejects.toThrow('the agent exited with code 3');
    // Once dead, later calls fail at once.
    await expect(orDeath({ ...agent, death: new AgentError('gone') }, new Promise(() => {}))).rejects.toThrow('gone');
  });
});
