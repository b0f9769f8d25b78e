/**
 * Well-framed JSON-RPC with hostile params, against a server with its coordinator and agent
 * running: every method the server takes — its commands, its requests, the documents' notifications,
 * settings — called hundreds of times with fields of every wrong type, with tasks and approvals
 * going on meanwhile, and the server's own requests answered with nonsense. Every request is answered with a result or an error in words (never
 * InternalError, never a JavaScript message), no handler fails, and the server lives on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Commands } from '../../src/bridge/names.js';
import { CRASH, expectNoCrash } from '../helpers/crash.js';
import { startingClients } from '../helpers/lspClient.js';
import { fileUri } from '../helpers/paths.js';
import { pickWith, seeded } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const start = startingClients();
const MESSAGES = 700;

describe.each([20261129, 7])('seeded fuzz of the params (seed %i)', (seed) => {
  it('answers every request in words, fails no handler, and lives on', async () => {
    const random = seeded(seed);
    const pick = pickWith(random);
    const workspace = tempDir('fuzz-workspace');
    mkdirSync(`${workspace}/src`);
    writeFileSync(`${workspace}/config.json`, '{"a":1}\n');
    const uri = fileUri(`${workspace}/src/a.ts`);
    const client = await start({
      cwd: workspace,
      initialize: { rootUri: fileUri(workspace), workspaceFolders: [{ uri: fileUri(workspace), name: 'workspace' }], capabilities: { window: { workDoneProgress: true, showMessage: {} }, workspace: { configuration: true, applyEdit: true }, experimental: { buckley: { approveTool: true, taskProgress: true, askText: true } } } },
      handlers: {
        'buckley/approveTool': () => pick([{ approved: true }, { approved: false }, null, { approved: true, forTask: true }, { approved: 'yes' }, 42]),
        'workspace/applyEdit': () => pick([{ applied: true }, { applied: false, failureReason: 'no' }, null, 'applied']),
        'buckley/askText': () => pick([{ text: 'yes' }, null, { text: 5 }]),
        'window/showMessageRequest': (params: { actions?: unknown[] }) => pick([params.actions?.[0] ?? null, null, { title: 'not offered' }, 5, 'x']),
        'window/showDocument': () => pick([{ success: true }, { success: 'yes' }, null, 5]),
        'workspace/configuration': (params: { items: unknown[] }) => params.items.map(() => pick([null, {}, { approvals: { autoApprove: 'high' } }, { context: { maxBytes: -5 } }, { log: { level: 7 } }, 5, 'x', [], { agent: { command: 5 } }])),
      },
    });
    await client.open(`${workspace}/src/a.ts`, 'export const a = 1;\nfunction f() {\n  return a;\n}\n');
    const hostile = () => pick<unknown>([null, '', 'x', -1, 0.5, 1e308, 2 ** 53, {}, [], [[]], { a: 1 }, true, 'file:///etc/passwd', '../../../etc/passwd', 'untitled:Untitled-1', '\u0000', 'a'.repeat(70_000), '__proto__', 'constructor', { toString: 1 }]);
    const position = () => (random() < 0.7 ? { line: Math.floor(random() * 6), character: Math.floor(random() * 10) } : { line: hostile(), character: hostile() });
    const range = () => (random() < 0.8 ? { start: position(), end: position() } : hostile());
    const someUri = () => pick([uri, uri, hostile()]);
    const words = () => pick(['what is this?', 'Tidy the config', 'x', hostile()]);
    const argument = () => {
      const made: Record<string, unknown> = {};
      const fields: Record<string, () => unknown> = { question: words, task: words, instruction: words, uri: someUri, range, text: hostile, conversation: hostile, taskId: hostile, executionId: hostile, remember: hostile, forTask: hostile, path: hostile, line: hostile, model: hostile, mode: hostile, id: hostile, option: hostile };
      for (const [name, value] of Object.entries(fields)) if (random() < 0.35) made[name] = value();
      return random() < 0.9 ? made : hostile();
    };
    const context = () => (random() < 0.8 ? { activeFile: someUri(), selection: range(), openFiles: pick([[uri], hostile()]) } : hostile());
    const requests: (() => [string, unknown])[] = [
      () => ['workspace/executeCommand', { command: pick([...Object.values(Commands), 'buckley.nope', hostile()]), arguments: random() < 0.85 ? [argument()] : hostile() }],
      () => ['buckley/ask', random() < 0.7 ? { question: words(), context: context(), conversation: random() < 0.3 ? hostile() : undefined } : hostile()],
      () => ['buckley/executeTask', random() < 0.7 ? { task: words(), context: context() } : hostile()],
      () => ['buckley/cancelTask', { taskId: hostile() }],
      () => ['buckley/status', pick([undefined, null, {}, hostile()])],
      () => ['textDocument/hover', { textDocument: { uri: someUri() }, position: position() }],
      () => ['textDocument/codeAction', { textDocument: { uri: someUri() }, range: range(), context: pick([{ diagnostics: [] }, hostile()]) }],
      () => ['textDocument/completion', { textDocument: { uri: someUri() }, position: position() }],
      () => ['textDocument/inlineCompletion', { textDocument: { uri: someUri() }, position: position(), context: pick([{ triggerKind: 1 }, hostile()]) }],
    ];
    const notifications: (() => [string, unknown])[] = [
      () => ['textDocument/didChange', { textDocument: { uri: someUri(), version: pick([Math.floor(random() * 100), hostile()]) }, contentChanges: [{ range: range(), text: pick(['x', '\n', hostile()]) }] }],
      () => ['textDocument/didOpen', { textDocument: { uri: pick([uri, hostile(), fileUri(`${workspace}/config.json`)]), languageId: pick(['typescript', hostile()]), version: pick([1, hostile()]), text: pick(['abc', hostile()]) } }],
      () => ['textDocument/didClose', { textDocument: { uri: someUri() } }],
      () => ['textDocument/didSave', { textDocument: pick([{ uri: someUri() }, hostile()]) }],
      () => ['workspace/didChangeConfiguration', { settings: pick([null, { buckley: argument() }, { buckley: { approvals: { autoApprove: hostile() }, context: { maxBytes: hostile() } } }, hostile()]) }],
      () => ['$/cancelRequest', { id: pick([Math.floor(random() * MESSAGES), hostile()]) }],
      () => ['window/workDoneProgress/cancel', { token: hostile() }],
    ];
    const wrong: string[] = [];
    const answered: Promise<unknown>[] = [];
    for (let i = 0; i < MESSAGES; i++) {
      if (random() < 0.6) {
        const [method, params] = pick(requests)();
        const said = (what: string) => wrong.push(`${method} ${JSON.stringify(params)?.slice(0, 300)} → ${what.slice(0, 400)}`);
        answered.push(
          client.request(method, params).then(
            (result) => CRASH.test(JSON.stringify(result ?? null)) && said(`result ${JSON.stringify(result)}`),
            (error: { code: number; message: string }) => (error.code === -32603 || CRASH.test(error.message)) && said(`error ${error.code}: ${error.message}`),
          ),
        );
      } else await client.notify(...pick(notifications)());
    }
    await Promise.all(answered);
    expect(wrong).toEqual([]);
    await expectNoCrash(client);
  }, 120_000);
});
