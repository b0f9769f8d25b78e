/**
 * The commands one agent process runs through us, bounded together: each keeps its output up to
 * its limit, and all of them up to TERMINALS_OUTPUT_BYTES and MAX_TERMINALS at once — an agent
 * that starts command after command without releasing them is refused in words before the user is
 * asked, and may start more once it releases some. Real processes, the Terminals flow in-process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TERMINALS, Terminals, TERMINALS_OUTPUT_BYTES } from '../../src/coordinator/agents/terminals.js';
import { RootLogger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

const opened: Terminals[] = [];
afterEach(() => {
  for (const terminals of opened.splice(0)) terminals.closeAll();
});

function setUp() {
  const cwd = tempDir('terminal-bounds');
  const terminals = new Terminals({ logger: new RootLogger('error', () => undefined), cwd: () => cwd });
  opened.push(terminals);
  let asked = 0;
  const turn = {
    sink: {
      permission: async () => {
        asked++;
        return 'allow_once' as const;
      },
    },
    signal: new AbortController().signal,
    cwd,
  };
  const create = (outputByteLimit: number) => terminals.handle('terminal/create', { sessionId: 's', command: 'sleep', args: ['30'], outputByteLimit }, () => turn) as Promise<{ terminalId: string }>;
  return { terminals, turn, create, asked: () => asked };
}

describe("an agent's commands, together", () => {
  it('keep at most TERMINALS_OUTPUT_BYTES of output at once: past it, refused in words without asking the user, until one is released', async () => {
    const { terminals, turn, create, asked } = setUp();
    const each = 16 * 1024 * 1024;
    const ids = [];
    for (let i = 0; i < TERMINALS_OUTPUT_BYTES / each; i++) ids.push((await create(each)).terminalId);
    const before = asked();
    await expect(create(each)).rejects.toThrow(`cannot run \`sleep 30\`: the open commands keep ${TERMINALS_OUTPUT_BYTES / 1024 / 1024} MB of output already; release the terminals it is done with (terminal/release) before starting another`);
    expect(asked()).toBe(before);
    // A command that keeps no output costs none.
    await create(0);
    await terminals.handle('terminal/release', { sessionId: 's', terminalId: ids[0] }, () => turn);
    await expect(create(each)).resolves.toMatchObject({ terminalId: expect.any(String) });
  });

  it('are at most MAX_TERMINALS open at once', async () => {
    const { create } = setUp();
    for (let i = 0; i < MAX_TERMINALS; i++) await create(0);
    await expect(create(0)).rejects.toThrow(`cannot run \`sleep 30\`: ${MAX_TERMINALS} commands are open at once already; release the terminals it is done with (terminal/release) before starting another`);
  });
});
