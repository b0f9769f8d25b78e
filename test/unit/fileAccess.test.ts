/**
 * Files read and written on an agent's behalf, against hostile workspaces: links (dangling,
 * chained, looping, re-pointed), pipes and devices, paths longer than the system allows, files
 * bigger than any read may return.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileAccessError, pathTooLong, readBytesSync, readText, realPath, writeText } from '../../src/fileAccess.js';
import { selectLines } from '../../src/text.js';

const top = realpathSync(mkdtempSync(join(tmpdir(), 'buckley-files-')));
afterAll(() => rmSync(top, { recursive: true, force: true }));
let count = 0;
/** A workspace and a place outside it, both empty. */
function places(): { ws: string; out: string } {
  const ws = join(top, `ws${++count}`);
  const out = join(top, `out${count}`);
  mkdirSync(ws);
  mkdirSync(out);
  return { ws, out };
}

describe('where a path leads', () => {
  it('through a dangling link: to the target a write would create', () => {
    const { ws, out } = places();
    symlinkSync(join(out, 'new.txt'), join(ws, 'link-out'));
    expect(realPath(join(ws, 'link-out'))).toBe(join(out, 'new.txt'));
    // A dangling link to a missing directory, and a path below it.
    symlinkSync(join(out, 'missing'), join(ws, 'dir-out'));
    expect(realPath(join(ws, 'dir-out', 'a', 'b.txt'))).toBe(join(out, 'missing', 'a', 'b.txt'));
  });

  it('through chains of relative links, `..` taken after the link as the system takes it', () => {
    const { ws, out } = places();
    mkdirSync(join(ws, 'deep', 'er'), { recursive: true });
    symlinkSync('deep/er', join(ws, 'hop'));
    symlinkSync(`../../../${out.split('/').pop()}/target`, join(ws, 'deep', 'er', 'up'));
    symlinkSync('hop/up', join(ws, 'chain'));
    expect(realPath(join(ws, 'chain'))).toBe(join(out, 'target'));
    // hop/.. is deep (the link's target's parent), not the workspace.
    expect(realPath(`${ws}/hop/../x`)).toBe(join(ws, 'deep', 'x'));
  });

  it('a loop of links, and a path longer than the system allows, lead nowhere known', () => {
    const { ws } = places();
    symlinkSync(join(ws, 'b'), join(ws, 'a'));
    symlinkSync(join(ws, 'a'), join(ws, 'b'));
    expect(realPath(join(ws, 'a', 'file'))).toBeUndefined();
    const long = `/${'a/'.repeat(200_000)}x`;
    expect(pathTooLong(long)).toMatch(/^the path is 400002 bytes long, over the system's limit of 4095$/);
    expect(realPath(long)).toBeUndefined();
    expect(pathTooLong(`/tmp/${'n'.repeat(256)}`)).toMatch(/a name in the path is 256 bytes long/);
    expect(pathTooLong(`/tmp/${'n'.repeat(255)}`)).toBeUndefined();
  });
});

describe('reading', () => {
  it('a named pipe, a device, a socket-like or a directory: refused at once, saying what it is', async () => {
    const { ws } = places();
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    await expect(readText(join(ws, 'pipe'), { maxBytes: 1024 })).rejects.toThrow(`${join(ws, 'pipe')} is a named pipe (FIFO), not a file`);
    await expect(readText('/dev/zero', { line: 1, limit: 1, maxBytes: 1024 })).rejects.toThrow('/dev/zero is a device, not a file');
    await expect(readText(ws, { maxBytes: 1024 })).rejects.toThrow(`${ws} is a directory, not a file`);
    expect(readBytesSync(join(ws, 'pipe'), 1024)).toBeUndefined();
  });

  it('a final link is not followed (the caller resolved it: a link there now was put there since)', async () => {
    const { ws, out } = places();
    writeFileSync(join(out, 'secret'), 'outside');
    symlinkSync(join(out, 'secret'), join(ws, 'file'));
    const error = await readText(join(ws, 'file'), { maxBytes: 1024 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(FileAccessError);
    expect((error as Error).message).toContain('is a symbolic link');
  });

  it('lines as ACP reads them, and no more than the bound, whatever the file', async () => {
    const { ws } = places();
    const text = Array.from({ length: 50_000 }, (_, i) => `line ${i + 1} ${'é'.repeat(i % 7)}`).join('\n');
    writeFileSync(join(ws, 'big.txt'), text);
    for (const [line, limit] of [[0, 0], [1, 1], [2, 3], [49_999, 5], [50_000, 1], [50_001, 1], [0, 10], [30_000, 0]] as const) {
      expect(await readText(join(ws, 'big.txt'), { line, limit, maxBytes: 16 * 1024 * 1024 })).toBe(selectLines(text, line, limit));
    }
    await expect(readText(join(ws, 'big.txt'), { maxBytes: 1000 })).rejects.toThrow(/is \d+ KB, over 1 KB: read it in parts \(line and limit\)/);
    await expect(readText(join(ws, 'big.txt'), { line: 1, limit: 1000, maxBytes: 1000 })).rejects.toThrow('lines 1–1000 are over 1 KB: ask for fewer (limit)');
    // A file whose size says nothing (/proc): still bounded.
    await expect(readText(realPath('/proc/self/status')!, { maxBytes: 10 })).rejects.toThrow(/grew over/);
  });
});

describe('writing', () => {
  it('a new file, in directories that do not exist yet', async () => {
    const { ws } = places();
    await writeText(join(ws, 'a', 'b', 'new.txt'), 'hello');
    expect(readFileSync(join(ws, 'a', 'b', 'new.txt'), 'utf8')).toBe('hello');
    await writeText(join(ws, 'a', 'b', 'new.txt'), 'again');
    expect(readFileSync(join(ws, 'a', 'b', 'new.txt'), 'utf8')).toBe('again');
  });

  it('never through a link put where the judged file was, nor into a directory re-pointed since', async () => {
    const { ws, out } = places();
    // The file judged is ws/file; a link to outside is put in its place.
    symlinkSync(join(out, 'landed'), join(ws, 'file'));
    await expect(writeText(join(ws, 'file'), 'x')).rejects.toThrow(`${join(ws, 'file')} is a symbolic link`);
    expect(existsSync(join(out, 'landed'))).toBe(false);
    // The directory judged is ws/dir; it is swapped for a link to outside before the write.
    mkdirSync(join(ws, 'dir'));
    renameSync(join(ws, 'dir'), join(ws, 'moved'));
    symlinkSync(out, join(ws, 'dir'));
    await expect(writeText(join(ws, 'dir', 'new.txt'), 'x')).rejects.toThrow(`${join(ws, 'dir')} is a symbolic link (it was not when ${join(ws, 'dir', 'new.txt')} was decided); nothing was written`);
    expect(existsSync(join(out, 'new.txt'))).toBe(false);
    // And a directory to create, below such a link.
    await expect(writeText(join(ws, 'dir', 'sub', 'new.txt'), 'x')).rejects.toThrow(`${join(ws, 'dir')} is a symbolic link`);
    expect(existsSync(join(out, 'sub'))).toBe(false);
  });

  it('a pipe or a device: refused at once', async () => {
    const { ws } = places();
    execFileSync('mkfifo', [join(ws, 'pipe')]);
    await expect(writeText(join(ws, 'pipe'), 'x')).rejects.toThrow('is a named pipe (FIFO), not a file');
    await expect(writeText('/dev/null', 'x')).rejects.toThrow('/dev/null is a device, not a file');
  });
});
