/**
 * Emacs 30 (eglot 1.17) as a user sees it: in a terminal (tmux), the README's eglot block in its
 * init with `eglot-ensure` — a region, `M-x eglot-code-actions`, "Buckley: explain this"; the
 * answer document opens in the other window. A task's approval: a flymake warning on the code and
 * a message saying where, approved with the code action there. Everything asserted is on the
 * screen (and, with `npm run pictures`, kept as the docs' pictures).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { FIXTURES } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';
import { endSessions, keys, picture, startSession, waitForScreen } from '../helpers/tmux.js';

const EMACS = { ...EDITORS.emacs, needs: ['tmux'] };
const available = requireEditor(EMACS);
if (!available) it.skip(missingLine(EMACS), () => {});

afterEach(endSessions);

/** Emacs on the fixture, the README's eglot block in its init; once eglot has started buckley-lsp. */
async function startEmacs(name: string): Promise<string> {
  const home = tempDir('buckley-emacs-screen');
  const init = join(home, 'init.el');
  // The README's block, and what a user has around it: TypeScript files in a prog-mode, eglot started in them.
  writeFileSync(init, `${readmeSnippet('emacs-eglot')}\n(add-to-list 'auto-mode-alist '("\\\\.ts\\\\'" . js-mode))\n(add-hook 'prog-mode-hook #'eglot-ensure)\n(setq inhibit-startup-screen t)\n`);
  const env = `PATH=${userPath()} HOME=${home} XDG_STATE_HOME=${home}/state XDG_CONFIG_HOME=${home}/config TERM=xterm-256color`;
  const session = startSession(name, `env ${env} ${EMACS.bin} -nw -Q -l ${init} ${FIXTURES}workspace/retry.ts`, 150, 40);
  await waitForScreen(session, /eglot:.*buckley-lsp|\[eglot:/);
  return session;
}

/** The lines of backoff as the region, and `title` picked from eglot's code actions there. */
async function codeAction(session: string, title: string): Promise<void> {
  keys(session, 'M-g', 'g', '17', 'Enter', 'C-Space', 'C-n', 'C-n');
  keys(session, 'M-x', 'eglot-code-actions', 'Enter');
  await waitForScreen(session, 'Pick an action');
  keys(session, title, 'Enter');
}

it.runIf(available)('explains a region: the answer document opens in the other window, the summary in the echo area', async () => {
  const session = await startEmacs('emacs-screen');
  await codeAction(session, 'Buckley: explain this');
  const shown = await waitForScreen(session, '# Explain what this code does and why.');
  expect(shown).toMatch(/export function backoff[\s\S]*# Explain what this code does and why\./);
  await waitForScreen(session, 'answered «Explain what this code does and…»');
  picture(session, 'emacs-answer', 'Emacs 30 (eglot): the answer document opened in the other window, the summary in the echo area');
});

it.runIf(available)("waits for the user's approval of a task's edit: a warning on the code, a message saying where; approved with the code action there", async () => {
  const session = await startEmacs('emacs-approval');
  await codeAction(session, 'Buckley: fix problems here');
  // The message says where to answer; flymake counts the warning in the mode line.
  const waiting = await waitForScreen(session, 'retry.ts:17: approve or deny Edit config.json');
  expect(waiting).toContain('Flymake[0 1]');
  // The list of the buffer's problems has it in words: what, by which agent, its risk.
  keys(session, 'M-x', 'flymake-show-buffer-diagnostics', 'Enter');
  await waitForScreen(session, /17 +0 warning .*buckley \[approval\]: Buckley: .* wants to use Edit config\.json \(risk: medium/);
  picture(session, 'emacs-approval', "Emacs 30 (eglot): a task waiting for your approval — a warning on the code, flymake's list saying what it is");
  // Approved where it is: the task goes on and ends, its answer opened, the warning gone.
  keys(session, 'M-g', 'g', '17', 'Enter');
  keys(session, 'M-x', 'eglot-code-actions', 'Enter');
  await waitForScreen(session, 'Pick an action (default Buckley: approve «Edit config.json» (medium))');
  keys(session, 'Enter');
  await waitForScreen(session, '# Fix the problems in this code.');
  await waitForScreen(session, 'Flymake[0 0]');
});
