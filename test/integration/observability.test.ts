/**
 * Observability: the server's log file (by default in the state directory; --log-file,
 * BUCKLEY_LOG_FILE), `buckley.showLog`, one debug line per request, and traceparent carried to
 * the coordinator.
 */
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCoordinatorProcess } from '../helpers/coordinators.js';
import { startingClients } from '../helpers/lspClient.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();

describe('observability', () => {
  it('logs each request with its duration and outcome to --log-file, and the coordinator sees the same traceparent', async () => {
    const coordinator = await startCoordinatorProcess(['--log-level', 'debug', '--agent', process.execPath, SCRIPTED_AGENT]);
    let coordinatorLog = '';
    coordinator.process.stderr!.on('data', (chunk) => (coordinatorLog += chunk));
    try {
      const logFile = join(tempDir('buckley-log'), 'buckley.log');
      const logged = await start({ args: ['--coordinator', coordinator.address, '--log-level', 'debug', '--log-file', logFile] });
      await logged.request('buckley/ask', { question: 'Traced?' });
      await expect(logged.request('buckley/ask', { question: '' })).rejects.toMatchObject({ code: -32602 });
      await logged.shutdown();

      const log = readFileSync(logFile, 'utf8');
      expect(statSync(logFile).mode & 0o777).toBe(0o600);
      expect(log).toMatch(/^\S+Z \d+ \[debug\] buckley\/ask \d+\.\d ms ok$/m);
      expect(log).toMatch(/^\S+Z \d+ \[debug\] buckley\/ask \d+\.\d ms error -32602: params\.question: question must not be empty$/m);
      const traceparent = /traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-01)/.exec(log)?.[1];
      expect(traceparent).toBeDefined();
      expect(coordinatorLog).toContain(`traceparent ${traceparent}`);
    } finally {
      await coordinator.stop();
    }
  });

  describe('the log file', () => {
    const defaultLog = (stateDir: string) => join(stateDir, 'buckley-lsp', 'buckley-lsp.log');

    it('is written by default in the state directory, user-only, and buckley.showLog opens it', async () => {
      const client = await start({ client: 'helix-25.01.1' });
      const opened = client.waitFor('window/showDocument', (params) => params.uri.endsWith('buckley-lsp.log'));
      const result = await client.request('workspace/executeCommand', { command: 'buckley.showLog' });
      const path = defaultLog(client.stateDir);
      expect(result).toEqual({ log: path, opened: true });
      expect(await opened).toEqual({ uri: pathToFileURL(path).href, takeFocus: false });
      expect((await client.request('buckley/status', {})).server.log).toBe(path);
      await client.shutdown();
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readFileSync(path, 'utf8')).toMatch(new RegExp(`^\\S+Z ${client.process.pid} \\[info\\] buckley-lsp \\S+ serving helix`, 'm'));
    });

    it('is named in a message where the editor cannot open documents (Zed)', async () => {
      const client = await start({ client: 'zed-1.6.0.from-source' });
      const said = client.waitFor('window/showMessage', (params) => params.message.startsWith('log file: '));
      await client.request('workspace/executeCommand', { command: 'buckley.showLog' });
      expect((await said).message).toBe(`log file: ${defaultLog(client.stateDir)}`);
    });

    it('is not written with BUCKLEY_LOG_FILE=off, and showLog says so', async () => {
      const client = await start({ env: { BUCKLEY_LOG_FILE: 'off' } });
      expect(await client.request('workspace/executeCommand', { command: 'buckley.showLog' })).toEqual({ log: null, opened: false });
      await client.shutdown();
      expect(existsSync(defaultLog(client.stateDir))).toBe(false);
    });

    it('is moved to .1 when it has grown past 2 MiB', async () => {
      const stateDir = tempDir('buckley-state');
      mkdirSync(join(stateDir, 'buckley-lsp'));
      writeFileSync(defaultLog(stateDir), 'x'.repeat(2 * 1024 * 1024 + 1));
      const client = await start({ stateDir });
      await client.shutdown();
      expect(statSync(`${defaultLog(stateDir)}.1`).size).toBe(2 * 1024 * 1024 + 1);
      expect(statSync(defaultLog(stateDir)).size).toBeLessThan(64 * 1024);
    });

    for (const [what, plant] of [
      ['a named pipe', (path: string) => execFileSync('mkfifo', [path])],
      ['a symbolic link', (path: string) => symlinkSync(join(tempDir('buckley-elsewhere'), 'target'), path)],
      ['a directory', (path: string) => mkdirSync(path)],
    ] as const) {
      it(`is not written when ${what} stands in its place: the server works and says why`, async () => {
        const stateDir = tempDir('buckley-state');
        mkdirSync(join(stateDir, 'buckley-lsp'));
        plant(defaultLog(stateDir));
        const client = await start({ stateDir });
        const said = await client.waitFor('window/showMessage', (params) => params.message.includes('log file'));
        expect(said.message).toBe('cannot write its log file (the LSP log says why)');
        const logged = await client.waitFor('window/logMessage', (params) => params.message.startsWith('cannot write the log file'));
        expect(logged.message).toContain(defaultLog(stateDir));
        expect(logged.message).toContain(`it is ${what}`);
        expect(await client.request('buckley/ask', { question: 'Still there?' })).toMatchObject({ answer: expect.any(String) });
      });
    }
  });
});
