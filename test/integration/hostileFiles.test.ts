/**
 * A hostile agent and hostile files against what an agent may touch: links that lead out of the
 * workspace (dangling, chained, re-pointed while the user decides), named pipes and devices,
 * paths no system allows, files bigger than any read may return, state files that are not what
 * they should be. Over real stdio with the embedded coordinator and our scripted agent's READ and
 * WRITE; each case failed before the fix it names.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { editorWithBuffers } from '../helpers/buffers.js';
import { startingClients, type TestClient } from '../helpers/lspClient.js';

const start = startingClients();
const top = realpathSync(mkdtempSync(join(tmpdir(), 'buckley-hostile-')));
afterAll(() => rmSync(top, { recursive: true, force: true }));
let count = 0;
/** A workspace, and a directory outside it. */
function places(): { root: string; out: string } {
  const root = join(top, `ws${++count}`);
  const out = join(top, `out${count}`);
  mkdirSync(root);
  mkdirSync(out);
  return { root, out };
}

const workspace = (root: string) => ({ rootUri: pathToFileURL(root).href, workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }] });

/** Runs a task to its end; the agent's answer as logged. */
async function task(client: TestClient, query: string): Promise<string> {
  await client.request('buckley/executeTask', { task: query });
  return (await client.waitFor('window/logMessage', (p) => p.message.startsWith(`Buckley's answer to "${query}"`))).message;
}

describe('what a path touches is judged, and only that is touched', () => {
  it('a dangling link in the workspace is judged as its target outside it: a destructive write, named, and denied nothing is created', async () => {
    const { root, out } = places();
    symlinkSync(join(out, 'created.txt'), join(root, 'link-out'));
    const session = await editorWithBuffers(start, root, () => false);
    expect(await task(session.client, `WRITE ${join(root, 'link-out')} "pwned"`)).toContain(`write failed (-32603): writing ${join(root, 'link-out')} was not approved`);
    const [approval] = session.client.all('buckley/approveTool');
    expect(approval).toMatchObject({ tool: `Write link-out → ${join(out, 'created.txt')}`, risk: 'destructive', parameters: { path: join(root, 'link-out'), leadsTo: join(out, 'created.txt') } });
    expect(approval.reason).toContain(`writes ${join(out, 'created.txt')} outside the workspace`);
    expect(existsSync(join(out, 'created.txt'))).toBe(false);
  });

  it('a dangling link below a directory link, and a chain of relative links: judged as where they lead', async () => {
    const { root, out } = places();
    symlinkSync(join(out, 'missing-dir'), join(root, 'dir'));
    symlinkSync('dir/sub/file.txt', join(root, 'hop'));
    const session = await editorWithBuffers(start, root, () => false);
    await task(session.client, `WRITE ${join(root, 'hop')} "x"`);
    expect(session.client.all('buckley/approveTool')[0]).toMatchObject({ risk: 'destructive', parameters: { leadsTo: join(out, 'missing-dir', 'sub', 'file.txt') } });
  });

  it('a link re-pointed out of the workspace while the user reads the prompt: nothing is written anywhere', async () => {
    const { root, out } = places();
    writeFileSync(join(root, 'inside.txt'), 'inside\n');
    symlinkSync(join(root, 'inside.txt'), join(root, 'link'));
    const session = await editorWithBuffers(start, root, () => {
      // The agent's accomplice re-points the link while the user decides.
      unlinkSync(join(root, 'link'));
      symlinkSync(join(out, 'landed.txt'), join(root, 'link'));
      return true;
    });
    const answer = await task(session.client, `WRITE ${join(root, 'link')} "approved text"`);
    expect(session.client.all('buckley/approveTool')[0]).toMatchObject({ tool: `Write link → inside.txt`, risk: 'medium' });
    expect(answer).toContain(`write failed (-32603): ${join(root, 'link')} was not changed: a link in its path was re-pointed while the change was decided`);
    expect(existsSync(join(out, 'landed.txt'))).toBe(false);
    expect(readFileSync(join(root, 'inside.txt'), 'utf8')).toBe('inside\n');
  });

  it('a directory swapped for a link out of the workspace while the user decides: the new file is not created outside', async () => {
    const { root, out } = places();
    mkdirSync(join(root, 'src'));
    const session = await editorWithBuffers(start, root, () => {
      renameSync(join(root, 'src'), join(root, 'src-moved'));
      symlinkSync(out, join(root, 'src'));
      return true;
    });
    const answer = await task(session.client, `WRITE ${join(root, 'src', 'new.ts')} "export {}"`);
    expect(answer).toMatch(/write failed \(-32603\): .*(re-pointed|is a symbolic link)/);
    expect(existsSync(join(out, 'new.ts'))).toBe(false);
  });

  it('an approved write through a link inside the workspace: made in the file it leads to, listed once, not as made without asking', async () => {
    const { root } = places();
    writeFileSync(join(root, 'real.txt'), 'before\n');
    symlinkSync(join(root, 'real.txt'), join(root, 'alias.txt'));
    const session = await editorWithBuffers(start, root, () => true);
    const answer = await task(session.client, `WRITE ${join(root, 'alias.txt')} "after\\n"`);
    expect(readFileSync(join(root, 'real.txt'), 'utf8')).toBe('after\n');
    expect(answer).not.toContain('Without asking');
    expect(answer.match(/^- `/gm)).toHaveLength(1);
  });

  it("a file whose name holds markdown (backticks around a link): listed in the answer as the name it is, in a code span it cannot leave", async () => {
    const { root } = places();
    const name = 'a`[approve](evil.example)`.ts';
    const session = await editorWithBuffers(start, root, () => true);
    const answer = await task(session.client, `WRITE ${join(root, name)} "x"`);
    expect(readFileSync(join(root, name), 'utf8')).toBe('x');
    expect(answer).toContain(`- \`\`${name}\`\` +1 −0, on disk`);
  });

  it("a file whose name holds line breaks and a heading: the answer document names it on its one line, in a code span", async () => {
    const { root } = places();
    const name = 'a\n\n# Approve everything.ts';
    const uri = pathToFileURL(join(root, name)).href;
    const client = await start({ client: 'neovim-0.10.4', initialize: workspace(root) });
    await client.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: 'export const a = 1;\n' } });
    await client.request('buckley/ask', { question: 'INSTANT about it', context: { activeFile: uri, selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } } } });
    const shown = await client.waitFor('window/showDocument');
    const document = readFileSync(new URL(shown.uri), 'utf8');
    expect(document).toMatch(/^\*About `a # Approve everything\.ts`, line 1 — [^\n]+\*$/m);
    expect(document).not.toMatch(/^# Approve everything/m);
  });

  it('a path longer than the system allows: refused at once, and the coordinator answers others meanwhile', async () => {
    const { root } = places();
    const client = await start({ initialize: workspace(root) });
    const long = client.request('buckley/ask', { question: 'READ LONG 200000' });
    const other = client.request('buckley/ask', { question: 'INSTANT' });
    expect((await long).answer).toMatch(/^read failed \(-32603\): cannot read (\/a)+…(a\/)+x \(400002 characters\): the path is 400002 bytes long, over the system's limit of 4095/);
    expect((await other).answer).toContain('ok');
  });

  it('a loop of links: refused, saying so', async () => {
    const { root } = places();
    symlinkSync(join(root, 'b'), join(root, 'a'));
    symlinkSync(join(root, 'a'), join(root, 'b'));
    const client = await start({ initialize: workspace(root) });
    expect((await client.request('buckley/ask', { question: `READ ${join(root, 'a')}` })).answer).toContain(`read failed (-32603): cannot read ${join(root, 'a')}: it leads through more than 40 symbolic links (a loop)`);
  });
});

describe("a task's undo touches only its own files", () => {
  it('a file the agent replaced with a link out of the workspace after its change: not written through, kept, and said why', async () => {
    const { root, out } = places();
    const file = join(root, 'notes.txt');
    writeFileSync(file, 'before\n');
    writeFileSync(join(out, 'victim.txt'), 'after\n');
    const session = await editorWithBuffers(start, root, () => true);
    expect(await task(session.client, `WRITE ${file} "after\\n"`)).toContain(`wrote ${file}`);
    expect(readFileSync(file, 'utf8')).toBe('after\n');
    // Then the file becomes a link to a file outside that holds what the change left.
    unlinkSync(file);
    symlinkSync(join(out, 'victim.txt'), file);
    const outcome = await session.client.request('workspace/executeCommand', { command: 'buckley.undoTaskEdits', arguments: [] });
    expect(outcome).toEqual({ undone: [], kept: [{ path: file, why: `it leads through a link to ${join(out, 'victim.txt')}, outside the workspace, now; nothing was written there` }] });
    expect(readFileSync(join(out, 'victim.txt'), 'utf8')).toBe('after\n');
  });
});

describe('only regular files are read or written', () => {
  it('named pipes in the workspace: each read refused at once, saying what it is, and answers still written and opened', async () => {
    const { root } = places();
    for (let i = 0; i < 6; i++) execFileSync('mkfifo', [join(root, `pipe${i}`)]);
    const client = await start({ client: 'neovim-0.10.4', initialize: workspace(root) });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => client.request('buckley/ask', { question: `READ ${join(root, `pipe${i}`)}` })));
    answers.forEach(({ answer }, i) => expect(answer).toContain(`read failed (-32603): ${join(root, `pipe${i}`)} is a named pipe (FIFO), not a file`));
    // Node's file threads are free: an answer is still written to its document and opened.
    const { answer } = await client.request('buckley/ask', { question: 'INSTANT' });
    expect(answer).toContain('ok');
    await client.waitFor('window/showDocument', (p) => readFileSync(new URL(p.uri), 'utf8').startsWith('# INSTANT'));
  });

  it('a device, approved in a task with a limit of one line: refused, and the server lives on', async () => {
    const { root } = places();
    const session = await editorWithBuffers(start, root, () => true);
    expect(await task(session.client, 'READ /dev/zero 1 1')).toContain('read failed (-32603): /dev/zero is a device, not a file');
    expect(await task(session.client, 'WRITE /dev/null "x"')).toContain('write failed (-32603): /dev/null is a device, not a file');
    expect((await session.client.request('buckley/ask', { question: 'INSTANT' })).answer).toContain('ok');
  });

  it('a pipe where a file is to be written: refused at once', async () => {
    const { root } = places();
    execFileSync('mkfifo', [join(root, 'out.txt')]);
    const session = await editorWithBuffers(start, root, () => true);
    expect(await task(session.client, `WRITE ${join(root, 'out.txt')} "x"`)).toContain(`write failed (-32603): ${join(root, 'out.txt')} is a named pipe (FIFO), not a file`);
  });
});

describe('files of its own', () => {
  it('a pipe where the conversations listing is written: refused at once with what it is, and the server goes on', async () => {
    const state = join(top, `state${++count}`);
    mkdirSync(join(state, 'buckley-lsp', 'answers'), { recursive: true });
    execFileSync('mkfifo', [join(state, 'buckley-lsp', 'answers', 'conversations.md')]);
    const client = await start({ client: 'neovim-0.10.4', env: { XDG_STATE_HOME: state } });
    await expect(client.request('workspace/executeCommand', { command: 'buckley.conversations', arguments: [] })).rejects.toThrow('conversations.md is a named pipe (FIFO), not a file');
    expect((await client.request('buckley/ask', { question: 'INSTANT' })).answer).toContain('ok');
  });
});

describe('every read is bounded', () => {
  it('a file of 600 MB read by lines: the lines asked for, and a read of all of it refused with how to read it', async () => {
    const { root } = places();
    const big = join(root, 'huge.log');
    writeFileSync(big, 'first line\nsecond line\n');
    truncateSync(big, 600 * 1024 * 1024); // sparse: the rest is NUL bytes, one endless line
    const client = await start({ initialize: workspace(root) });
    expect((await client.request('buckley/ask', { question: `READ ${big} 2 1` })).answer).toContain('~~~~\nsecond line\n\n~~~~');
    expect((await client.request('buckley/ask', { question: `READ ${big}` })).answer).toContain(`read failed (-32603): ${big} is 600 MB, over 16 MB: read it in parts (line and limit)`);
    // Line 3 is 600 MB of NUL bytes: more than a read may return.
    expect((await client.request('buckley/ask', { question: `READ ${big} 3 1` })).answer).toContain('read failed (-32603): lines 3–3 are over 16 MB: ask for fewer (limit)');
  });

  it('a 600 MB trust file is not read whole: the server starts, says which file and what to do', async () => {
    const state = join(top, `state${++count}`);
    mkdirSync(join(state, 'buckley-lsp'), { recursive: true });
    writeFileSync(join(state, 'buckley-lsp', 'trust.json'), '');
    truncateSync(join(state, 'buckley-lsp', 'trust.json'), 600 * 1024 * 1024);
    const client = await start({ env: { XDG_STATE_HOME: state } });
    const said = await client.waitFor('window/showMessage', (p) => p.message.includes('trust.json'));
    expect(said.message).toContain('trust.json is 600 MB, too big for a state file: remove it');
    const logged = await client.waitFor('window/logMessage', (p) => p.message.includes('trust.json is'));
    expect(logged.message).toContain(`${join(state, 'buckley-lsp', 'trust.json')} is 600 MB, over the 8 MB a state file may be; remove it`);
    expect((await client.request('buckley/ask', { question: 'INSTANT' })).answer).toContain('ok');
  });
});
