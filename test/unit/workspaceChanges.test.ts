/**
 * What an agent changed on disk by itself is found (also when it set the modification time back),
 * and settled: open files into the editor with the disk given its text back, other changes left on
 * disk and listed, an editor that does not answer not waited on for every file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settleChanges, SharedFiles, SNAPSHOT_LIMITS, WorkspaceSnapshot, type ChangeSink } from '../../src/coordinator/workspaceChanges.js';
import { tempDir } from '../helpers/temp.js';

function workspace(files: Record<string, string>): string {
  const root = tempDir('changes-');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

interface Recorded {
  sink: ChangeSink;
  asked: string[];
  changed: Parameters<ChangeSink['changed']>[0][];
  warnings: string[];
}

function recording(toEditor?: ChangeSink['toEditor'], approved: (path: string) => boolean = () => false, writtenThroughUs: string[] = []): Recorded {
  const asked: string[] = [];
  const changed: Recorded['changed'] = [];
  const warnings: string[] = [];
  const sink: ChangeSink = {
    writtenThroughUs: new Set(writtenThroughUs),
    approved,
    ...(toEditor
      ? {
          toEditor: (write) => {
            asked.push(write.path);
            return toEditor(write);
          },
        }
      : {}),
    changed: (change) => changed.push(change),
    logger: { info: () => {}, warn: (message) => warnings.push(message) },
  };
  return { sink, asked, changed, warnings };
}

describe('the workspace snapshot', () => {
  it('finds edits, new files and deletions, with the text before', () => {
    const root = workspace({ 'a.ts': 'one\n', 'src/b.ts': 'two\n', 'c.ts': 'three\n' });
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(join(root, 'a.ts'), 'ONE\n');
    writeFileSync(join(root, 'src/new.ts'), 'new\n');
    rmSync(join(root, 'c.ts'));
    expect(snapshot.changes()).toEqual([
      { path: join(root, 'a.ts'), before: 'one\n', after: 'ONE\n', known: true, deleted: false },
      { path: join(root, 'c.ts'), before: 'three\n', known: true, deleted: true },
      { path: join(root, 'src/new.ts'), before: undefined, after: 'new\n', known: true, deleted: false },
    ]);
  });

  it('finds an edit of the same size whose modification time was set back', () => {
    const root = workspace({ 'a.ts': 'abc\n' });
    const back = 1_700_000_000; // a whole second: set exactly
    utimesSync(join(root, 'a.ts'), back, back);
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(join(root, 'a.ts'), 'xyz\n');
    utimesSync(join(root, 'a.ts'), back, back);
    expect(statSync(join(root, 'a.ts')).mtimeMs).toBe(back * 1000);
    expect(snapshot.changes()).toEqual([{ path: join(root, 'a.ts'), before: 'abc\n', after: 'xyz\n', known: true, deleted: false }]);
  });

  it('does not count a file touched but not changed, nor what is under .git or node_modules', () => {
    const root = workspace({ 'a.ts': 'same\n', '.git/config': 'x', 'node_modules/m/index.js': 'x' });
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(join(root, 'a.ts'), 'same\n');
    writeFileSync(join(root, '.git/config'), 'changed');
    writeFileSync(join(root, 'node_modules/m/index.js'), 'changed');
    expect(snapshot.changes()).toEqual([]);
  });

  it('reports a change to a file too big to keep without its text before', () => {
    const root = workspace({ 'big.txt': 'x'.repeat(100), 'small.txt': 's' });
    const snapshot = WorkspaceSnapshot.take(root, { maxFiles: 100, maxFileBytes: 50, maxKeptBytes: 1000 });
    writeFileSync(join(root, 'big.txt'), 'y'.repeat(100));
    expect(snapshot.changes()).toEqual([{ path: join(root, 'big.txt'), before: undefined, after: 'y'.repeat(100), known: false, deleted: false }]);
  });

  it('says when it could not look at every file', () => {
    const root = workspace({ 'a': '1', 'b': '2', 'c': '3' });
    expect(WorkspaceSnapshot.take(root, { maxFiles: 2, maxFileBytes: 10, maxKeptBytes: 100 }).complete).toBe(false);
    expect(WorkspaceSnapshot.take(root, { maxFiles: 3, maxFileBytes: 10, maxKeptBytes: 100 }).complete).toBe(true);
  });
});

describe('the snapshots of turns running at once', () => {
  it('share what they saw the same — one record and one text a file — each with its own before, all given back at the end', () => {
    const shared = new SharedFiles();
    const root = workspace({ 'a.ts': 'one\n', 'b.ts': 'two\n' });
    const first = WorkspaceSnapshot.take(root, SNAPSHOT_LIMITS, shared);
    expect(shared).toMatchObject({ files: 2, keptBytes: 8 });
    writeFileSync(join(root, 'a.ts'), 'ONE!\n');
    const second = WorkspaceSnapshot.take(root, SNAPSHOT_LIMITS, shared);
    // b.ts is one record for both; a.ts, changed between them, is two (each turn's own before).
    expect(shared).toMatchObject({ files: 4, keptBytes: 8 + 5 });
    writeFileSync(join(root, 'b.ts'), 'TWO\n');
    expect(first.changes().map(({ path, before }) => [path, before])).toEqual([[join(root, 'a.ts'), 'one\n'], [join(root, 'b.ts'), 'two\n']]);
    expect(second.changes().map(({ path, before }) => [path, before])).toEqual([[join(root, 'b.ts'), 'two\n']]);
    first.release();
    first.release();
    expect(shared).toMatchObject({ files: 2, keptBytes: 9 });
    second.release();
    expect(shared).toMatchObject({ files: 0, keptBytes: 0 });
  });

  it('keep all they note within the total: one taken beyond it notes fewer files, keeps fewer texts, and says it is incomplete', () => {
    const shared = new SharedFiles({ maxFiles: 3, maxKeptBytes: 6 });
    const one = WorkspaceSnapshot.take(workspace({ 'a': 'aaaa', 'b': 'bb' }), SNAPSHOT_LIMITS, shared);
    expect(one.complete).toBe(true);
    expect(shared).toMatchObject({ files: 2, keptBytes: 6 });
    const other = workspace({ 'c': 'cc', 'd': 'dd' });
    const two = WorkspaceSnapshot.take(other, SNAPSHOT_LIMITS, shared);
    expect(two.complete).toBe(false);
    expect(shared).toMatchObject({ files: 3, keptBytes: 6 });
    one.release();
    two.release();
    expect(shared).toMatchObject({ files: 0, keptBytes: 0 });
    expect(WorkspaceSnapshot.take(other, SNAPSHOT_LIMITS, shared).complete).toBe(true);
  });
});

describe('settling the changes of a turn', () => {
  it('takes a change to an open file into the editor and gives the disk its text back', async () => {
    const root = workspace({ 'open.ts': 'before\n', 'closed.ts': 'before\n' });
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(join(root, 'open.ts'), 'after\n');
    writeFileSync(join(root, 'closed.ts'), 'after\n');
    const open = join(root, 'open.ts');
    const { sink, changed } = recording(async (write) => ({ open: write.path === open, applied: write.path === open, message: '' }), (path) => path === open);
    const settled = await settleChanges(snapshot, sink);
    expect(readFileSync(open, 'utf8')).toBe('before\n');
    expect(readFileSync(join(root, 'closed.ts'), 'utf8')).toBe('after\n');
    expect(changed).toEqual([
      { path: join(root, 'closed.ts'), before: 'before\n', after: 'after\n', inEditor: false, unasked: true },
      { path: open, before: 'before\n', after: 'after\n', inEditor: true, unasked: false },
    ]);
    expect(settled).toEqual({ unasked: [join(root, 'closed.ts')], refused: [], notKept: [] });
  });

  it('gives the text back to that file only: not through a link put in its place meanwhile, out of the workspace', async () => {
    const root = workspace({ 'open.ts': 'before\n' });
    const outside = workspace({ 'victim.ts': 'after\n' });
    const open = join(root, 'open.ts');
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(open, 'after\n');
    const { sink, warnings } = recording(async () => {
      // While the editor takes the change, the agent swaps the file for a link out of the workspace.
      unlinkSync(open);
      symlinkSync(join(outside, 'victim.ts'), open);
      return { open: true, applied: true, message: '' };
    }, () => true);
    await settleChanges(snapshot, sink);
    expect(readFileSync(join(outside, 'victim.ts'), 'utf8')).toBe('after\n');
    expect(warnings).toEqual([`cannot put ${open} back as the editor has it: a link now leads it out of the workspace, to ${join(outside, 'victim.ts')}`]);
  });

  it('does not wait on a named pipe put where a file was', () => {
    const root = workspace({ 'a.ts': 'one\n' });
    const snapshot = WorkspaceSnapshot.take(root);
    rmSync(join(root, 'a.ts'));
    execFileSync('mkfifo', [join(root, 'a.ts')]);
    execFileSync('mkfifo', [join(root, 'new.ts')]);
    expect(snapshot.changes()).toEqual([{ path: join(root, 'a.ts'), before: 'one\n', known: true, deleted: true }]);
  });

  it('gives the disk its text back and says why when the editor refuses the change', async () => {
    const root = workspace({ 'open.ts': 'before\n' });
    const snapshot = WorkspaceSnapshot.take(root);
    writeFileSync(join(root, 'open.ts'), 'after\n');
    const { sink, changed, warnings } = recording(async () => ({ open: true, applied: false, message: 'you changed the same lines' }));
    const settled = await settleChanges(snapshot, sink);
    expect(readFileSync(join(root, 'open.ts'), 'utf8')).toBe('before\n');
    expect(settled.refused).toEqual([{ path: join(root, 'open.ts'), why: 'you changed the same lines' }]);
    expect(changed).toEqual([]);
    expect(warnings.join('\n')).toContain('+after');
  });

  it('leaves the changes on disk and stops asking an editor that missed its deadline', async () => {
    const root = workspace({ 'a.ts': '1\n', 'b.ts': '2\n', 'c.ts': '3\n' });
    const snapshot = WorkspaceSnapshot.take(root);
    for (const name of ['a.ts', 'b.ts', 'c.ts']) writeFileSync(join(root, name), 'changed\n');
    const { sink, asked, changed, warnings } = recording(async (write) => {
      throw new Error(`${write.path}: the editor did not confirm the change within 30 s`);
    });
    await settleChanges(snapshot, sink);
    expect(asked).toEqual([join(root, 'a.ts')]);
    for (const name of ['a.ts', 'b.ts', 'c.ts']) expect(readFileSync(join(root, name), 'utf8')).toBe('changed\n');
    expect(changed.map((change) => [change.path, change.inEditor])).toEqual([
      [join(root, 'a.ts'), false],
      [join(root, 'b.ts'), false],
      [join(root, 'c.ts'), false],
    ]);
    expect(warnings).toEqual([`the change to ${join(root, 'a.ts')} stays on disk: ${join(root, 'a.ts')}: the editor did not confirm the change within 30 s`]);
  });

  it('skips what was written through us and lists a change with no text before as without undo', async () => {
    const root = workspace({ 'through.ts': '1\n', 'big.txt': 'x'.repeat(100) });
    const snapshot = WorkspaceSnapshot.take(root, { maxFiles: 100, maxFileBytes: 50, maxKeptBytes: 1000 });
    writeFileSync(join(root, 'through.ts'), '2\n');
    writeFileSync(join(root, 'big.txt'), 'y'.repeat(100));
    const { sink, changed } = recording(undefined, () => false, [join(root, 'through.ts')]);
    expect(await settleChanges(snapshot, sink)).toEqual({ unasked: [join(root, 'big.txt')], refused: [], notKept: [join(root, 'big.txt')] });
    expect(changed).toEqual([]);
  });
});
