/**
 * Every code block of the READMEs is run by a test, as it is written: each is tagged
 * `<!-- snippet: NAME -->` and the test named here takes it with `readmeSnippet('NAME')` (the
 * quick start is CI's own commands). Blocks without a language (diagrams, usage, file trees) are
 * text, not code to run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REPO } from '../helpers/paths.js';
import { READMES, readmeSnippet, readmeSnippets } from '../helpers/readme.js';

/** Which test runs which block. */
const RUN_BY: Record<string, string> = {
  'quick-start': '.ci/run',
  install: 'test/integration/install.test.ts',
  'install-from-checkout': 'test/integration/install.test.ts',
  doctor: 'test/integration/install.test.ts',
  'doctor-settings': 'test/integration/install.test.ts',
  'neovim-module': 'test/nvim/neovim.test.ts',
  'neovim-plain': 'test/nvim/neovim.test.ts',
  'neovim-inline-completion': 'test/nvim/neovim012.test.ts',
  'helix-languages': 'test/helix/helix.test.ts',
  'helix-config': 'test/helix/helix.test.ts',
  'zed-settings': 'test/integration/zedSettings.test.ts',
  'zed-extension-settings': 'test/integration/zedSettings.test.ts',
  'emacs-eglot': 'test/emacs/emacs.test.ts',
  team: 'test/integration/teamEditors.test.ts',
  'zed-agent-server': 'test/integration/acpFace.test.ts',
  'jetbrains-acp': 'test/integration/acpFace.test.ts',
  'neovim-acp-plugins': 'test/integration/acpFace.test.ts',
  'emacs-agent-shell': 'test/integration/acpFace.test.ts',
  acpx: 'test/integration/acpxClient.test.ts',
};

const snippets = READMES.flatMap((readme) => readmeSnippets(readme).map((snippet) => ({ readme, ...snippet })));

describe('the READMEs', () => {
  it('tag every code block with a name, each name once', () => {
    const untagged = snippets.filter((snippet) => snippet.lang && !snippet.name).map(({ readme, line }) => `${readme}:${line}`);
    expect(untagged).toEqual([]);
    const names = snippets.flatMap((snippet) => (snippet.name ? [snippet.name] : []));
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual(Object.keys(RUN_BY).sort());
  });

  it.each(Object.entries(RUN_BY).filter(([name]) => name !== 'quick-start'))('have %s run by %s', (name, file) => {
    expect(readFileSync(`${REPO}${file}`, 'utf8')).toContain(`'${name}'`);
  });

  it("have the quick start's commands run by CI", () => {
    const ci = readFileSync(`${REPO}.ci/run`, 'utf8');
    const commands = readmeSnippet('quick-start')
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter(Boolean)
      .flatMap((line) => line.split('&&').map((command) => command.trim()));
    expect(commands).toEqual(['npm ci', 'npm run demo', 'npm ci', 'npm test']);
    for (const command of commands) expect(ci).toMatch(new RegExp(`^[^#\\n]*${command.replace(/ /g, '\\s+(?:\\S+\\s+)*?')}\\b`, 'm'));
  });
});
