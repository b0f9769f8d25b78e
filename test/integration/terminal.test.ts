/**
 * `buckley-lsp` started by hand in a terminal (stdin a TTY, here the pseudo-terminal `script`
 * makes) says on stderr what it is waiting for; started by an editor (stdin a pipe) it says
 * nothing outside LSP.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

describe('started by hand', () => {
  it('says it waits for an editor on stdin, and what to run instead; Ctrl-C ends it', async () => {
    const terminal = spawn('script', ['-qfec', `exec ${process.execPath} ${BIN}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: tempDir('buckley-home') } });
    let shown = '';
    const exited = new Promise<number | null>((resolve) => terminal.once('close', resolve));
    await new Promise<void>((resolve) =>
      terminal.stdout.on('data', (chunk: Buffer) => {
        shown += chunk.toString('utf8');
        if (shown.includes('Ctrl-C ends it.')) resolve();
      }),
    );
    expect(shown).toContain('buckley-lsp is a language server: it waits for an editor to speak LSP on its stdin.');
    expect(shown).toContain('buckley-lsp doctor');
    terminal.stdin.write('\x03');
    // Ended by SIGINT without an LSP shutdown: exit code 1, as LSP says for `exit` without `shutdown`.
    expect(await exited).toBe(1);
  });

  it('says nothing of it when an editor starts it (stdin a pipe)', async () => {
    const server = spawn(process.execPath, [BIN, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: tempDir('buckley-home') } });
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    server.stdout.resume();
    const exited = new Promise((resolve) => server.once('close', resolve));
    server.stdin.end();
    await exited;
    expect(stderr).toBe('');
  });
});
