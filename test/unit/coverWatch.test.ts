/**
 * Files a sandbox binds alone, watched through a turn (src/coordinator/agents/coverWatch.ts): one
 * replaced on disk is reported once; one removed, or the agent's own state file replaced, is not.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { watchCovers } from '../../src/coordinator/agents/coverWatch.js';
import { fileId, type CoveredFile } from '../../src/coordinator/agents/sandbox.js';
import type { Logger } from '../../src/logger.js';
import { tempDir } from '../helpers/temp.js';

const logger = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;

function covered(folder: string, name: string, covers: CoveredFile['covers']): CoveredFile {
  const path = join(folder, name);
  writeFileSync(path, name);
  return { path, id: fileId(path)!, covers };
}

function replace(path: string): void {
  writeFileSync(`${path}.new`, 'new');
  renameSync(`${path}.new`, path);
}

describe('files a sandbox binds alone, through a turn', () => {
  it('reports the first one replaced, once; not one removed, nor the state file', async () => {
    const folder = tempDir('buckley-covers');
    const [env, config, state] = [covered(folder, '.env', 'hidden'), covered(folder, 'config', 'read-only'), covered(folder, 'state.json', 'state')];
    const reported: string[] = [];
    let first: () => void = () => undefined;
    const firstReport = new Promise<void>((resolve) => (first = resolve));
    const stop = watchCovers([env, config, state], (file) => {
      reported.push(file.path);
      first();
    }, logger);
    replace(state.path);
    rmSync(config.path);
    replace(env.path);
    await firstReport;
    replace(env.path);
    writeFileSync(config.path, 'again');
    stop();
    expect(reported).toEqual([env.path]);
  });
});
