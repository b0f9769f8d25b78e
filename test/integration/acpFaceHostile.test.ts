/**
 * `buckley-lsp acp` fed what no well-behaved client sends, over its real stdin: text that is not
 * JSON, a batch, a request before `initialize`, params of the wrong shape, a relative workspace, a
 * session that does not exist, and a message larger than it reads (60 MB). Each gets a JSON-RPC
 * error in words; the process lives on and answers the next request.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, SCRIPTED_AGENT } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** The face with the scripted agent behind it, written to line by line; its answers by id (null: the ones JSON-RPC cannot tie to a request). */
function rawFace() {
  const home = tempDir('buckley-acp-hostile');
  const child = spawn(process.execPath, [BIN, 'acp', '--agent', `${process.execPath} ${SCRIPTED_AGENT}`], { env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const answers: Record<string, unknown>[] = [];
  const waiting = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    answers.push(JSON.parse(line) as Record<string, unknown>);
    for (const wake of waiting) wake();
  });
  stops.push(async () => {
    child.stdin.end();
    await exited;
  });
  const answerTo = async (id: number | string | null, count = 1): Promise<Record<string, unknown>[]> => {
    for (;;) {
      const found = answers.filter((answer) => answer.id === id);
      if (found.length >= count) return found;
      await new Promise<void>((resolve) => waiting.add(resolve));
    }
  };
  return {
    send: (line: string) => new Promise<void>((resolve, reject) => child.stdin.write(`${line}\n`, (error) => (error ? reject(error) : resolve()))),
    answerTo,
    stderr: () => stderr,
    alive: () => child.exitCode === null,
    /** The answer's words streamed so far (agent_message_chunk). */
    said: () => answers.map((message) => (message.method === 'session/update' ? ((message.params as any).update?.content?.text ?? '') : '')).join(''),
  };
}

const request = (id: number | string, method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

describe('buckley-lsp acp, fed hostile input', () => {
  it('answers each bad message with a JSON-RPC error in words and lives on', async () => {
    const face = rawFace();
    await face.send('not json at all');
    await face.send('[{"jsonrpc":"2.0","id":1,"method":"initialize"}]');
    expect((await face.answerTo(null, 2)).map((answer) => answer.error)).toMatchObject([{ code: -32700 }, { code: -32600, message: expect.stringContaining('batches are not supported') }]);
    await face.send(request(2, 'session/new', { cwd: '/tmp', mcpServers: [] }));
    expect((await face.answerTo(2))[0]!.error).toMatchObject({ code: -32600, message: expect.stringContaining("must be initialized before 'session/new'") });
    await face.send(request(3, 'initialize', { protocolVersion: 'one' }));
    // Said in words, not "Invalid params" alone (the SDK's schema tree stays in data).
    expect((await face.answerTo(3))[0]!.error).toMatchObject({ code: -32602, message: 'Invalid params: protocolVersion: expected number, received string' });
    await face.send(request(4, 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    expect((await face.answerTo(4))[0]!.result).toMatchObject({ agentInfo: { name: 'buckley-lsp' } });
    await face.send(request(5, 'session/new', { cwd: 'relative/path', mcpServers: [] }));
    expect((await face.answerTo(5))[0]!.error).toMatchObject({ code: -32602, message: expect.stringContaining('cwd must be an absolute path, not relative/path') });
    await face.send(request(6, 'session/prompt', { sessionId: 'no-such-session', prompt: [{ type: 'text', text: 'hi' }] }));
    expect((await face.answerTo(6))[0]!.error).toMatchObject({ code: -32002 });
    await face.send(request(7, 'session/load', { sessionId: '../../etc/passwd', cwd: '/tmp', mcpServers: [] }));
    expect((await face.answerTo(7))[0]!.error).toMatchObject({ code: -32002 });
    expect(face.alive()).toBe(true);
  });

  it('takes a workspace only as an absolute path to a folder here, in session/new, load and resume alike', async () => {
    const face = rawFace();
    await face.send(request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    await face.answerTo(1);
    const workspace = tempDir('buckley-acp-hostile-ws');
    await face.send(request(2, 'session/new', { cwd: join(workspace, 'not-made'), mcpServers: [] }));
    expect((await face.answerTo(2))[0]!.error).toEqual({ code: -32602, message: `Invalid params: cwd ${join(workspace, 'not-made')} is not a folder on this machine: open the session in a project's folder` });
    await face.send(request(3, 'session/new', { cwd: workspace, mcpServers: [] }));
    const { sessionId } = (await face.answerTo(3))[0]!.result as { sessionId: string };
    await face.send(request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] }));
    await face.answerTo(4);
    for (const [id, method] of [[5, 'session/load'], [6, 'session/resume']] as const) {
      await face.send(request(id, method, { sessionId, cwd: 'relative/path', mcpServers: [] }));
      expect((await face.answerTo(id))[0]!.error).toEqual({ code: -32602, message: 'Invalid params: cwd must be an absolute path, not relative/path' });
    }
    await face.send(request(7, 'session/resume', { sessionId, cwd: workspace, mcpServers: [] }));
    expect((await face.answerTo(7))[0]!.result).toMatchObject({ modes: { currentModeId: 'task' } });
  });

  it('answers a message larger than it reads (60 MB) with an error naming it and the bound, and goes on with the session', async () => {
    const face = rawFace();
    await face.send(request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    await face.answerTo(1);
    await face.send(request(2, 'session/new', { cwd: tempDir('buckley-acp-hostile-ws'), mcpServers: [] }));
    const { sessionId } = (await face.answerTo(2))[0]!.result as { sessionId: string };
    const image = 'A'.repeat(60 * 1024 * 1024);
    await face.send(request('huge', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'look' }, { type: 'image', mimeType: 'image/png', data: image }] }));
    expect((await face.answerTo('huge'))[0]!.error).toEqual({ code: -32600, message: expect.stringMatching(/^the session\/prompt message was 60 MB, over the 48 MB buckley-lsp acp reads in one message: send less/) });
    await face.send(request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'INSTANT' }] }));
    expect((await face.answerTo(3))[0]!.result).toEqual({ stopReason: 'end_turn' });
    expect(face.stderr()).toContain('the session/prompt message was 60 MB');
  });

  it("costs an agent's message larger than the coordinator reads (a 40 MB write, a 40 MB update) that message only: the agent goes on, told why", async () => {
    const face = rawFace();
    await face.send(request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    await face.answerTo(1);
    await face.send(request(2, 'session/new', { cwd: tempDir('buckley-acp-hostile-ws'), mcpServers: [] }));
    const { sessionId } = (await face.answerTo(2))[0]!.result as { sessionId: string };
    await face.send(request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'HUGE WRITE 40' }] }));
    expect((await face.answerTo(3))[0]!.result).toEqual({ stopReason: 'end_turn' });
    expect(face.said()).toContain('write failed (-32600): the fs/write_text_file message was 40 MB, over the 32 MB buckley-lsp reads in one message: send less in it; still here: prompt #1 of process ');
    const agentProcess = /prompt #1 of (process \w+)/.exec(face.said())![1]!;
    await face.send(request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'HUGE UPDATE 40' }] }));
    expect((await face.answerTo(4))[0]!.result).toEqual({ stopReason: 'end_turn' });
    expect(face.said()).toContain(`[scripted-agent.mjs sent an update of 40 MB here, over the 32 MB buckley-lsp reads in one message: left out]\n\nstill here: prompt #2 of ${agentProcess}`);
    expect(face.stderr()).toContain('the session/update message was 40 MB, over the 32 MB buckley-lsp reads in one message: send less in it (dropped)');
  });
});
