/**
 * A real editor: headless Neovim (Debian's `neovim`, 0.7.2 on Debian 12) runs the Lua scripts in
 * test/nvim, which start the built server and drive it through Neovim's own UI paths (visual
 * selection, the code-action menu, hover, the progress machinery). Everything asserted here is
 * what Neovim itself received and showed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, FIXTURES, REPO, SCRIPTED_AGENT } from '../helpers/paths.js';

const NVIM = process.env.BUCKLEY_NVIM ?? 'nvim';
const available = spawnSync(NVIM, ['--version']).status === 0;
// CI installs Neovim; on a developer machine without it these tests say so and skip.
if (!available && process.env.CI) throw new Error(`${NVIM} not found: CI must install Debian's neovim`);

async function runNvim(script: string): Promise<any> {
  const dir = mkdtempSync(join(tmpdir(), 'buckley-nvim-'));
  const resultFile = join(dir, 'result.json');
  const nvim = spawn(NVIM, ['--headless', '-n', '-i', 'NONE', '-u', 'NONE', '-c', `luafile ${REPO}test/nvim/${script}`], {
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
      BUCKLEY_NVIM_DIR: `${REPO}test/nvim`,
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
  expect(result.nvim).toMatch(/^0\.\d+\.\d+$/);
  return result;
}

describe.skipIf(!available)('Neovim (real editor)', () => {
  it('runs "Buckley: explain this" on selected lines and shows the answer on hover', async () => {
    const result = await runNvim('explain.lua');
    expect(result.steps).toEqual([
      'initialized',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'chose Buckley: explain this',
      'answer on hover',
      'hover window',
    ]);
    expect(result.offered).toEqual(['Buckley: explain this', 'Buckley: find problems', 'Buckley: fix problems here']);
    expect(result.hover).toContain('You asked: Explain what this code does and why.');
    expect(result.hover).toContain('starts with `export function backoff');
    expect(result.float).toContain('You asked: Explain what this code does and why.');
    expect(result.file_unchanged).toBe(true);
  });

  it('runs "Buckley: fix problems here" as a task and follows its $/progress to the end', async () => {
    const result = await runNvim('task.lua');
    expect(result.steps).toEqual([
      'initialized',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'chose Buckley: fix problems here',
      'approved in the prompt',
      'progress ended',
    ]);
    // The prompt showed what will run, its risk and the agent, with the three choices.
    expect(result.prompt[0]).toBe('Buckley: scripted-agent.mjs wants to use Edit config.json (risk: medium). Parameters: path=config.json, content={}.');
    expect(result.prompt.slice(1)).toEqual(['\nRequest Actions:', '1. Approve', '2. Approve & trust', '3. Deny']);
    // The agent got the approval (and its read was approved by the default policy, unasked).
    expect(result.hover).toContain('Permission to read: yes; permission to edit: yes.');
    const titles = new Set(result.progress.map((p: any) => p.title));
    expect([...titles]).toEqual(['Buckley: Fix the problems in this code.']);
    expect(result.progress.at(-1)).toMatchObject({ done: true, message: 'Done' });
    expect(result.progress.some((p: any) => !p.done)).toBe(true);
    expect(result.file_unchanged).toBe(true);
    expect(result.client_alive).toBe(true);
  });
});
