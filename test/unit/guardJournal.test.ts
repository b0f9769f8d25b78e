/**
 * The guard's journal (src/coordinator/agents/guardJournal.ts): a turn's watch is on disk while it
 * runs and gone once checked; one left by a process that is gone (killed mid-turn) is checked by
 * the next to start — keys put back, what was made moved aside, a file left unreadable moved
 * aside (no copy of its text is kept) — and one of a process still running is left to it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GuardJournal } from '../../src/coordinator/agents/guardJournal.js';
import { watchGuarded } from '../../src/coordinator/agents/guardedState.js';
import type { Logger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

function logger(): Logger & { said: string[] } {
  const said: string[] = [];
  const log = (message: string) => said.push(message);
  return { said, error: log, warn: log, info: log, debug: log } as unknown as Logger & { said: string[] };
}

/** A process id that was running and is no more. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

/** The state of a turn under way, its journal left as a process that was killed leaves it. */
function killedTurn(folder: string, state: string): string {
  const journal = new GuardJournal(folder, logger());
  journal.prepare();
  watchGuarded([join(state, 'hooks')], [{ file: join(state, 'settings.json'), keys: ['mcpServers'] }], () => 'Agent', logger(), journal.record());
  const [name] = readdirSync(folder);
  const left = `${deadPid()}-0-0.json`;
  renameSync(join(folder, name!), join(folder, left));
  return left;
}

describe("the guard's journal", () => {
  it('keeps a turn on disk while it runs and removes it once checked', () => {
    const folder = tempDir('buckley-journal');
    const journal = new GuardJournal(folder, logger());
    journal.prepare();
    const { check } = watchGuarded([], [{ file: join(folder, 'none.json'), keys: ['mcpServers'] }], () => 'Agent', logger(), journal.record());
    expect(readdirSync(folder)).toHaveLength(1);
    check();
    expect(readdirSync(folder)).toEqual([]);
  });

  it("checks a killed process's turn when the next starts: keys put back, what it made moved aside, the journal gone (a record half written too)", () => {
    const [folder, state] = [tempDir('buckley-journal'), tempDir('buckley-state')];
    writeFileSync(join(state, 'settings.json'), JSON.stringify({ starts: 1, mcpServers: { mine: { command: 'mine' } } }));
    const left = killedTurn(folder, state);
    // A newer record it was writing as it was killed: gone with it.
    writeFileSync(join(folder, `${left}.${left.split('-')[0]}.1a2b3c4d.tmp`), '{"agent"');
    // What the agent did before its coordinator was killed.
    writeFileSync(join(state, 'settings.json'), JSON.stringify({ starts: 2, mcpServers: { mine: { command: 'mine' }, evil: { command: 'evil' } } }));
    mkdirSync(join(state, 'hooks'));
    const log = logger();
    new GuardJournal(folder, log).recover();
    expect(JSON.parse(readFileSync(join(state, 'settings.json'), 'utf8'))).toEqual({ starts: 2, mcpServers: { mine: { command: 'mine' } } });
    expect(existsSync(join(state, 'hooks'))).toBe(false);
    expect(log.said[0]).toMatch(/^buckley-lsp \(process \d+\) stopped while Agent worked in its sandbox: what that turn could have changed that runs code later is checked now$/);
    expect(log.said.slice(1).join('\n')).toContain(`mcpServers.evil in ${join(state, 'settings.json')} changed while Agent worked in its sandbox`);
    expect(readdirSync(folder)).toEqual([]);
  });

  it('moves aside a state file the killed turn left unreadable (no copy of its text was kept)', () => {
    const [folder, state] = [tempDir('buckley-journal'), tempDir('buckley-state')];
    writeFileSync(join(state, 'settings.json'), '{"mcpServers": {}}');
    killedTurn(folder, state);
    writeFileSync(join(state, 'settings.json'), 'not json { "mcpServers": {"evil": {}} }');
    const log = logger();
    new GuardJournal(folder, log).recover();
    expect(existsSync(join(state, 'settings.json'))).toBe(false);
    expect(log.said[1]).toContain('(buckley-lsp stopped during that turn, and kept no copy of the file as it was)');
  });

  it("leaves a running process's turn to it, and says which journal it cannot read", () => {
    const [folder, state] = [tempDir('buckley-journal'), tempDir('buckley-state')];
    const running = new GuardJournal(folder, logger());
    running.prepare();
    watchGuarded([join(state, 'hooks')], [], () => 'Agent', logger(), running.record());
    mkdirSync(join(state, 'hooks'));
    writeFileSync(join(folder, `${deadPid()}-0-7.json`), '{"agent": 3}');
    const log = logger();
    new GuardJournal(folder, log).recover();
    expect(existsSync(join(state, 'hooks'))).toBe(true);
    expect(readdirSync(folder)).toHaveLength(1);
    expect(log.said).toEqual([expect.stringMatching(/-0-7\.json\.checking-\d+-\d+, what a turn of buckley-lsp \(process \d+\) guarded, cannot be read/)]);
  });
});
