/**
 * A real editor: headless Neovim (Debian's `neovim`, 0.7.2 on Debian 12) runs the Lua scripts in
 * test/nvim, which start the built server and drive it through Neovim's own UI paths (visual
 * selection, the code-action menu, hover, the progress machinery). Everything asserted here is
 * what Neovim itself received and showed.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { BIN, FIXTURES, REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

/** The Neovims to test: Debian 12's own (0.7.2) and 0.10, as `npm run install-editors` installs them. */
const NEOVIMS = [EDITORS.nvim07, EDITORS.nvim010].map((editor) => ({ ...editor, ok: requireEditor(editor) }));

async function runNvimIn(nvimBin: string, script: string): Promise<any> {
  const dir = tempDir('buckley-nvim');
  const resultFile = join(dir, 'result.json');
  const nvim = spawn(nvimBin, ['--headless', '-n', '-i', 'NONE', '-u', 'NONE', '-c', `luafile ${REPO}test/nvim/${script}`], {
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
      BUCKLEY_REPO: REPO,
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

for (const editor of NEOVIMS) {
  if (!editor.ok) it.skip(missingLine(editor), () => {});
}

describe.each(NEOVIMS.filter((editor) => editor.ok))('$name (real editor)', ({ bin, version }) => {
  const runNvim = async (script: string) => {
    const result = await runNvimIn(bin, script);
    expect(`NVIM v${result.nvim}`).toMatch(version);
    return result;
  };
  it('offers code actions whose titles were cut between characters, never inside an emoji', async () => {
    const result = await runNvim('emoji.lua');
    expect(result.steps).toEqual(['initialized', expect.stringMatching(/^selected lines 1-2$/), 'chose Buckley: explain this', 'code actions offered']);
    const ask = result.offered.find((title: string) => title.startsWith('Buckley: ask «'));
    expect(ask).toBe(`Buckley: ask «${'x'.repeat(48)}…»`);
    expect(result.offered).toContain('Buckley: explain this');
  });

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
    // The code stays where it was, in the current window.
    expect(result.current_buffer).toMatch(/fixtures\/workspace\/retry\.ts$/);
    if (result.nvim.startsWith('0.7')) {
      // No window/showDocument in 0.7: hover is where the answer is.
      expect(result.shown_buffer).toBeUndefined();
      expect(result.windows).toBe(1);
    } else {
      // 0.10 opens the answer document beside the code (window/showDocument, takeFocus false).
      expect(result.shown_buffer).toMatch(/buckley-lsp\/answers\/.*-explain-what-this-code-does-and-why\.md$/);
      expect(result.shown_text).toContain('# Explain what this code does and why.');
      expect(result.windows).toBe(2);
    }
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
    expect(result.prompt).toEqual({
      message: 'Buckley: scripted-agent.mjs wants to use Edit config.json (risk: medium — edits files). Parameters: path=config.json, content={}.',
      actions: ['1. Approve', '2. Approve & trust', '3. Deny'],
    });
    // The agent got the approval (and its read was approved by the default policy, unasked).
    expect(result.hover).toContain('Permission to read: yes; permission to edit: yes.');
    const titles = new Set(result.progress.map((p: any) => p.title));
    expect([...titles]).toEqual(['Buckley: Fix the problems in this code.']);
    expect(result.progress.at(-1)).toMatchObject({ done: true, message: 'Done' });
    expect(result.progress.some((p: any) => !p.done)).toBe(true);
    expect(result.file_unchanged).toBe(true);
    expect(result.client_alive).toBe(true);
  });

  it('with the Lua module: :BuckleyAsk shows the answer in a split; a task asks approval through vim.ui.select and completes', async () => {
    const result = await runNvim('module.lua');
    expect(result.steps).toEqual([
      'started by the module',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'answer in a scratch split',
      'approval asked through vim.ui.select',
      'task completed',
    ]);
    expect(result.answer_filetype).toBe('markdown');
    expect(result.answer_lines[0]).toBe('# What does backoff do?');
    expect(result.answer_lines.join('\n')).toContain('The selection has 2 line(s) and starts with `export function backoff');
    expect(result.approval.items).toEqual(['Approve', 'Approve & trust', 'Deny']);
    expect(result.approval.prompt).toContain('Buckley: scripted-agent.mjs wants to use Edit config.json (risk: medium — edits files).');
    expect(result.approval.statusline).toMatch(/^Buckley: Waiting for your approval: Edit config\.json \(medium\)/);
    expect(result.task).toMatchObject({ status: 'completed', progress: 100, title: 'Tidy this function' });
    expect(result.statusline_after).toBe('');
    expect(result.hover).toContain('Permission to read: yes; permission to edit: yes.');
    // $/buckley/taskProgress reached vim.notify: the task's end was announced.
    expect(result.notifications).toContain('Buckley: task completed: Done');
  });
});
