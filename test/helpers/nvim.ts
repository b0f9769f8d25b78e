/** Headless Neovim running the Lua scripts of test/nvim (see test/nvim/common.lua for their side). */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BIN, FIXTURES, REPO, SCRIPTED_AGENT } from './paths.js';
import { readmeSnippet, userPath } from './readme.js';
import { tempDir } from './temp.js';

/**
 * Runs test/nvim/`script` in a headless Neovim, with no init file or with the README's block
 * `readme` as init.lua (as a user pastes it: their clone's path for /path/to/buckley-lsp, and
 * `buckley-lsp` and `gemini` on PATH).
 */
export async function runNvimIn(nvimBin: string, script: string, readme?: string, env: Record<string, string> = {}): Promise<any> {
  const dir = tempDir('buckley-nvim');
  const resultFile = join(dir, 'result.json');
  let init = 'NONE';
  if (readme) {
    init = join(dir, 'init.lua');
    writeFileSync(init, readmeSnippet(readme).replaceAll('/path/to/buckley-lsp', REPO.replace(/\/$/, '')));
  }
  const nvim = spawn(nvimBin, ['--headless', '-n', '-i', 'NONE', '-u', init, '-c', `luafile ${REPO}test/nvim/${script}`], {
    cwd: REPO,
    env: {
      PATH: readme ? userPath() : process.env.PATH,
      BUCKLEY_README_SNIPPET: readme,
      HOME: dir,
      XDG_STATE_HOME: dir,
      XDG_CONFIG_HOME: dir,
      XDG_DATA_HOME: dir,
      BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}`,
      BUCKLEY_NODE: process.execPath,
      BUCKLEY_BIN: BIN,
      BUCKLEY_FIXTURE: `${FIXTURES}workspace/retry.ts`,
      BUCKLEY_NVIM_DIR: `${REPO}test/nvim`,
      BUCKLEY_REPO: REPO,
      BUCKLEY_NVIM_RESULT: resultFile,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  nvim.stdout.on('data', (chunk) => (output += chunk));
  nvim.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => nvim.once('exit', resolve));
  const result = JSON.parse(readFileSync(resultFile, 'utf8'));
  expect({ code, error: result.error, output: code === 0 ? '' : output }).toEqual({ code: 0, error: undefined, output: '' });
  expect(result.nvim).toMatch(/^0\.\d+\.\d+$/);
  return result;
}

