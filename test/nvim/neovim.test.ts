/**
 * A real editor: headless Neovim (Debian's `neovim`, 0.7.2 on Debian 12) runs the Lua scripts in
 * test/nvim, which start the built server and drive it through Neovim's own UI paths (visual
 * selection, the code-action menu, hover, the progress machinery). Everything asserted here is
 * what Neovim itself received and showed.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { FIXTURES, SCRIPTED_AGENT } from '../helpers/paths.js';
import { runNvimIn } from '../helpers/nvim.js';
import { tempDir } from '../helpers/temp.js';

/** The Neovims to test: Debian 12's own (0.7.2) and 0.10, as `npm run install-editors` installs them. */
const NEOVIMS = [EDITORS.nvim07, EDITORS.nvim010].map((editor) => ({ ...editor, ok: requireEditor(editor) }));

for (const editor of NEOVIMS) {
  if (!editor.ok) it.skip(missingLine(editor), () => {});
}

describe.each(NEOVIMS.filter((editor) => editor.ok))('$name (real editor)', ({ bin, version }) => {
  const runNvim = async (script: string, readme?: string, env?: Record<string, string>) => {
    const result = await runNvimIn(bin, script, readme, env);
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

  it("lands an agent's approved write in the open buffer next to the user's unsaved line, leaves the disk alone, and `u` takes it back", async () => {
    const workspace = tempDir('buckley-nvim-write');
    const file = join(workspace, 'retry.ts');
    copyFileSync(`${FIXTURES}workspace/retry.ts`, file);
    const original = readFileSync(file, 'utf8');
    const result = await runNvim('write.lua', undefined, { BUCKLEY_FIXTURE: file });
    expect(result.steps).toEqual(['initialized', 'typed a line', 'the agent changed the buffer', 'undone']);
    expect(result.prompt).toContain('wants to use Write retry.ts');
    expect(result.prompt).toContain('change=+1 −1 lines');
    expect(result.first_line).toBe('// mine, unsaved');
    expect(result.changed_line).toBe('export async function withRetry<T>(attempt: () => Promise<T>, tries = 5): Promise<T> {');
    expect(result.same_as_disk_but_the_two_lines).toBe(true);
    expect(result.modified).toBe(true);
    expect(result.disk_unchanged).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(original);
    if (!version.test('NVIM v0.7.2')) expect(result.diff_opened).toContain('+export async function withRetry<T>(attempt: () => Promise<T>, tries = 5): Promise<T> {');
    expect(result.after_undo_first_line).toBe('// mine, unsaved');
    expect(result.after_undo_has_agent_change).toBe(false);
    expect(result.after_undo_has_original).toBe(true);
  });

  it('with the Lua module: :BuckleyEdit on selected lines lands the approved change in the buffer, :BuckleyUndoEdits takes it back', async () => {
    const workspace = tempDir('buckley-nvim-edit');
    const file = join(workspace, 'retry.ts');
    copyFileSync(`${FIXTURES}workspace/retry.ts`, file);
    const result = await runNvim('module-edit.lua', undefined, { BUCKLEY_FIXTURE: file });
    expect(result.steps).toEqual(['started by the module', expect.stringMatching(/^selected lines \d+-\d+$/), 'edited', 'undone']);
    // (the module's workspace is Neovim's working directory here, so the file is outside it)
    expect(result.approval.prompt).toMatch(/wants to use Write \S*retry\.ts .*change = "\+1 −0 lines"/);
    expect(result.edited).toBe(result.before.replace('export function backoff', '// say what it waits\nexport function backoff'));
  });

  it('follows up in the answer document (0.10: opened with window/showDocument): the question written below its last line, "Buckley: follow up", the answer appended to the buffer', async () => {
    if (version.test('NVIM v0.7.2')) return; // no window/showDocument: the module's answer split is its conversation (next test)
    const result = await runNvim('follow-up.lua');
    expect(result.steps).toEqual(['initialized', expect.stringMatching(/^selected lines \d+-\d+$/), 'chose Buckley: explain this', 'answer document opened', 'chose Buckley: follow up «RECALL what came before»', 'answer appended']);
    expect(result.text.startsWith('# Explain what this code does and why.\n')).toBe(true);
    // (the answer wrapped, as documents are for editors that do not wrap)
    expect(result.text.replace(/\s+/g, ' ').trim()).toMatch(/ ## RECALL what came before \*[^*]+\* recall: turn 2 of this session; earlier questions: \[Explain what this code does and why\.\] --- \*Follow up: write your question below this line[^*]+\*$/);
    // In the buffer, for the user to keep or not; the disk has the first answer only; no new window.
    expect(result.modified).toBe(true);
    expect(result.on_disk).not.toContain('RECALL');
    expect(result.windows).toBe(2);
    expect(result.code_unchanged).toBe(true);
  });

  it.runIf(version.source.includes('10'))("the agent's controls: its /commands completed in the answer document (omnifunc), its model chosen in Neovim's own prompt and used by the next answer", async () => {
    const result = await runNvim('controls.lua', undefined, { BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT} --controls` });
    expect(result.steps).toEqual([
      'initialized',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'chose Buckley: explain this',
      'answer document opened',
      'command completed',
      'model chosen',
      expect.stringMatching(/^selected lines \d+-\d+$/),
      'chose Buckley: find problems',
      'answered by the chosen model',
    ]);
    expect(result.answer_model).toBe('swift');
    expect(result.completion_items).toEqual(['/review ']);
    expect(result.completed_line).toBe('/review ');
    expect(result.choose_title).toBe('Buckley: choose model (now Swift)');
    expect(result.prompted).toEqual(['Swift (now)', 'Deep Thought']);
    expect(result.confirmed).toBe('model: Deep Thought from now on (scripted-agent.mjs)');
    expect(result.second_model).toBe('deep');
  });

  it("lets the agent's editor tools read the buffer as typed, and says which files have unsaved edits until :write", async () => {
    const dir = tempDir('buckley-nvim-editor-tools');
    const file = join(dir, 'retry.ts');
    copyFileSync(join(FIXTURES, 'workspace', 'retry.ts'), file);
    const result = await runNvim('editor-tools.lua', undefined, { BUCKLEY_FIXTURE: file });
    expect(result.steps).toEqual(['initialized', 'asked with an unsaved line', 'asked after :write']);
    expect(result.unsaved).toContain('open: Open in the editor:\nretry.ts (typescript) — unsaved edits');
    expect(result.unsaved).toContain('read: // typed in Neovim, not saved\n');
    expect(result.saved).toContain('open: Open in the editor:\nretry.ts (typescript)\n');
    expect(readFileSync(file, 'utf8')).toMatch(/^\/\/ typed in Neovim, not saved\n/);
  });

  it.runIf(version.source.includes('10'))("puts the agent's question to the user in Neovim's own prompt (vim.ui.select): the agent gets the answer picked", async () => {
    const result = await runNvim('questions.lua');
    expect(result.steps).toEqual(['initialized', 'picked Chocolate', 'answered']);
    expect(result.prompt).toMatch(/^Buckley: Which one\? \(pick\)/);
    expect(result.offered).toEqual(['Vanilla', 'Chocolate', 'Strawberry']);
    expect(result.answer).toContain('elicitation: accept {"flavour":"c"}');
  });

  it.runIf(version.source.includes('10'))("marks each change of a task in the buffer: one undone, one kept, with Neovim's code-action menu", async () => {
    const dir = tempDir('buckley-nvim-review');
    const file = join(dir, 'retry.ts');
    copyFileSync(join(FIXTURES, 'workspace', 'retry.ts'), file);
    const original = readFileSync(file, 'utf8');
    const changed = original.replace('tries = 3', 'tries = 5').replace('return 2 ** attempt * 100;', 'return 2 ** attempt * 200;');
    const result = await runNvim('review.lua', undefined, { BUCKLEY_FIXTURE: file, BUCKLEY_WRITE_TASK: `WRITE ${file} ${JSON.stringify(changed)}` });
    expect(result.steps).toEqual(['initialized', 'changes marked', 'chose Buckley: undo this change (+1 −1)', 'one change undone', 'chose Buckley: keep this change (+1 −1)', 'the other kept']);
    expect(result.marked[0]).toContain('tries = 5');
    expect(result.marked[1]).toContain('2 ** attempt * 200');
    expect(result.undone_line).toContain('2 ** attempt * 100');
    expect(result.kept_line).toContain('tries = 5');
    // In the buffer, for the user to save; the disk as it was.
    expect(result.modified).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it('with the Lua module: :BuckleyAsk in the answer split follows the conversation up, in the same agent session, and appends the answer there; :BuckleyConversations lists it', async () => {
    const result = await runNvim('module-conversation.lua');
    expect(result.steps).toEqual(['started by the module', expect.stringMatching(/^selected lines \d+-\d+$/), 'answered in a split', 'followed up in the split']);
    expect(result.text.startsWith('# What does backoff do?\n')).toBe(true);
    expect(result.text).toContain('\n---\n\n## RECALL what came before\n\nrecall: turn 2 of this session; earlier questions: [What does backoff do?]');
    expect(result.same_buffer).toBe(true);
    // The follow-up opened no window of its own: the code and the one answer split.
    expect(result.windows).toBe(2);
    expect(result.conversations).toEqual([expect.objectContaining({ title: 'What does backoff do?', turns: 2 })]);
    expect(result.listing).toContain('- What does backoff do? — 2 turn(s)');
  });

  it("with the Lua module: the agent's question that needs typing comes through vim.ui.input, and the text typed reaches the agent", async () => {
    const result = await runNvim('module-question.lua');
    expect(result.steps).toEqual(['started by the module', expect.stringMatching(/^selected lines \d+-\d+$/), 'asked through vim.ui.input', 'answered']);
    expect(result.prompt).toBe('Buckley: Which one? (text) (Your name): ');
    expect(result.answer_lines.join('\n')).toContain('elicitation: accept {"name":"Ada Lovelace"}');
  });

  it('with the Lua module: :BuckleyAsk typed as Neovim starts the server is answered about the selected lines (the file read from disk, not yet opened)', async () => {
    const result = await runNvim('module-early.lua');
    expect(result.steps).toEqual([expect.stringMatching(/^selected lines \d+-\d+$/), 'asked while the server started', 'answered']);
    expect(result.answer_lines.join('\n')).toContain('The selection has 2 line(s) and starts with `export function backoff');
    // The module's default `settings = {}` reaches the server as `[]` (Lua's empty table): no warning about it.
    expect(result.notifications.filter((shown: string) => /expected/.test(shown))).toEqual([]);
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

  it("with the README's plain vim.lsp init: V, <leader>a and \"explain this\" answer about the selected lines; K shows it", async () => {
    const result = await runNvim('readme.lua', 'neovim-plain');
    expect(result.steps).toEqual(['started by the snippet', 'chose Buckley: explain this', 'answer in', 'K shows the answer']);
    expect(result.offered).toEqual(['Buckley: explain this', 'Buckley: find problems', 'Buckley: fix problems here']);
    // The mapping kept the selection: the agent got both selected lines.
    expect(result.hover).toContain('The selection has 2 line(s) and starts with `export function backoff');
    expect(result.float).toContain('You asked: Explain what this code does and why.');
  });

  it("with the README's module init: the same, and the statusline it added (keeping Neovim's own) shows the task's step; :BuckleyLog opens the log", async () => {
    const result = await runNvim('readme.lua', 'neovim-module');
    expect(result.steps).toEqual([
      'started by the snippet',
      'chose Buckley: explain this',
      'answer in',
      'K shows the answer',
      'chose Buckley: fix problems here',
      'approval asked',
      'task completed',
      'log opened',
    ]);
    expect(result.hover).toContain('The selection has 2 line(s) and starts with `export function backoff');
    expect(result.float).toContain('You asked: Explain what this code does and why.');
    // Neovim's own statusline (file name, flags, ruler) with the task's step added before the ruler.
    expect(result.statusline_option).toBe("%<%f %h%m%r%=%{v:lua.require'buckley'.statusline()} %-14.(%l,%c%V%) %P");
    expect(result.statusline_shown).toMatch(/retry\.ts .*Buckley: Waiting for your approval: Edit config\.json \(medium\).* \d+,\d+ +\w+$/);
    expect(result.log_lines.join('\n')).toMatch(/\[info\] buckley-lsp \S+ serving Neovim/);
    expect(result.log_windows).toBe(2);
  });
});
