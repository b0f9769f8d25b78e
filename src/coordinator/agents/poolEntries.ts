/**
 * The agent processes of a pool (pool.ts), one per sandbox, kept within bounds: at most
 * `maxProcesses` (the one idle longest is stopped first), none idle longer than `idleMs`, and one
 * whose sandbox hides other credentials than the workspace now holds retired — stopped once its
 * turns have ended.
 */
import type { Logger } from '../../logger.js';
import type { AcpDriver } from './acp.js';
import { sandboxChanges } from './sandbox.js';

export interface Entry {
  key: string;
  driver: AcpDriver;
  /** The credential files hidden from it, as found when it started. */
  hidden: string;
  running: number;
  lastUsed: number;
  retired: boolean;
  idleTimer?: NodeJS.Timeout;
}

export const MAX_PROCESSES = 4;
export const PROCESS_IDLE_MS = 15 * 60_000;

export class PoolEntries {
  private readonly entries = new Map<string, Entry>();
  /** Retired processes still running a turn: stopped when it ends. */
  private readonly retiring = new Set<Entry>();
  /** The driver made last: what the pool is described as. */
  latest: AcpDriver;

  constructor(
    first: AcpDriver,
    private readonly options: {
      logger: Logger;
      maxProcesses?: number;
      idleMs?: number;
      /** A process of this sandbox was stopped and none takes its place: what served it may go (its network gate). */
      unused?(key: string): void;
    },
  ) {
    this.latest = first;
  }

  /** Runs `work` on the entry's process, counted as running (not idle, not to be stopped). */
  async use<T>(entry: Entry, work: () => Promise<T>): Promise<T> {
    clearTimeout(entry.idleTimer);
    entry.running++;
    entry.lastUsed = Date.now();
    try {
      return await work();
    } finally {
      entry.running--;
      entry.lastUsed = Date.now();
      this.reap();
    }
  }

  /** The entry under `key`, a new one when there is none or its sandbox hides other credentials. */
  entry(key: string, hidden: string, make: () => AcpDriver): Entry {
    const current = this.entries.get(key);
    if (current && current.hidden === hidden) return current;
    if (current) {
      const changed = sandboxChanges(current.hidden, hidden);
      const named = `${changed.slice(0, 3).join(', ')}${changed.length > 3 ? ` and ${changed.length - 3} more` : ''}`;
      this.options.logger.info(`what the sandbox hides or binds changed since it started (${named}: a credential file or Unix socket come or gone, or a file replaced on disk): ${this.latest.description} gets a new sandbox made for them`);
      this.retire(current);
    }
    const entry: Entry = { key, driver: make(), hidden, running: 0, lastUsed: Date.now(), retired: false };
    this.entries.set(key, entry);
    this.latest = entry.driver;
    this.reap();
    return entry;
  }

  endSession(sessionKey: string): void {
    for (const entry of this.entries.values()) entry.driver.endSession(sessionKey);
  }

  async close(): Promise<void> {
    const entries = [...this.entries.values(), ...this.retiring];
    this.entries.clear();
    this.retiring.clear();
    for (const entry of entries) clearTimeout(entry.idleTimer);
    await Promise.all(entries.map((entry) => entry.driver.close()));
  }

  private retire(entry: Entry): void {
    entry.retired = true;
    this.entries.delete(entry.key);
    this.stopWhenIdle(entry);
  }

  private stopWhenIdle(entry: Entry): void {
    if (entry.running > 0) {
      // Checked again when its turn ends (reap).
      this.retiring.add(entry);
      return;
    }
    this.retiring.delete(entry);
    clearTimeout(entry.idleTimer);
    void entry.driver.close().finally(() => {
      if (!this.entries.has(entry.key) && ![...this.retiring].some((other) => other.key === entry.key)) this.options.unused?.(entry.key);
    });
  }

  /** Stops what is over the bounds: retired processes whose turns ended, the idle beyond `maxProcesses`; arms idle timers. */
  private reap(): void {
    for (const entry of [...this.retiring]) if (entry.running === 0) this.stopWhenIdle(entry);
    const idle = [...this.entries.values()].filter((entry) => entry.running === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    const max = this.options.maxProcesses ?? MAX_PROCESSES;
    let over = this.entries.size - max;
    for (const entry of idle) {
      if (over-- > 0) {
        this.options.logger.debug(`stopping the agent process of ${entry.key.replace('\0', ' in ')}: more than ${max} kept`);
        this.retire(entry);
        continue;
      }
      clearTimeout(entry.idleTimer);
      entry.idleTimer = setTimeout(() => {
        if (entry.running === 0 && this.entries.get(entry.key) === entry) this.retire(entry);
      }, this.options.idleMs ?? PROCESS_IDLE_MS);
      entry.idleTimer.unref();
    }
  }
}
