/**
 * The server against a coordinator that answers with hostile content: a grpc-js server whose every
 * RPC replies with messages made up from the .proto's descriptors (seeded) — capabilities of any
 * kind, sessions without ids, task streams of events with wrong ids, unknown statuses, approvals,
 * file requests and writes, questions and terminal calls with nonsense in them, huge answers —
 * ending with OK or any status and any words. The editor meanwhile asks, runs tasks, runs the
 * commands, hovers and completes, and answers the server's requests with nonsense too. Every
 * request is answered in words (never InternalError, never a JavaScript message) within its
 * deadline, nothing shown to the user reads like a crash, and the server lives on.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { Commands } from '../../src/bridge/names.js';
import { FEATURES } from '../../src/coordinator/features.js';
import { agentCommunicationService } from '../../src/wire/protos.js';
import { CRASH, expectNoCrash } from '../helpers/crash.js';
import { startingClients } from '../helpers/lspClient.js';
import { fileUri } from '../helpers/paths.js';
import { messageMaker, service, type Method } from '../helpers/protoFuzz.js';
import { pickWith, seeded } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';

const REQUESTS = 160;
/** Long past anything a request here takes: one still unanswered then is left hanging. */
const ANSWER_MS = 90_000;
const STATUSES = ['pending', 'in_progress', 'awaiting_approval', 'completed', 'failed', 'cancelled'];

const start = startingClients();
const servers: grpc.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.forceShutdown();
});

/** A coordinator whose every answer is made up, as `seed` says. */
async function hostileCoordinator(seed: number, workspace: string): Promise<string> {
  const random = seeded(seed);
  const pick = pickWith(random);
  const text = () => pick(['', 'x', 'ok', 'task-1', fileUri(`${workspace}/a.ts`), `${workspace}/a.ts`, '/etc/passwd', '../../x', '\u0000', 'a'.repeat(200_000), '__proto__', '😀\ud800', ...STATUSES, ...FEATURES, '{"a":1}', 'null', '[]']);
  const message = messageMaker(random, text);
  const made = (method: Method) => message(method.responseType.type);
  const failure = () => ({ code: pick([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.NOT_FOUND, grpc.status.INVALID_ARGUMENT, grpc.status.UNKNOWN, grpc.status.RESOURCE_EXHAUSTED]), details: text() });
  const handlers: grpc.UntypedServiceImplementation = {};
  for (const [name, method] of Object.entries(service)) {
    handlers[name] = method.responseStream
      ? (call: grpc.ServerWritableStream<{ task_id?: string }, unknown>) => {
          for (let i = Math.floor(random() * 40); i > 0; i--) {
            const event = made(method);
            // Most of a task's events name it, and say a status it could have; the rest anything.
            if (random() < 0.7) Object.assign(event, { task_id: call.request.task_id || 'task-1', status: pick(STATUSES) });
            call.write(event);
          }
          // Its status after what it wrote (destroy() would send none: grpc-js ends a stream's call with its status only on 'error' or end()).
          if (random() < 0.6) call.end();
          else call.emit('error', Object.assign(new Error('hostile'), failure()));
        }
      : (_call: unknown, callback: grpc.sendUnaryData<unknown>) => {
          if (name === 'GetServerCapabilities' && random() < 0.8) return callback(null, { protocol_version: '1.0', features: FEATURES.filter(() => random() < 0.8), max_agents: 1, supported_auth: ['insecure_local'] });
          if (random() < 0.75) return callback(null, made(method));
          callback(Object.assign(new Error('hostile'), failure()));
        };
  }
  const server = new grpc.Server();
  servers.push(server);
  server.addService(agentCommunicationService().service, handlers);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
  return `127.0.0.1:${port}`;
}

describe.each([20261129, 2])('a hostile coordinator (seed %i)', (seed) => {
  it("is answered in words, whatever it sends: every editor's request ends, and the server lives on", async () => {
    const random = seeded(seed + 1);
    const pick = pickWith(random);
    const workspace = tempDir('hostile-coordinator');
    const uri = fileUri(`${workspace}/a.ts`);
    const client = await start({
      cwd: workspace,
      env: { BUCKLEY_COORDINATOR: await hostileCoordinator(seed, workspace), BUCKLEY_AGENT: undefined },
      initialize: { rootUri: fileUri(workspace), workspaceFolders: [{ uri: fileUri(workspace), name: 'w' }], capabilities: { window: { workDoneProgress: true, showMessage: {}, showDocument: { support: true } }, workspace: { configuration: true, applyEdit: true }, experimental: { buckley: { approveTool: true, taskProgress: true, askText: true } } } },
      handlers: {
        'buckley/approveTool': () => pick([{ approved: true }, { approved: false }, null, { approved: true, forTask: true }]),
        'workspace/applyEdit': () => pick([{ applied: true }, { applied: false, failureReason: 'no' }, null]),
        'buckley/askText': () => pick([{ text: 'yes' }, null]),
        'window/showMessageRequest': (params: { actions?: unknown[] }) => pick([params.actions?.[0] ?? null, null, params.actions?.at(-1) ?? null]),
        'window/showDocument': () => pick([{ success: true }, { success: false }]),
      },
    });
    await client.open(`${workspace}/a.ts`, 'export const a = 1;\nfunction f() {\n  return a;\n}\n');
    const context = { activeFile: uri, selection: { start: { line: 0, character: 0 }, end: { line: 1, character: 3 } } };
    const here = { textDocument: { uri }, position: { line: 1, character: 2 } };
    const requests: (() => [string, unknown])[] = [
      () => ['buckley/ask', { question: 'what is this?', context }],
      () => ['buckley/executeTask', { task: 'Tidy it', context }],
      () => ['workspace/executeCommand', { command: pick(Object.values(Commands)), arguments: [{ uri, range: context.selection, question: 'why?', task: 'do it', instruction: 'shorter', taskId: pick(['task-1', 'x']), executionId: 'task-1.00', option: 0 }] }],
      () => ['buckley/status', {}],
      () => ['textDocument/hover', here],
      () => ['textDocument/codeAction', { textDocument: { uri }, range: context.selection, context: { diagnostics: [] } }],
      () => ['textDocument/inlineCompletion', { ...here, context: { triggerKind: 1 } }],
    ];
    const wrong: string[] = [];
    const answered: Promise<unknown>[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const [method, params] = pick(requests)();
      const said = (what: string) => wrong.push(`${method} ${JSON.stringify(params).slice(0, 200)} → ${what.slice(0, 400)}`);
      let timer: NodeJS.Timeout | undefined;
      const unanswered = new Promise((resolve) => (timer = setTimeout(() => resolve(said('no answer')), ANSWER_MS)));
      const answer = client.request(method, params).then(
        (result) => CRASH.test(JSON.stringify(result ?? null)) && said(`result ${JSON.stringify(result).slice(0, 400)}`),
        (error: { code: number; message: string }) => (error.code === -32603 || CRASH.test(error.message)) && said(`error ${error.code}: ${error.message}`),
      );
      answered.push(Promise.race([answer, unanswered]).finally(() => clearTimeout(timer)));
      // A few at once, as an editor sends them.
      if (i % 4 === 3) await Promise.race(answered.slice(-4));
    }
    await Promise.all(answered);
    expect(wrong).toEqual([]);
    await expectNoCrash(client);
  }, 600_000);
});
