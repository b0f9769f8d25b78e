/**
 * Real editors: Emacs 30.1 with its built-in eglot 1.17 (Debian's, installed into .editors/ by
 * `npm run install-editors`), and Emacs 28.2 with Debian 12's elpa-eglot 1.9, in batch mode. The scripts run code actions through eglot's own
 * code action and command machinery and report what Emacs then showed (see common.el).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EDITORS, missingLine, requireEditor } from '../helpers/editors.js';
import { BIN, FIXTURES, REPO, SCRIPTED_AGENT } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';

const EMACS = EDITORS.emacs.bin;
const available = requireEditor(EDITORS.emacs);
if (!available) it.skip(missingLine(EDITORS.emacs), () => {});
const available28 = requireEditor(EDITORS.emacs28);
if (!available28) it.skip(missingLine(EDITORS.emacs28), () => {});

interface Result {
  error?: string;
  server?: string;
  command?: string[];
  actions?: string[];
  message?: string;
  document?: string;
  documentText?: string;
  hover?: string;
  modified?: boolean | null;
  diagnostic?: string;
  approvalActions?: string[];
  diagnosticsAfter?: number;
  /** review.el: the marks flymake had, the buffer with the change and after its undo. */
  marks?: string[];
  changed?: string;
  undone?: string;
  diff?: string | null;
  buffer?: string;
  /** follow-up.el: the answer document's major mode, and whether the code's server manages it. */
  mode?: string;
  same_server?: boolean;
  afterUndo?: string;
  /** project-settings.el: what eglot sent for the project, and the coordinator then used. */
  sent?: string;
  coordinatorMode?: string;
  messages: string;
}

/** Runs test/emacs/`script` in `emacs`; with `readme`, the README's block of that name is the user's init. */
function runEmacs(script: string, readme?: string, file = `${FIXTURES}workspace/retry.ts`, emacs = EMACS): Result {
  const home = tempDir('buckley-emacs');
  const resultFile = join(home, 'result.json');
  const init = join(home, 'init.el');
  if (readme) writeFileSync(init, readmeSnippet(readme));
  const run = spawnSync(emacs, ['--batch', '-Q', '-l', join(REPO, 'test/emacs', script)], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 50_000,
    env: {
      PATH: readme ? userPath() : process.env.PATH,
      BUCKLEY_README_INIT: readme ? init : undefined,
      HOME: home,
      XDG_STATE_HOME: home,
      BUCKLEY_NODE: process.execPath,
      BUCKLEY_BIN: BIN,
      BUCKLEY_FILE: file,
      BUCKLEY_AGENT: readme ? undefined : `${process.execPath} ${SCRIPTED_AGENT}`,
      BUCKLEY_RESULT: resultFile,
    },
  });
  try {
    return JSON.parse(readFileSync(resultFile, 'utf8')) as Result;
  } catch {
    throw new Error(`Emacs wrote no result (status ${run.status}):\n${run.stderr}`);
  }
}

if (available) describe('Emacs 30.1 with eglot 1.17 (real editor)', () => {
  it("takes from a cloned project's .dir-locals.el (applied by Emacs unasked) nothing of where the code goes or what an agent may do, and says so", () => {
    const root = tempDir('buckley-emacs-cloned');
    const file = join(root, 'retry.ts');
    copyFileSync(`${FIXTURES}workspace/retry.ts`, file);
    writeFileSync(join(root, '.dir-locals.el'), '((nil . ((eglot-workspace-configuration . (:buckley (:coordinator (:address "127.0.0.1:9") :approvals (:autoApprove "high"))))))))\n');
    const result = runEmacs('project-settings.el', undefined, file);
    expect(result.error, result.messages).toBeUndefined();
    // Emacs applied it, and eglot sent it: the hole this closes.
    expect(JSON.parse(result.sent!)).toMatchObject({ buckley: { coordinator: { address: '127.0.0.1:9' }, approvals: { autoApprove: 'high' } } });
    expect(result.message).toBe("ignored .dir-locals.el's coordinator,… (see log)");
    expect(result.coordinatorMode).toBe('embedded');
  });

  it("with the README's eglot init, explains the selected lines: the answer as a message, a markdown document and hover", () => {
    const result = runEmacs('explain.el', 'emacs-eglot');
    expect(result.error, result.messages).toBeUndefined();
    expect(result.server).toBe('buckley-lsp');
    expect(result.command).toEqual(['buckley-lsp', '--stdio']);
    expect(result.actions).toContain('Buckley: explain this');
    // eglot shows window/showMessage in the echo area (and *Messages*): what happened, where the answer is.
    expect(result.message).toBe('answered «Explain what this code does and…»: answer opened');
    // eglot 1.17 opens window/showDocument in a buffer.
    expect(result.document).toMatch(/buckley-lsp\/answers\/.*-explain-what-this-code-does-and-why\.md$/);
    expect(result.documentText).toContain('# Explain what this code does and why.');
    expect(result.documentText).toContain('starts with `export function backoff');
    // eglot takes plain-text hover: no markdown markers.
    expect(result.hover).toMatch(/^Buckley — Explain what this code does and why\./);
    expect(result.hover).not.toContain('**');
    expect(result.modified).toBeFalsy();
    // Nothing eglot had to warn the user about (e.g. a registration it does not support).
    expect(result.messages).not.toMatch(/unsupported capability|\((warning|error)\)|^Error/im);
  });

  it("with the README's eglot init, follows up in the answer document: the question written below its last line, \"Buckley: follow up\", the answer appended there", () => {
    const result = runEmacs('follow-up.el', 'emacs-eglot');
    expect(result.error, `${result.mode} ${result.messages}`).toBeUndefined();
    // The same server manages the answer document (the README's block covers text-mode).
    expect(result.same_server).toBe(true);
    const text = String(result.documentText).replace(/\s+/g, ' ');
    expect(text).toMatch(/^# Explain what this code does and why\. /);
    expect(text).toMatch(/ ## RECALL what came before \*[^*]+\* recall: turn 2 of this session; earlier questions: \[Explain what this code does and why\.\] --- \*Follow up: /);
    expect(result.modified).toBe(true);
  });

  it('runs a task: the approval arrives as a flymake diagnostic, a code action approves, the task ends', () => {
    const result = runEmacs('task.el');
    expect(result.error, result.messages).toBeUndefined();
    expect(result.diagnostic).toMatch(/Edit config\.json.*Use the code actions "Buckley: approve…" or "Buckley: deny…"/);
    expect(result.approvalActions).toEqual([
      'Buckley: approve «Edit config.json» (medium)',
      'Buckley: approve & trust «Edit config.json» (medium)',
      'Buckley: deny «Edit config.json» (medium)',
    ]);
    expect(result.documentText).toContain('# Fix the problems in this code.');
    expect(result.documentText).toContain('Permission to read: yes; permission to edit: yes.');
    expect(result.diagnosticsAfter).toBe(0);
  });

  it("lands an agent's approved write in the open buffer next to the user's unsaved line, leaves the disk alone, and undo takes it back", () => {
    const file = join(tempDir('buckley-emacs-write'), 'retry.ts');
    // The first line asks for the task (`=` as a JSON escape: the line must not hold the text replaced).
    const original = `// buckley: REPLACE ${file} "tries \\u003d 3" "tries \\u003d 5"\n${readFileSync(`${FIXTURES}workspace/retry.ts`, 'utf8')}`;
    writeFileSync(file, original);
    const result = runEmacs('write.el', undefined, file);
    expect(result.error, result.messages).toBeUndefined();
    expect(result.diff).toMatch(/^-export async function withRetry<T>\(attempt: \(\) => Promise<T>, tries = 3\): Promise<T> \{$/m);
    expect(result.buffer).toBe(`${original.replace('tries = 3)', 'tries = 5)')}// mine, unsaved\n`);
    expect(result.modified).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(original);
    expect(result.afterUndo).toBe(`${original}// mine, unsaved\n`);
  });

  it("marks the task's change in the file (flymake), and its code action \"Buckley: undo this change\" takes it back", () => {
    const workspace = tempDir('buckley-emacs-review');
    const file = join(workspace, 'retry.ts');
    const original = `// buckley: REPLACE ${file} "tries \\u003d 3" "tries \\u003d 5"\n${readFileSync(`${FIXTURES}workspace/retry.ts`, 'utf8')}`;
    writeFileSync(file, original);
    const result = runEmacs('review.el', undefined, file);
    expect(result.error, result.messages).toBeUndefined();
    // (eglot puts the diagnostic's source first)
    expect(result.marks).toEqual([expect.stringMatching(/^buckley: changed by «REPLACE .*» \(\+1 −1\): keep or undo it with the code actions/)]);
    expect(result.changed).toBe(original.replace('tries = 3)', 'tries = 5)'));
    expect(result.undone).toBe(original);
  });
});

if (available28) describe('Emacs 28.2 with eglot 1.9 (Debian 12; real editor)', () => {
  it("with the README's eglot init, explains the selected lines: the one-line summary in the echo area, the answer on hover", () => {
    const result = runEmacs('summary.el', 'emacs-eglot', undefined, EDITORS.emacs28.bin);
    expect(result.error, result.messages).toBeUndefined();
    expect(result.server).toBe('buckley-lsp');
    expect(result.actions).toContain('Buckley: explain this');
    // eglot 1.9 opens no documents: the summary says where the answer is.
    expect(result.message).toBe('[eglot] Server reports (type=3): answered «Explain what this code does and…»: hover the code');
    expect(result.hover).toMatch(/^Buckley — Explain what this code does and why\./);
    expect(result.messages).not.toMatch(/unsupported capability|\((warning|error)\)|^Error/im);
  });
});
