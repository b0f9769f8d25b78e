/**
 * The ACP driver against our scripted agent (a real process): what a turn leaves behind once it
 * has ended. grpc-js reports every finished server call as cancelled, so the coordinator aborts
 * a turn's signal after the turn — anything still listening then would keep the turn's whole
 * request (its context) alive.
 */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { AcpDriver, MAX_IDLE_SESSIONS, orDeath } from '../../src/coordinator/agents/acp.js';
import { AgentError } from '../../src/coordinator/agents/driver.js';
import { RootLogger } from '../../src/logger.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

const drivers: AcpDriver[] = [];
afterEach(async () => {
  for (const driver of drivers.splice(0)) await driver.close();
});

const noFiles = async (): Promise<never> => {
  throw new Error('no files here');
};
const sink = { text() {}, tool() {}, plan() {}, thought() {}, notice() {}, permission: async () => 'reject' as const, readFile: noFiles, writeFile: noFiles };

/** Starts a turn whose agent ignores session/cancel, cancels it once it streams; resolves with how it ended. */
async function cancelStubbornTurn(driver: AcpDriver): Promise<string> {
  const controller = new AbortController();
  let streaming!: () => void;
  const streamed = new Promise<void>((resolve) => (streaming = resolve));
  const turn = driver.run({ sessionKey: 'editor-1', prompt: 'STUBBORN', readOnly: true }, { ...sink, text: () => streaming() }, controller.signal);
  await streamed;
  controller.abort();
  return (await turn).stopReason;
}

/** A logger whose lines a test can wait for. */
function recordingLogger() {
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const logger = new RootLogger('debug', (_level, line) => {
    lines.push(line);
    for (const waiter of waiters.filter((w) => w.pattern.test(line))) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve) => {
      const seen = lines.find((line) => pattern.test(line));
      if (seen) resolve(seen);
      else waiters.push({ pattern, resolve });
    });
  return { logger, lines, waitFor };
}

describe('AcpDriver', () => {
  it('keeps one agent session per conversation, and closes the one idle longest past MAX_IDLE_SESSIONS', async () => {
    const { logger, waitFor } = recordingLogger();
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger, clientVersion: 'test' });
    drivers.push(driver);
    const sessionOf = async (key: string) => {
      let text = '';
      await driver.run({ sessionKey: key, prompt: 'PROMPT SIZE', readOnly: true }, { ...sink, text: (piece: string) => (text += piece) }, new AbortController().signal);
      return text;
    };
    const turnOf = async (key: string) => {
      let text = '';
      await driver.run({ sessionKey: key, prompt: 'a question', readOnly: true }, { ...sink, permission: async () => 'allow_once' as const, text: (piece: string) => (text += piece) }, new AbortController().signal);
      // The agent counts turns per session: a session's second turn is turn 2.
      return /turn (\d+) of session/.exec(text)![1];
    };
    // The same conversation: the same session, its second turn; another: a session of its own.
    expect([await turnOf('editor-1#a'), await turnOf('editor-1#a'), await turnOf('editor-1#b')]).toEqual(['1', '2', '1']);
    // Past the bound, the one idle longest (conversation a) is closed.
    for (let i = 0; i < MAX_IDLE_SESSIONS; i++) await sessionOf(`editor-1#c${i}`);
    await waitFor(new RegExp(`closing the ACP session \\S+ of editor-1#a: idle longest of ${MAX_IDLE_SESSIONS + 1}`));
    expect(await turnOf('editor-1#a')).toBe('1');
  });

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

  it('lends no session whose turn has not ended: a cancelled turn\'s late output reaches no other turn', async () => {
    const { logger, waitFor } = recordingLogger();
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger, clientVersion: 'test', cancelGraceMs: 200 });
    drivers.push(driver);
    // The agent goes on regardless: after the grace period the turn ends as cancelled.
    expect(await cancelStubbornTurn(driver)).toBe('cancelled');
    await waitFor(/agent stderr: scripted-agent: session\/cancel for/);

    // The next turn of the same conversation runs while the old one still streams into its session.
    const pieces: string[] = [];
    const second = await driver.run({ sessionKey: 'editor-1', prompt: 'INSTANT', readOnly: true }, { ...sink, text: (piece) => pieces.push(piece) }, new AbortController().signal);
    expect(second).toEqual({ text: 'ok', stopReason: 'end_turn' });
    expect(pieces).toEqual(['ok']);
    await waitFor(/did not end a cancelled turn within 0\.2 s: its ACP session \S+ is given up and closed/);
    await waitFor(/dropped an update from a session whose turn was given up/);
    const ended = await waitFor(/ended the abandoned turn of ACP session \S+ \((\d+) late update\(s\) dropped\)/);
    expect(Number(/\((\d+) late/.exec(ended)![1])).toBeGreaterThanOrEqual(5);
    await waitFor(/agent stderr: scripted-agent: session\/close for/);
  });

  it('refuses a new session with the id of one still streaming, rather than mixing their updates', async () => {
    const { logger, waitFor } = recordingLogger();
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT, '--reuse-ids'], logger, clientVersion: 'test', cancelGraceMs: 100 });
    drivers.push(driver);
    expect(await cancelStubbornTurn(driver)).toBe('cancelled');
    // Closed, so this careless agent hands its id out again.
    await waitFor(/agent stderr: scripted-agent: session\/close for/);
    await expect(driver.run({ sessionKey: 'editor-1', prompt: 'INSTANT', readOnly: true }, sink, new AbortController().signal)).rejects.toThrow(
      /answered session\/new with the id of a session still in use/,
    );
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
