/**
 * A real editor: Helix 25.01 (Debian's, installed into .editors/ by `npm run install-editors`)
 * driven in tmux with send-keys, read back with capture-pane. Everything asserted is what Helix
 * showed on its screen.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { FIXTURES } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';
import { endSessions, picture, screen, startSession, tmux, waitForScreen } from '../helpers/tmux.js';

const HX = EDITORS.helix.bin;
const available = requireEditor(EDITORS.helix);
if (!available) it.skip(missingLine(EDITORS.helix), () => {});

afterEach(endSessions);

/**
 * Starts Helix on the fixture with the README's languages.toml and config.toml, as a user has
 * them: `buckley-lsp` and `gemini` on PATH (typescript-language-server is not: Helix goes on
 * without it).
 */
function startHelix(name: string, file = `${FIXTURES}workspace/retry.ts`, cwd?: string, agentFlags: string[] = []): { session: string; home: string } {
  const home = tempDir('buckley-hx');
  mkdirSync(join(home, 'config', 'helix'), { recursive: true });
  writeFileSync(join(home, 'config', 'helix', 'languages.toml'), readmeSnippet('helix-languages'));
  writeFileSync(join(home, 'config', 'helix', 'config.toml'), readmeSnippet('helix-config'));
  const session = startSession(name, `env PATH=${userPath(agentFlags)} XDG_CONFIG_HOME=${home}/config XDG_STATE_HOME=${home}/state HOME=${home} TERM=xterm-256color ${HX} ${file}`, 160, 45, cwd);
  return { session, home };
}

/** Selects the two lines of `backoff` (its signature and return) as a user would: goto, x, x. */
function selectBackoff(session: string): void {
  tmux(session, 'send-keys', '-t', session, ':', 'goto 17', 'Enter');
  tmux(session, 'send-keys', '-t', session, 'x', 'x');
}

/**
 * Opens the code actions (space a) and picks the one whose title starts with `title`. Until the
 * server has started, Helix has no code actions to show: ask again until the menu holds it.
 */
async function codeAction(session: string, title: string): Promise<void> {
  let menu = '';
  for (let attempt = 0; attempt < 15 && !menu; attempt++) {
    tmux(session, 'send-keys', '-t', session, 'Space', 'a');
    menu = await waitForScreen(session, title, 2_000).catch(() => {
      tmux(session, 'send-keys', '-t', session, 'Escape');
      return '';
    });
  }
  if (!menu) menu = await waitForScreen(session, title, 1);
  const lines = menu.split('\n');
  // The menu's entries (not a document's text that names an action in quotes, as an answer's last line does).
  const entries = lines.filter((line) => /(?<!")Buckley: /.test(line));
  const index = entries.findIndex((line) => line.includes(title));
  for (let i = 0; i < index; i++) tmux(session, 'send-keys', '-t', session, 'Down');
  tmux(session, 'send-keys', '-t', session, 'Enter');
}

if (available) describe('Helix 25.01 (real editor)', () => {
  it('explains a selection: the answer opens in a split and the status line shows the summary', async () => {
    const { session } = startHelix('explain');
    await waitForScreen(session, 'export function backoff');
    selectBackoff(session);
    await codeAction(session, 'Buckley: explain this');
    // Helix 25.01 opens window/showDocument in a vertical split: the markdown answer is on screen.
    const shown = await waitForScreen(session, '# Explain what this code does and why.');
    expect(shown).toContain('You asked: Explain what this code does and why.');
    // Beside the code, which stays on screen: two panes, split by a vertical bar.
    expect(shown).toMatch(/export function backoff.*│.*\S/);
    expect(shown).toMatch(/starts with `export function backoff/);
    // ...and the status line shows the one-line summary.
    await waitForScreen(session, 'answered «Explain what this code does and…»: answer opened');
    picture(session, 'helix-answer', 'Helix: the answer opened beside the code, the summary in the status line');
  });

  it('follows up in the answer document: a question written below its last line and "Buckley: follow up" append the answer there', async () => {
    const { session } = startHelix('follow');
    await waitForScreen(session, 'export function backoff');
    selectBackoff(session);
    await codeAction(session, 'Buckley: explain this');
    await waitForScreen(session, '# Explain what this code does and why.');
    await waitForScreen(session, 'answer opened');
    // Helix focuses the document it opens: the question goes below its last line.
    tmux(session, 'send-keys', '-t', session, 'g', 'e', 'o', 'RECALL what came before', 'Escape');
    await waitForScreen(session, 'RECALL what came before');
    await codeAction(session, 'Buckley: follow up «RECALL what came before»');
    const shown = await waitForScreen(session, /recall: turn 2 of this session; earlier questions: \[Explain what/);
    // Under its question, now a heading, in the same document (still two panes).
    expect(shown).toMatch(/## RECALL what came before/);
    expect(shown).toMatch(/export function backoff.*│/);
  });

  it("chooses the agent's model and its tasks' mode with a code action each (Helix has no prompts): the next answer comes from the model", async () => {
    // The README's configuration, with the agent on PATH offering two models and three modes.
    const { session } = startHelix('model', undefined, undefined, ['--controls', '--modes']);
    await waitForScreen(session, 'export function backoff');
    selectBackoff(session);
    await codeAction(session, 'Buckley: explain this');
    // (the screen wraps the answer's last line: the model's id is what is looked for)
    await waitForScreen(session, /model swift\]/);
    await waitForScreen(session, 'answer opened');
    await codeAction(session, 'Buckley: use model Deep Thought');
    // (the agent on PATH is called gemini: the server names it as the agent it takes it for)
    await waitForScreen(session, 'model: Deep Thought from now on (Gemini CLI)');
    // A follow-up in the answer document: answered by the chosen model.
    tmux(session, 'send-keys', '-t', session, 'g', 'e', 'o', 'PLAN again', 'Escape');
    await waitForScreen(session, 'PLAN again');
    await codeAction(session, 'Buckley: follow up «PLAN again»');
    const shown = await waitForScreen(session, /model deep\]/);
    expect(shown).toMatch(/## PLAN again/);
    // The one model not in use is what the menu now offers.
    await codeAction(session, 'Buckley: use model Swift');
    await waitForScreen(session, 'model: Swift from now on (Gemini CLI)');
    // The mode tasks run in: one action per mode that asks first (never YOLO).
    await codeAction(session, 'Buckley: tasks in mode Plan');
    await waitForScreen(session, 'tasks in mode Plan from now on (Gemini CLI)');
  });

  it("answers the agent's question with a code action (Helix has no prompts): the agent gets the answer chosen", async () => {
    const workspace = tempDir('buckley-hx-question');
    const file = join(workspace, 'flavour.ts');
    writeFileSync(file, "// could you ASK USER pick?\nexport const flavour = '';\n");
    const { session } = startHelix('question', file, workspace);
    await waitForScreen(session, 'export const flavour');
    tmux(session, 'send-keys', '-t', session, 'x');
    await codeAction(session, 'Buckley: ask «could you ASK USER pick?»');
    // Helix's status line: the progress says what the agent asks (the message saying how to answer comes and goes).
    await waitForScreen(session, 'Question: Which one? (pick)');
    await codeAction(session, 'Buckley: answer «Which one? (pick)»: Chocolate');
    const shown = await waitForScreen(session, 'elicitation: accept');
    expect(shown).toContain('elicitation: accept {"flavour":"c"}');
  });

  it('runs a task: the approval arrives as a diagnostic with code actions, and the task ends', async () => {
    const { session } = startHelix('task');
    await waitForScreen(session, 'export function backoff');
    selectBackoff(session);
    await codeAction(session, 'Buckley: fix problems here');
    // The agent wants to edit config.json: Helix cannot answer prompts, so a code action decides.
    // The progress (display-progress-messages) says what the task waits for...
    await waitForScreen(session, /Waiting for your approval: Edit config\.json/);
    // ...and the approval is a diagnostic: its mark in the gutter and the status line's count
    // (Helix shows its text inline only on the cursor's line, which depends on the selection).
    await waitForScreen(session, /●\s+17 {2}export function backoff[\s\S]*● 1/);
    picture(session, 'helix-approval', 'Helix: a task waiting for your approval, its progress in the corner, the approval a diagnostic on the code');
    await codeAction(session, 'Buckley: approve «Edit config.json»');
    const done = await waitForScreen(session, '# Fix the problems in this code.');
    expect(done).toContain('Permission to read: yes; permission to edit: yes.');
  });

  it("lands an agent's approved write in the open buffer next to the user's unsaved line, leaves the disk alone, and u takes it back", async () => {
    // A workspace of its own: the first line asks for the task, as a user writes it.
    const workspace = tempDir('buckley-hx-write');
    const file = join(workspace, 'retry.ts');
    // (`=` as a JSON escape: the line must not hold the very text the agent replaces.)
    const original = `// buckley: REPLACE ${file} "tries \\u003d 3" "tries \\u003d 5"\n${readFileSync(`${FIXTURES}workspace/retry.ts`, 'utf8')}`;
    writeFileSync(file, original);
    // Helix's workspace is where it starts (no root marker here): the agent reads inside it.
    const { session } = startHelix('write', file, workspace);
    await waitForScreen(session, 'export function backoff');
    // The user's own unsaved line at the end of the file.
    tmux(session, 'send-keys', '-t', session, 'g', 'e', 'o', '// mine, unsaved', 'Escape');
    await waitForScreen(session, '// mine, unsaved');
    tmux(session, 'send-keys', '-t', session, 'g', 'g', 'x');
    await codeAction(session, 'Buckley: run task «REPLACE');
    // The approval: a diagnostic with code actions, the diff opened beside the code.
    const review = await waitForScreen(session, /@@ -\d+,\d+ \+\d+,\d+ @@/);
    // (the pane is 80 columns: the diff's lines are cut at its edge)
    expect(review).toMatch(/-export async function withRetry<T>\(attempt: \(\) => Promise<T>, tries = 3/);
    expect(review).toMatch(/\+export async function withRetry<T>\(attempt: \(\) => Promise<T>, tries = 5/);
    picture(session, 'helix-review', "Helix: an agent's write to approve, its diff opened beside the code");
    // Back to the code if the diff took the focus: the approval's code actions are there.
    if (/(NOR|INS|SEL)\s+\S*buckley-lsp\/changes\//.test(screen(session))) tmux(session, 'send-keys', '-t', session, 'C-w', 'w');
    await codeAction(session, 'Buckley: approve «Write retry.ts»');
    // The answer opens in a split too: back to the code alone, at the start of its lines.
    await waitForScreen(session, /done «REPLACE/);
    tmux(session, 'send-keys', '-t', session, 'C-w', 'h', 'C-w', 'h', 'C-w', 'o', 'g', 'g', 'g', 'h');
    const changed = await waitForScreen(session, /tries = 5\): Promise<T> \{[\s\S]*\/\/ mine, unsaved/);
    expect(changed).toContain('// mine, unsaved');
    expect(readFileSync(file, 'utf8')).toBe(original);
    // u takes back the agent's change, and only it.
    tmux(session, 'send-keys', '-t', session, 'Escape', 'u');
    const undone = await waitForScreen(session, /tries = 3\): Promise<T> \{[\s\S]*\/\/ mine, unsaved/);
    expect(undone).not.toContain('tries = 5');
    expect(undone).toContain('// mine, unsaved');
  });

  it("marks the task's change in the file; the code action \"Buckley: undo this change\" takes it back in the buffer", async () => {
    const workspace = tempDir('buckley-hx-review');
    const file = join(workspace, 'retry.ts');
    const original = `// buckley: REPLACE ${file} "tries \\u003d 3" "tries \\u003d 5"\n${readFileSync(`${FIXTURES}workspace/retry.ts`, 'utf8')}`;
    writeFileSync(file, original);
    const { session } = startHelix('review', file, workspace);
    await waitForScreen(session, 'export function backoff');
    tmux(session, 'send-keys', '-t', session, 'g', 'g', 'x');
    await codeAction(session, 'Buckley: run task «REPLACE');
    await waitForScreen(session, /@@ -\d+,\d+ \+\d+,\d+ @@/);
    if (/(NOR|INS|SEL)\s+\S*buckley-lsp\/changes\//.test(screen(session))) tmux(session, 'send-keys', '-t', session, 'C-w', 'w');
    await codeAction(session, 'Buckley: approve «Write retry.ts»');
    await waitForScreen(session, /done «REPLACE/);
    // Back to the code alone, on the changed line, where its code actions are.
    tmux(session, 'send-keys', '-t', session, 'C-w', 'h', 'C-w', 'h', 'C-w', 'o', ':', 'goto 4', 'Enter');
    await waitForScreen(session, /tries = 5\): Promise<T> \{/);
    await codeAction(session, 'Buckley: undo this change (+1 −1)');
    const undone = await waitForScreen(session, /tries = 3\): Promise<T> \{/);
    expect(undone).not.toContain('tries = 5');
    expect(readFileSync(file, 'utf8')).toBe(original);
  });

  it("cancels the newest task with the README's space C, and opens the log with space L", async () => {
    const { session, home } = startHelix('keys');
    await waitForScreen(session, 'export function backoff');
    selectBackoff(session);
    await codeAction(session, 'Buckley: fix problems here');
    // Helix 25.01 puts the progress token in front of the title: one a person can read.
    await waitForScreen(session, /\[task \d+\] .*Waiting for your approval: Edit config\.json/);
    tmux(session, 'send-keys', '-t', session, 'Space', 'C');
    await waitForScreen(session, 'cancelled «Fix the problems in this code.»');
    tmux(session, 'send-keys', '-t', session, 'Space', 'L');
    const log = await waitForScreen(session, /buckley-lsp\.log/);
    expect(log).toMatch(/\[info\] buckley-lsp \S+ serving helix/);
    expect(log).toContain(join(home, 'state', 'buckley-lsp', 'buckley-lsp.log').replace(home, '~'));
  });
});
