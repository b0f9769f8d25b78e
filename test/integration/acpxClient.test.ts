/**
 * `buckley-lsp acp` behind a command-line ACP client from npm — acpx 0.19.1 (installed with the real
 * agents, into `.agents/`), as its users run it
 * (`acpx --agent "<command>" exec "<prompt>"`), with the embedded coordinator and the scripted
 * agent behind: the answer reaches it; the edit is put to it with our risk in words, on the tool
 * call it shows; its permission policy decides (`--approve-reads` denies the edit, `--approve-all`
 * allows it). acpx prints the JSON-RPC traffic with `--format json`, read here. And the line of
 * the docs, run as written (`buckley-lsp` and `gemini`, the scripted agent, on PATH).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGENTS_DIR } from '../helpers/agents.js';
import { BIN, SCRIPTED_AGENT } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';
import { tempDir } from '../helpers/temp.js';

/** Installed with the real agents (`npm run install-agents`): its lock needs `npm install`, as theirs do. */
const ACPX = join(AGENTS_DIR, 'node_modules', 'acpx', 'dist', 'cli.js');
const installed = existsSync(ACPX);
if (!installed && process.env.CI) throw new Error(`acpx not found at ${ACPX} — CI must install it (node scripts/install-agents.mjs)`);

/** acpx's one-shot prompt to `buckley-lsp acp`, with its permission policy: the messages it printed, and its exit code. */
async function acpxExec(policy: '--approve-reads' | '--approve-all', prompt: string): Promise<{ messages: any[]; code: number | null; stderr: string }> {
  const cwd = tempDir('buckley-acpx-ws');
  const home = tempDir('buckley-acpx-home');
  mkdirSync(cwd, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(cwd, 'README.md'), '# read me\n');
  const child = spawn(process.execPath, [ACPX, '--agent', `${process.execPath} ${BIN} acp`, policy, '--format', 'json', '--timeout', '60', 'exec', prompt], {
    cwd,
    // Its sessions (~/.acpx) and buckley-lsp's state in a home of the test's own.
    env: { ...process.env, HOME: home, XDG_STATE_HOME: undefined, BUCKLEY_AGENT: `${process.execPath} ${SCRIPTED_AGENT}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // acpx has its own --timeout; this deadline holds should it not keep it.
  const deadline = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve)).finally(() => clearTimeout(deadline));
  const messages = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
  return { messages, code, stderr };
}
const answerOf = (messages: any[]) => messages.filter((m) => m.params?.update?.sessionUpdate === 'agent_message_chunk').map((m) => m.params.update.content.text).join('');

describe.runIf(installed)('buckley-lsp acp behind acpx (a command-line ACP client from npm)', () => {
  it('answers its one-shot prompt, and puts the edit to it with our risk in words, on the call it shows: denied by --approve-reads', async () => {
    const { messages, stderr } = await acpxExec('--approve-reads', 'Tidy the config');
    expect(messages.find((m) => m.result?.agentInfo)?.result.agentInfo).toMatchObject({ name: 'buckley-lsp', title: 'Buckley: node scripted-agent.mjs' });
    const asked = messages.filter((m) => m.method === 'session/request_permission');
    expect(asked.map((m) => m.params.toolCall.title), stderr).toEqual(['Edit config.json (medium)']);
    expect(asked[0].params.toolCall.content[0].content.text).toMatch(/^medium — /);
    const shown = messages.filter((m) => m.params?.update?.sessionUpdate === 'tool_call').map((m) => m.params.update.toolCallId);
    expect(shown).toContain(asked[0].params.toolCall.toolCallId);
    expect(messages.find((m) => m.id === asked[0].id && m.result?.outcome)?.result.outcome).toEqual({ outcome: 'selected', optionId: 'reject' });
    expect(answerOf(messages)).toContain('Permission to read: yes; permission to edit: no.');
    expect(messages.find((m) => m.result?.stopReason)?.result.stopReason).toBe('end_turn');
  });

  it('with --approve-all, the edit is allowed and the agent goes on', async () => {
    const { messages, code, stderr } = await acpxExec('--approve-all', 'Tidy the config');
    expect(answerOf(messages), stderr).toContain('Permission to read: yes; permission to edit: yes.');
    expect(code).toBe(0);
  });

  it("runs the docs' line as written: the answer printed, the edit denied", () => {
    const cwd = tempDir('buckley-acpx-ws');
    const home = tempDir('buckley-acpx-home');
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    const line = readmeSnippet('acpx').trim();
    const run = spawnSync('sh', ['-c', line], { cwd, env: { ...process.env, HOME: home, XDG_STATE_HOME: undefined, BUCKLEY_AGENT: undefined, PATH: `${userPath()}:${join(AGENTS_DIR, 'node_modules', '.bin')}` }, encoding: 'utf8', timeout: 60_000 });
    expect(run.stdout, run.stderr).toContain('You asked: what does this repo do');
    expect(run.stdout).toContain('Permission to read: yes; permission to edit: no.');
  });
});
