/**
 * A real editor: headless Neovim (Debian's `neovim`, 0.7.2 on Debian 12) runs
 * test/nvim/explain.lua, which starts the built server, selects lines, runs the range code
 * action "Buckley: explain this" and reads the answer back through hover. Everything asserted
 * here is what Neovim itself received and showed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, FIXTURES, REPO, SCRIPTED_AGENT } from '../helpers/paths.js';

const NVIM = process.env.BUCKLEY_NVIM ?? 'nvim';
const available = spawnSync(NVIM, ['--version']).status === 0;
// CI installs Neovim; on a developer machine without it the test says so and skips.
if (!available && process.env.CI) throw new Error(`${NVIM} not found: CI must install Debian's neovim`);

describe.skipIf(!available)('Neovim (real editor)', () => {
  it('runs "Buckley: explain this" on selected lines and shows the answer on hover', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'buckley-nvim-'));
    const resultFile = join(dir, 'result.json');
    const nvim = spawn(NVIM, ['--headless', '-n', '-i', 'NONE', '-u', 'NONE', '-c', `luafile ${REPO}test/nvim/explain.lua`], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        XDG_STATE_HOME: dir,
        XDG_CONFIG_HOME: dir,
        XDG_DATA_HOME: dir,
        BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}`,
        BUCKLEY_NODE: process.execPath,
        BUCKLEY_BIN: BIN,
        BUCKLEY_FIXTURE: `${FIXTURES}workspace/retry.ts`,
        BUCKLEY_NVIM_RESULT: resultFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    nvim.stdout.on('data', (chunk) => (output += chunk));
    nvim.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => nvim.once('exit', resolve));
    const result = JSON.parse(readFileSync(resultFile, 'utf8'));
    expect({ code, error: result.error, output: code === 0 ? '' : output }).toEqual({ code: 0, error: undefined, output: '' });

    expect(result.steps).toEqual([
      'initialized',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'chose Buckley: explain this',
      'answer on hover',
      'hover window',
    ]);
    expect(result.offered).toEqual(['Buckley: explain this', 'Buckley: find problems', 'Buckley: fix problems here']);
    expect(result.nvim).toMatch(/^0\.\d+\.\d+$/);
    expect(result.hover).toContain('You asked: Explain what this code does and why.');
    expect(result.hover).toContain('starts with `export function backoff');
    expect(result.float).toContain('You asked: Explain what this code does and why.');
    expect(result.file_unchanged).toBe(true);
  });
});
