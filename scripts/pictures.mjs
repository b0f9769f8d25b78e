#!/usr/bin/env node
/**
 * `npm run pictures`: the docs' pictures of what each editor shows, made from the real-editor
 * tests' own screens (Helix's, and Neovim's and Emacs' in a terminal) — the tests run with BUCKLEY_PICTURES_DIR set capture theirs (tmux's
 * `capture-pane -e`), drawn here as SVG into docs/pictures/. Run it again when what an editor
 * shows changes; nothing is drawn by hand.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { screenToSvg } from './ansiSvg.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const captured = mkdtempSync(join(tmpdir(), 'buckley-pictures-'));
const tests = process.argv.slice(2).length ? process.argv.slice(2) : ['test/helix', 'test/nvim/neovimScreen.test.ts', 'test/emacs/emacsScreen.test.ts'];
const run = spawnSync('npx', ['vitest', 'run', ...tests], { cwd: repo, stdio: 'inherit', env: { ...process.env, BUCKLEY_PICTURES_DIR: captured } });
const screens = readdirSync(captured).filter((name) => name.endsWith('.ansi'));
if (run.status !== 0 || screens.length === 0) {
  console.error(`pictures: the editor tests ${run.status !== 0 ? 'failed' : 'captured nothing (are the editors installed? npm run install-editors)'}: no picture changed`);
  process.exit(1);
}
const out = join(repo, 'docs', 'pictures');
mkdirSync(out, { recursive: true });
for (const name of screens) {
  const base = name.slice(0, -'.ansi'.length);
  const title = readFileSync(join(captured, `${base}.title`), 'utf8');
  writeFileSync(join(out, `${base}.svg`), screenToSvg(readFileSync(join(captured, name), 'utf8'), title));
  console.log(`pictures: docs/pictures/${base}.svg — ${title}`);
}
rmSync(captured, { recursive: true, force: true });
