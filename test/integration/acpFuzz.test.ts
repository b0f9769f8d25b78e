/**
 * `buckley-lsp acp` driven by a seeded client that sends well-framed ACP with hostile params —
 * every method the face takes, with fields of every wrong type, with prompts running the scripted
 * agent's writes, commands, permissions and plans meanwhile — and that answers the face's own
 * requests (permissions, file reads and writes, terminals, forms) with nonsense. Every request is
 * answered with a result or an error in words (never a JavaScript message nor a bare "Invalid
 * params"), only JSON-RPC reaches stdout, no answer but the allow option chosen has a file written
 * (the one outside the workspace is never allowed), and the process lives on.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, SCRIPTED_AGENT } from '../helpers/paths.js';
import { pickWith, seeded } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const MESSAGES = 220;
/** What a message a person can act on never reads like: a JavaScript failure, or a JSON-RPC code's name alone. */
const CRASH = /Internal error|TypeError|ReferenceError|Cannot read prop|is not a function|is not iterable|\[object Object\]|(?<!received )undefined|^Invalid (params|request)$/;
/** How long the face has, once the last message is sent, to answer them all (prompts cancelled first). */
const SETTLE_MS = 30_000;

type Message = { jsonrpc?: unknown; id?: unknown; method?: string; params?: any; result?: unknown; error?: { code: number; message: string } };

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** The face with the scripted agent behind it; `answer` answers its requests to the client. */
function face(home: string, answer: (request: Message) => unknown) {
  const child = spawn(process.execPath, [BIN, 'acp', '--agent', `${process.execPath} ${SCRIPTED_AGENT}`], {
    env: { PATH: process.env.PATH, HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-20_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.once('exit', () => {
    for (const wake of waiting) wake();
  });
  const answered = new Map<unknown, Message>();
  const waiting = new Set<() => void>();
  const notJson: string[] = [];
  const write = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message: Message;
    try {
      message = JSON.parse(line) as Message;
    } catch {
      notJson.push(line.slice(0, 200));
      return;
    }
    if (message.jsonrpc !== '2.0') notJson.push(line.slice(0, 200));
    if (message.method && message.id !== undefined) {
      // The face asks the client: answered (or not, or with an error) as the seed says.
      const reply = answer(message);
      if (reply === 'never') return;
      write(reply === 'error' ? { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'the client broke' } } : { jsonrpc: '2.0', id: message.id, result: reply });
    } else if (!message.method) {
      answered.set(message.id, message);
      for (const wake of waiting) wake();
    }
  });
  stops.push(async () => {
    child.stdin.end();
    await exited;
  });
  return { write, answered, waiting, notJson, stderr: () => stderr, alive: () => child.exitCode === null && child.signalCode === null };
}

describe.each([20261129, 11])('seeded fuzz of buckley-lsp acp (seed %i)', (seed) => {
  it('answers every request in words, writes nothing it was not allowed to, and lives on', { timeout: 180_000 }, async () => {
    const random = seeded(seed);
    const pick = pickWith(random);
    const home = tempDir('acp-fuzz-home');
    const workspace = tempDir('acp-fuzz-workspace');
    const outside = join(tempDir('acp-fuzz-outside'), 'keep.txt');
    writeFileSync(join(workspace, 'a.txt'), 'one\ntwo\n');
    writeFileSync(outside, 'untouched\n');
    const hostile = () => pick<unknown>([null, '', 'x', -1, 0.5, 1e308, {}, [], [[]], { a: 1 }, true, '/etc/passwd', '../../etc/passwd', '\u0000', 'a'.repeat(70_000), '__proto__', { toString: 1 }]);
    const clientAnswer = (request: Message): unknown => {
      switch (request.method) {
        case 'session/request_permission': {
          const notAllowed = ['never', 'error', null, {}, { outcome: null }, { outcome: { outcome: 'selected' } }, { outcome: { outcome: 'selected', optionId: 5 } }, { outcome: { outcome: 'selected', optionId: 'reject' } }, { outcome: { outcome: 'selected', optionId: 'ALLOW' } }, { outcome: { outcome: 'cancelled', optionId: 'allow' } }, { outcome: 'allow' }, { optionId: 'allow' }];
          // The file outside the workspace is never allowed: no answer of these may have it written.
          if (JSON.stringify(request.params).includes(outside)) return pick(notAllowed);
          return pick([...notAllowed, { outcome: { outcome: 'selected', optionId: 'allow' } }, { outcome: { outcome: 'selected', optionId: 'allow' } }]);
        }
        case 'fs/read_text_file':
          return pick(['error', null, {}, { content: 5 }, { content: 'from the client\n' }, { content: 'a'.repeat(200_000) }]);
        case 'fs/write_text_file':
          return pick(['error', null, {}, 5]);
        case 'terminal/create':
          return pick(['error', null, {}, { terminalId: 5 }, { terminalId: 't1' }]);
        case 'terminal/output':
          return pick(['error', null, { output: 5 }, { output: 'ok', truncated: false, exitStatus: { exitCode: 'x' } }]);
        case 'terminal/wait_for_exit':
          return pick(['error', null, { exitCode: 0 }, { exitCode: 'zero' }]);
        case 'elicitation/create':
          return pick(['error', null, { action: 'accept', content: hostile() }, { action: 5 }]);
        default:
          return pick(['error', null, {}]);
      }
    };
    const client = face(home, clientAnswer);
    const capabilities = () => (random() < 0.8 ? { fs: { readTextFile: random() < 0.6, writeTextFile: random() < 0.6 }, terminal: random() < 0.5, elicitation: random() < 0.3 ? { form: {} } : hostile() } : hostile());
    const sessions: string[] = [];
    const sessionId = () => (sessions.length && random() < 0.85 ? pick(sessions) : hostile());
    const prompts = ['INSTANT', 'PLAN', 'THINK', `WRITE ${join(workspace, 'b.txt')} "new"`, `WRITE ${outside} "pwned"`, `REPLACE ${outside} "untouched" "pwned"`, `EDIT ${outside} "untouched" "pwned"`, 'RUN echo hi', 'TERMINAL echo hi', 'PERMISSIONS 3 x', 'UNSAFE', 'TODOS', 'TOKENS', `CAT ${outside}`, 'MALFORMED', 'HANG'];
    const block = () =>
      pick<unknown>([
        { type: 'text', text: pick([...prompts, hostile()]) },
        { type: 'resource', resource: { uri: pick([`file://${outside}`, `file://${workspace}/a.txt`, hostile()]), text: pick(['x', hostile()]) } },
        { type: 'resource_link', uri: pick([`file://${outside}`, 'http://127.0.0.1:1/', hostile()]), name: hostile() },
        { type: 'image', mimeType: pick(['image/png', hostile()]), data: pick(['AAAA', hostile()]) },
        { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
        hostile(),
      ]);
    const requests: (() => [string, unknown])[] = [
      () => ['initialize', random() < 0.8 ? { protocolVersion: pick([1, 1, 2, 0, -1, hostile()]), clientCapabilities: capabilities(), clientInfo: pick([{ name: 'fuzz', version: '1' }, hostile()]) } : hostile()],
      () => ['session/new', random() < 0.8 ? { cwd: pick([workspace, workspace, hostile(), '/']), mcpServers: pick([[], [], hostile(), [{ name: 'x', command: hostile(), args: [], env: [] }]]) } : hostile()],
      () => ['session/prompt', random() < 0.9 ? { sessionId: sessionId(), prompt: random() < 0.85 ? [block(), ...(random() < 0.3 ? [block()] : [])] : hostile() } : hostile()],
      () => ['session/set_mode', { sessionId: sessionId(), modeId: pick(['task', 'ask', 'task:plan', hostile()]) }],
      () => ['session/set_config_option', { sessionId: sessionId(), configId: pick(['model', hostile()]), value: hostile() }],
      () => ['session/list', pick([{}, { cwd: workspace }, { cwd: hostile(), cursor: hostile() }, hostile()])],
      () => ['session/load', { sessionId: sessionId(), cwd: pick([workspace, hostile()]), mcpServers: [] }],
      () => ['session/resume', { sessionId: sessionId(), cwd: pick([workspace, hostile()]), mcpServers: pick([[], hostile()]) }],
      () => ['session/close', { sessionId: random() < 0.3 ? sessionId() : hostile() }],
      () => ['session/cancel', { sessionId: sessionId() }],
      () => ['authenticate', { methodId: hostile() }],
      () => [pick(['session/nope', 'fs/read_text_file', '$/cancel_request', '', 'initialize ']), hostile()],
    ];
    client.write({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } } });
    client.write({ jsonrpc: '2.0', id: 'first', method: 'session/new', params: { cwd: workspace, mcpServers: [] } });
    const ids: unknown[] = ['init', 'first'];
    /** Requests other than prompts, which may wait (a HANG) until their session is cancelled. */
    const quick: unknown[] = ['init', 'first'];
    for (let n = 0; n < MESSAGES; n++) {
      // Half the time, a turn as a panel runs one: a prompt well formed, seen to its end (a HANG stopped as a user stops it).
      if (random() < 0.5 && sessions.length) {
        const sessionId = pick(sessions);
        const text = pick(prompts);
        client.write({ jsonrpc: '2.0', id: `turn-${n}`, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }, ...(random() < 0.3 ? [block()] : [])] } });
        if (text === 'HANG' || random() < 0.1) client.write({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
        ids.push(`turn-${n}`);
        // A turn still going after a while (a permission the client never answered) is stopped, as a user would.
        if ((await settled(client, [`turn-${n}`], sessions, 2_000)).length) client.write({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId } });
        await settled(client, [`turn-${n}`], sessions, 10_000);
        continue;
      }
      const [method, params] = pick(requests)();
      const notification = method === 'session/cancel' && random() < 0.8;
      const message = notification ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id: n, method, params };
      client.write(message);
      if (!notification) ids.push(n);
      if (!notification && method !== 'session/prompt') quick.push(n);
      // Now and then, wait for what was sent to be answered (a session made is then known).
      if (random() < 0.15) await settled(client, quick, sessions, 10_000);
    }
    // A prompt that hangs is the client's to cancel: every session cancelled, every request must end.
    await settled(client, ids, sessions, 2_000);
    for (const id of sessions) client.write({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: id } });
    const unanswered = await settled(client, ids, sessions, SETTLE_MS);
    expect(unanswered, `requests never answered; the face's log:\n${client.stderr().slice(-4000)}`).toEqual([]);
    const errors = [...client.answered.values()].flatMap((answer) => (answer.error ? [answer.error.message] : []));
    expect(errors.filter((message) => CRASH.test(message))).toEqual([]);
    expect(client.notJson).toEqual([]);
    expect(readFileSync(outside, 'utf8')).toBe('untouched\n');
    expect(client.alive()).toBe(true);
    // And it still serves a session that is well asked.
    client.write({ jsonrpc: '2.0', id: 'last-new', method: 'session/new', params: { cwd: workspace, mcpServers: [] } });
    await settled(client, ['last-new'], sessions, SETTLE_MS);
    const last = (client.answered.get('last-new')?.result as { sessionId?: string } | undefined)?.sessionId;
    expect(last).toBeTypeOf('string');
    client.write({ jsonrpc: '2.0', id: 'last-prompt', method: 'session/prompt', params: { sessionId: last, prompt: [{ type: 'text', text: 'INSTANT' }] } });
    expect(await settled(client, ['last-prompt'], sessions, SETTLE_MS)).toEqual([]);
    expect(client.answered.get('last-prompt')?.result).toEqual({ stopReason: 'end_turn' });
  });
});

/** Waits until every id is answered (woken by each answer) or `ms` passed: the ids still unanswered. Sessions made are noted. */
async function settled(client: ReturnType<typeof face>, ids: readonly unknown[], sessions: string[], ms: number): Promise<unknown[]> {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    for (const wake of client.waiting) wake();
  }, ms);
  try {
    for (;;) {
      for (const answer of client.answered.values()) {
        const made = (answer.result as { sessionId?: unknown } | null | undefined)?.sessionId;
        if (typeof made === 'string' && !sessions.includes(made)) sessions.push(made);
      }
      const open = ids.filter((id) => !client.answered.has(id));
      if (open.length === 0 || late || !client.alive()) return open;
      await new Promise<void>((resolve) => {
        const wake = () => {
          client.waiting.delete(wake);
          resolve();
        };
        client.waiting.add(wake);
      });
    }
  } finally {
    clearTimeout(timer);
  }
}
