/**
 * Emacs 30 (eglot 1.17) as a user sees it: in a terminal (tmux), the README's eglot block in its
 * init with `eglot-ensure` — a region, `M-x eglot-code-actions`, "Buckley: explain this"; the
 * answer document opens in the other window. Everything asserted is on the screen (and, with
 * `npm run pictures`, kept as the docs' picture).
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

it.runIf(available)('explains a region: the answer document opens in the other window, the summary in the echo area', async () => {
  const home = tempDir('buckley-emacs-screen');
  const init = join(home, 'init.el');
  // The README's block, and what a user has around it: TypeScript files in a prog-mode, eglot started in them.
  writeFileSync(init, `${readmeSnippet('emacs-eglot')}\n(add-to-list 'auto-mode-alist '("\\\\.ts\\\\'" . js-mode))\n(add-hook 'prog-mode-hook #'eglot-ensure)\n(setq inhibit-startup-screen t)\n`);
  const env = `PATH=${userPath()} HOME=${home} XDG_STATE_HOME=${home}/state XDG_CONFIG_HOME=${home}/config TERM=xterm-256color`;
  const session = startSession('emacs-screen', `env ${env} ${EMACS.bin} -nw -Q -l ${init} ${FIXTURES}workspace/retry.ts`, 150, 40);
  await waitForScreen(session, /eglot:.*buckley-lsp|\[eglot:/);
  // The region: the lines of backoff.
  keys(session, 'M-g', 'g', '17', 'Enter', 'C-Space', 'C-n', 'C-n');
  keys(session, 'M-x', 'eglot-code-actions', 'Enter');
  await waitForScreen(session, 'Pick an action');
  keys(session, 'Buckley: explain this', 'Enter');
  const shown = await waitForScreen(session, '# Explain what this code does and why.');
  expect(shown).toMatch(/export function backoff[\s\S]*# Explain what this code does and why\./);
  await waitForScreen(session, 'answered «Explain what this code does and…»');
  picture(session, 'emacs-answer', 'Emacs 30 (eglot): the answer document opened in the other window, the summary in the echo area');
});
