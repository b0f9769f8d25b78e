/**
 * Neovim 0.10 as a user sees it: in a terminal (tmux), with the README's module as its init.lua —
 * select lines and `:BuckleyAsk`: the answer opens in a split below the code; `<leader>a` and a pick
 * from the menu Neovim draws start a task;
 * a task's approval is a prompt with its risk in words. Everything asserted is on the screen
 * (and, with `npm run pictures`, kept as the docs' pictures).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { FIXTURES, REPO } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';
import { endSessions, keys, picture, startSession, waitForScreen } from '../helpers/tmux.js';

const NVIM = { ...EDITORS.nvim010, needs: ['tmux'] };
const available = requireEditor(NVIM);
if (!available) it.skip(missingLine(NVIM), () => {});

afterEach(endSessions);

/** Neovim on the fixture, the README's module as init.lua, `buckley-lsp` and `gemini` on PATH. */
function startNeovim(name: string): string {
  const home = tempDir('buckley-nvim-screen');
  const init = join(home, 'init.lua');
  writeFileSync(init, readmeSnippet('neovim-module').replaceAll('/path/to/buckley-lsp', REPO.replace(/\/$/, '')));
  const env = `PATH=${userPath()} HOME=${home} XDG_STATE_HOME=${home}/state XDG_CONFIG_HOME=${home}/config XDG_DATA_HOME=${home}/data TERM=xterm-256color`;
  return startSession(name, `env ${env} ${NVIM.bin} -n -i NONE -u ${init} ${FIXTURES}workspace/retry.ts`, 150, 40);
}

/** Picks `title` from the menu Neovim shows (vim.ui.select: a numbered list), by its number. */
async function pick(session: string, title: string): Promise<void> {
  const menu = await waitForScreen(session, title);
  const number = new RegExp(`^(\\d+): ${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm').exec(menu)?.[1];
  expect(number, `no numbered "${title}" in:\n${menu}`).toBeDefined();
  keys(session, number!, 'Enter');
}

/** Selects the lines of `backoff` and opens Buckley's code actions (`<leader>a`, the README's key). */
function selectAndAsk(session: string): void {
  keys(session, 'Escape', ':17', 'Enter', 'V', 'j');
  keys(session, '\\', 'a');
}

it.runIf(available)('shows the answer beside the code, and a task waiting for your approval with its risk in words', async () => {
  const session = startNeovim('nvim-screen');
  await waitForScreen(session, 'export function backoff');
  // The README's `:'<,'>BuckleyAsk …`: the answer in a split below the code.
  keys(session, ':17', 'Enter', 'V', 'j', ':');
  keys(session, 'BuckleyAsk Explain what this retry waits for', 'Enter');
  const answered = await waitForScreen(session, '# Explain what this retry waits for');
  // Beside the code: two windows, the code still there.
  expect(answered).toMatch(/export function backoff[\s\S]*# Explain what this retry waits for/);
  picture(session, 'neovim-answer', "Neovim 0.10 with the README's module: :BuckleyAsk's answer in a split below the code");

  // Back to the code (the answer's split took the focus), and a task on the same lines.
  keys(session, 'C-w', 'k');
  selectAndAsk(session);
  await pick(session, 'Buckley: fix problems here');
  const asked = await waitForScreen(session, 'Type number and <Enter>');
  expect(asked).toContain('Gemini CLI wants to use Edit config.json (risk: medium — edits files)');
  // The statusline (the README's `statusline = true`) says what the task waits for.
  expect(asked).toMatch(/Buckley: Waiting for your approval: Edit config\.json \(medium\)/);
  picture(session, 'neovim-approval', "Neovim 0.10: a task's approval, its risk in words, the statusline saying what it waits for");
  await pick(session, 'Approve');
  // Done: the answer on hover, the message says so.
  await waitForScreen(session, /done «Fix the problems in this code\.?…?»/);
});
