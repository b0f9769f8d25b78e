/**
 * An ACP client's terminals, as Zed runs them: each terminal/create spawns its command for real,
 * in its folder, with the client's own environment (a secret of the user's in it: the editor was
 * started from their shell) plus what it is given; output, wait, kill and release as ACP says. For tests of `buckley-lsp acp` with a client that offers terminals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type * as acp from '@agentclientprotocol/sdk';

type ClientApp = ReturnType<typeof acp.client>;

export function clientTerminals(app: ClientApp, creates: acp.CreateTerminalRequest[], refuse = false): ClientApp {
  const running = new Map<string, { output: string; child: ChildProcess; exited: Promise<{ exitCode: number | null; signal: string | null }> }>();
  let next = 0;
  return app
    .onRequest('terminal/create', ({ params }) => {
      creates.push(params);
      if (refuse) throw new Error('terminals are turned off in this client');
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env: { ...process.env, EDITOR_SHELL_API_KEY: 'sk-users-own', ...Object.fromEntries((params.env ?? []).map((variable) => [variable.name, variable.value])) }, stdio: ['ignore', 'pipe', 'pipe'] });
      const terminal = {
        output: '',
        child,
        exited: new Promise<{ exitCode: number | null; signal: string | null }>((resolve) => {
          child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
          child.once('error', (error) => {
            terminal.output += `${error.message}\n`;
            resolve({ exitCode: 127, signal: null });
          });
        }),
      };
      child.stdout!.on('data', (chunk: Buffer) => (terminal.output += chunk));
      child.stderr!.on('data', (chunk: Buffer) => (terminal.output += chunk));
      const terminalId = `zed-terminal-${++next}`;
      running.set(terminalId, terminal);
      return { terminalId };
    })
    .onRequest('terminal/output', ({ params }) => ({ output: running.get(params.terminalId)!.output, truncated: false }))
    .onRequest('terminal/wait_for_exit', async ({ params }) => running.get(params.terminalId)!.exited)
    .onRequest('terminal/kill', ({ params }) => {
      running.get(params.terminalId)?.child.kill('SIGKILL');
      return {};
    })
    .onRequest('terminal/release', ({ params }) => {
      running.get(params.terminalId)?.child.kill('SIGKILL');
      running.delete(params.terminalId);
      return {};
    });
}
