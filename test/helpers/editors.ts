/**
 * The real editors the end-to-end tests drive, and how to get them: `npm run install-editors`
 * (scripts/install-editors.mjs) puts them in `.editors/`; an environment variable points a test at
 * another build. A missing editor skips its tests with one line saying how to install it (the run
 * ends with the list, see test/globalSetup.ts); in CI a missing editor is an error.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { REPO } from './paths.js';

export interface Editor {
  /** As people call it: "Neovim 0.10". */
  name: string;
  /** The installer's name for it. */
  install: string;
  /** The command that runs it. */
  bin: string;
  /** Other programs its test needs (tmux for Helix). */
  needs?: string[];
  /** What `--version` (or `probe`) prints. */
  version: RegExp;
  probe?: string[];
}

const installed = (wrapper: string) => `${REPO}.editors/bin/${wrapper}`;
/** Debian 12's own Neovim is 0.7: the installer's wrapper, else `nvim` on PATH (its version is checked). */
const neovim07 = existsSync(installed('nvim-0.7')) ? installed('nvim-0.7') : 'nvim';

export const EDITORS = {
  nvim07: { name: 'Neovim 0.7', install: 'nvim-0.7', bin: process.env.BUCKLEY_NVIM ?? neovim07, version: /NVIM v0\.7\./ },
  nvim010: { name: 'Neovim 0.10', install: 'nvim-0.10', bin: process.env.BUCKLEY_NVIM_010 ?? installed('nvim-0.10'), version: /NVIM v0\.10\./ },
  nvim012: { name: 'Neovim 0.12', install: 'nvim-0.12', bin: process.env.BUCKLEY_NVIM_012 ?? installed('nvim-0.12'), version: /NVIM v0\.12\./ },
  helix: { name: 'Helix 25.01', install: 'helix-25.01', bin: process.env.BUCKLEY_HX ?? installed('hx-25.01'), needs: ['tmux'], version: /helix 25\.01/ },
  emacs: { name: 'Emacs 30.1 (eglot 1.17)', install: 'emacs-30.1', bin: process.env.BUCKLEY_EMACS ?? installed('emacs-30.1'), version: /^30\.1/, probe: ['-Q', '--batch', '--eval', '(princ emacs-version)'] },
  emacs28: {
    name: 'Emacs 28.2 (eglot 1.9)',
    install: 'emacs-28.2',
    bin: process.env.BUCKLEY_EMACS_28 ?? installed('emacs-28.2'),
    // eglot 1.9 says its version only in its directory's name (Debian's elpa-eglot).
    version: /^28\.2 eglot-1\.9$/,
    probe: ['-Q', '--batch', '--eval', '(progn (require (quote eglot)) (princ (format "%s %s" emacs-version (file-name-nondirectory (directory-file-name (file-name-directory (locate-library "eglot")))))))'],
  },
} satisfies Record<string, Editor>;

/** Whether the editor (and what its test needs) runs here. */
export function available(editor: Editor): boolean {
  const run = spawnSync(editor.bin, editor.probe ?? ['--version'], { encoding: 'utf8' });
  if (run.status !== 0 || !editor.version.test(`${run.stdout}${run.stderr}`)) return false;
  return (editor.needs ?? []).every((program) => spawnSync(program, ['-V']).status === 0);
}

/** The one line a missing editor is reported with. */
export function missingLine(editor: Editor): string {
  const needs = editor.needs?.length ? ` (and ${editor.needs.join(', ')})` : '';
  return `${editor.name}${needs} not found at ${editor.bin}: install it with \`npm run install-editors -- ${editor.install}\``;
}

/** For a test file: whether to run its editor's tests (CI must have every editor). */
export function requireEditor(editor: Editor): boolean {
  const ok = available(editor);
  if (!ok && process.env.CI) throw new Error(`${missingLine(editor)} — CI must install it (.ci/run)`);
  return ok;
}
