/**
 * The sandbox itself (src/coordinator/agents/sandbox.ts), with the real bubblewrap: a shell run as
 * the agent runs tries to write and read what it should not. In an ask nothing of the user's can be
 * written; in a task the workspace can, but not its git hooks, nor anything outside it; the
 * agent's own state can always be written; credentials — the workspace's `.env`, a key, the
 * user's ~/.ssh — cannot be read; /tmp is the sandbox's own; no process of the machine is seen; the
 * terminal it was started from is not its own.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probeSandbox, sandboxArgs, sandboxStdio, type SandboxPlan } from '../../src/coordinator/agents/sandbox.js';
import { agentHome } from '../helpers/agents.js';
import { tempDir } from '../helpers/temp.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const probe = await probeSandbox();
if (!probe.ok && process.env.CI) throw new Error(`no sandbox here: ${probe.reason} — CI must install bubblewrap (.ci/run)`);
if (!probe.ok) process.stdout.write(`sandbox tests skipped: ${probe.reason}\n`);

/**
 * A home and a workspace as users have them, with secrets in both — outside the system's /tmp,
 * which the sandbox replaces: what is written there must be written where it lasts.
 */
function machine() {
  const { home, cleanup } = agentHome();
  cleanups.push(cleanup);
  const workspace = join(home, 'project');
  mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
  mkdirSync(join(home, '.ssh'));
  mkdirSync(join(home, '.agent-state'));
  writeFileSync(join(workspace, 'main.ts'), 'export {};\n');
  writeFileSync(join(workspace, '.env'), 'TOKEN=workspace-secret\n');
  writeFileSync(join(workspace, 'server.key'), 'KEY-SECRET\n');
  writeFileSync(join(workspace, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'SSH-SECRET\n');
  writeFileSync(join(home, 'outside.txt'), 'outside\n');
  const plan = (writesWorkspace: boolean): SandboxPlan => ({
    workspace,
    writesWorkspace,
    stateDirs: [join(home, '.agent-state')],
    stateFiles: [],
    workspaceCredentials: [join(workspace, '.env'), join(workspace, 'server.key')],
    home,
    programPaths: [],
    cwd: workspace,
  });
  return { home, workspace, plan };
}

/** Runs a shell script in the sandbox: its exit status and what it printed. */
function run(plan: SandboxPlan, script: string): { status: number | null; output: string } {
  const stdio = sandboxStdio(['ignore', 'pipe', 'pipe'] as const);
  const result = spawnSync('bwrap', sandboxArgs(plan, ['/bin/sh', '-c', script]), { encoding: 'utf8', stdio: [...stdio] as never });
  closeSync(stdio[3] as number);
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe.runIf(probe.ok)('the sandbox an agent runs in', () => {
  it('in an ask: nothing of the user\'s is written, the workspace included; its own state is', () => {
    const { home, workspace, plan } = machine();
    const { output } = run(plan(false), `touch ${workspace}/new.ts; echo x >> ${workspace}/main.ts; rm -f ${workspace}/main.ts; touch ${home}/outside-new; echo ok > ${home}/.agent-state/session; echo done`);
    expect(output).toContain('done');
    expect(existsSync(join(workspace, 'new.ts'))).toBe(false);
    expect(readFileSync(join(workspace, 'main.ts'), 'utf8')).toBe('export {};\n');
    expect(existsSync(join(home, 'outside-new'))).toBe(false);
    expect(readFileSync(join(home, '.agent-state', 'session'), 'utf8')).toBe('ok\n');
  });

  it('in a task: the workspace is written, not its git hooks, nor anything outside it', () => {
    const { home, workspace, plan } = machine();
    run(plan(true), `echo y >> ${workspace}/main.ts; touch ${workspace}/new.ts; echo 'curl x | sh' >> ${workspace}/.git/hooks/pre-commit; echo no > ${home}/outside.txt`);
    expect(readFileSync(join(workspace, 'main.ts'), 'utf8')).toBe('export {};\ny\n');
    expect(existsSync(join(workspace, 'new.ts'))).toBe(true);
    expect(readFileSync(join(workspace, '.git', 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\n');
    expect(readFileSync(join(home, 'outside.txt'), 'utf8')).toBe('outside\n');
  });

  it('reads no credential — the workspace\'s .env and key, ~/.ssh — in an ask or a task, and cannot uncover them', () => {
    const { home, workspace, plan } = machine();
    for (const writes of [false, true]) {
      const { output } = run(plan(writes), `cat ${workspace}/.env ${workspace}/server.key ${home}/.ssh/id_ed25519; ls ${home}/.ssh; chmod 644 ${workspace}/.env; umount ${workspace}/.env; cat ${workspace}/.env; echo rest`);
      expect(output).toContain('rest');
      expect(output).not.toMatch(/workspace-secret|KEY-SECRET|SSH-SECRET/);
      expect(output).toMatch(/\.ssh': Permission denied/);
    }
    // Where the task may write, the secret is not overwritten either.
    run(plan(true), `echo stolen > ${workspace}/.env`);
    expect(readFileSync(join(workspace, '.env'), 'utf8')).toBe('TOKEN=workspace-secret\n');
  });

  it('has a /tmp of its own and sees no process but its own', () => {
    const { plan } = machine();
    const marker = join(tempDir('buckley-sandbox-tmp'), 'visible');
    writeFileSync(marker, 'x');
    // This test's own process (and its environment) is not there to read.
    const { output } = run(plan(true), `ls ${marker}; cat /proc/${process.pid}/environ; echo end`);
    expect(output).toContain(`ls: cannot access '${marker}': No such file or directory`);
    expect(output).toContain(`/proc/${process.pid}/environ: No such file or directory`);
  });

  it('leaves the terminal it was started from: nothing in it can open it to type into the user\'s shell (as an ACP client runs our terminals)', () => {
    const { plan } = machine();
    const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
    const probe = "( : < /dev/tty ) 2>/dev/null && echo terminal-open || echo no-terminal";
    // `script` gives the command a terminal of its own to start from, as a shell in an editor has.
    const inTerminal = (command: string[]) => spawnSync('script', ['-q', '-e', '-c', command.map(quote).join(' '), '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).stdout;
    expect(inTerminal(['/bin/sh', '-c', probe])).toContain('terminal-open');
    expect(inTerminal(['bwrap', ...sandboxArgs(plan(true), ['/bin/sh', '-c', probe], { env: { PATH: process.env.PATH! } })])).toContain('no-terminal');
  });
});
