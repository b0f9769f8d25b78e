/**
 * A real LSP 3.18 editor: Neovim 0.12 (Debian sid's, installed into .editors/ by `npm run
 * install-editors`), headless, with vim.lsp.inline_completion: the completion of a local HTTP
 * server speaking the OpenAI completions API appears as virtual text in insert mode and is
 * accepted into the buffer.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { completionServer } from '../helpers/openai.js';
import { runNvimIn } from '../helpers/nvim.js';
import { readmeSnippet } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';

const available = requireEditor(EDITORS.nvim012);
if (!available) it.skip(missingLine(EDITORS.nvim012), () => {});

if (available) describe('Neovim 0.12 (real editor)', () => {
  it("with the README's snippet: shows an inline completion as virtual text in insert mode, and <Tab> accepts it", async () => {
    const model = await completionServer({ ways: ['completions'], reply: () => 'a + b;' });
    const dir = tempDir('buckley-nvim012');
    const file = join(dir, 'add.ts');
    writeFileSync(file, 'export function add(a: number, b: number): number {\n  return \n}\n');
    const init = join(dir, 'inline-completion.lua');
    writeFileSync(init, readmeSnippet('neovim-inline-completion'));
    const result = await runNvimIn(EDITORS.nvim012.bin, 'inline-completion.lua', undefined, { BUCKLEY_FIXTURE: file, BUCKLEY_MODEL_URL: model.url, BUCKLEY_README_INIT: init });
    expect(result.nvim).toMatch(/^0\.12\./);
    expect(result.steps).toEqual(['initialized', 'shown as virtual text', 'accepted']);
    expect(result.provider).toBe(true);
    expect(result.enabled).toBe(true);
    expect(result.virtual_text).toBe('a + b;');
    // Shown, not inserted, until accepted; <Tab> inserted no tab.
    expect(result.line_while_shown).toBe('  return ');
    expect(result.line).toBe('  return a + b;');
    expect(result.mode).toBe('i');
    // The model was asked with the code before and after the cursor.
    expect(model.calls[0]!.body).toMatchObject({ prompt: 'export function add(a: number, b: number): number {\n  return ', suffix: '\n}\n' });
  });
});
