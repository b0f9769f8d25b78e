/**
 * The changes a tool call makes, read from the patch in its input where the agent shows no ACP
 * diff (Cline's apply_patch, as its model writes it; unified diffs): each hunk a snippet replaced.
 */
import { describe, expect, it } from 'vitest';
import { patchEdits, patchTitle } from '../../src/coordinator/agents/patchEdits.js';

describe('patchEdits', () => {
  it("reads an apply_patch input: each hunk of an update, an added file's lines; a deleted file is no edit", () => {
    const input = {
      input: [
        '*** Begin Patch',
        '*** Update File: src/retry.ts',
        '@@ export function retryDelay',
        ' export function retryDelay(attempt: number) {',
        '-  const cap = 30_000;',
        '+  const cap = 60_000;',
        '@@',
        '-  return 1;',
        '+  return 2;',
        '',
        '*** Add File: /abs/notes.md',
        '+# Notes',
        '+two',
        '*** Delete File: old.txt',
        '*** End Patch',
      ].join('\n'),
    };
    expect(patchEdits(input, '/ws')).toEqual([
      { path: '/ws/src/retry.ts', oldText: 'export function retryDelay(attempt: number) {\n  const cap = 30_000;', newText: 'export function retryDelay(attempt: number) {\n  const cap = 60_000;' },
      { path: '/ws/src/retry.ts', oldText: '  return 1;\n', newText: '  return 2;\n' },
      { path: '/abs/notes.md', newText: '# Notes\ntwo\n' },
    ]);
  });

  it('reads a unified diff, a new file as its whole text', () => {
    const diff = ['--- a/src/a.ts', '+++ b/src/a.ts', '@@ -1,2 +1,2 @@', ' keep', '-old', '+new', '--- /dev/null', '+++ b/src/b.ts', '@@ -0,0 +1,1 @@', '+born', ''].join('\n');
    expect(patchEdits({ patch: diff }, '/ws')).toEqual([
      { path: '/ws/src/a.ts', oldText: 'keep\nold', newText: 'keep\nnew' },
      { path: '/ws/src/b.ts', newText: 'born\n' },
    ]);
  });

  it('finds nothing in an input that holds no patch', () => {
    expect(patchEdits({ commands: ['ls -la'], note: '--- not a diff' }, '/ws')).toEqual([]);
    expect(patchEdits(undefined, '/ws')).toEqual([]);
  });

  it("names a call whose title is its input as JSON text by the files its patch changes; another title stays", () => {
    const edits = patchEdits({ input: '*** Begin Patch\n*** Update File: /ws/src/a.ts\n@@\n-a\n+b\n*** Add File: /elsewhere/n.md\n+n\n*** End Patch' }, '/ws');
    expect(patchTitle('apply_patch: {"input":"*** Begin Patch\\n*** Update File: /ws/src/a.ts', edits, '/ws')).toBe('apply_patch: src/a.ts, /elsewhere/n.md');
    expect(patchTitle('Edit src/a.ts', edits, '/ws')).toBe('Edit src/a.ts');
    expect(patchTitle('apply_patch: {"input":"…"}', [], '/ws')).toBe('apply_patch: {"input":"…"}');
  });
});
