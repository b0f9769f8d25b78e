/**
 * Our standalone coordinator driven over gRPC by a seeded caller that sends well-encoded requests
 * with hostile content — every RPC of the service, every field of its messages filled from the
 * .proto's own descriptors with strings, numbers, lists and maps of every awkward kind, and the
 * metadata we read (identity, session, intent, conversation, buffers, terminals…) made up — plus
 * some bytes that are no protobuf at all; tasks run meanwhile with the scripted agent, and their
 * requests (approvals, files, writes, questions, terminals) are answered with nonsense, by the
 * wrong caller, or not at all. Every call ends with a reply or a status in words (never a
 * JavaScript message), within its deadline; the coordinator lives on and serves a good task after.
 */
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { messageMaker, service, typeOf } from '../helpers/protoFuzz.js';
import { AGENT_HEADER, BUFFERS_HEADER, CONVERSATION_HEADER, DETACH_HEADER, INTENT_HEADER, QUESTIONS_HEADER, SESSION_HEADER, TERMINALS_HEADER } from '../../src/wire/contract.js';
import { startCoordinatorProcess, type CoordinatorProcess } from '../helpers/coordinators.js';
import { fileUri, SCRIPTED_AGENT } from '../helpers/paths.js';
import { pickWith, seeded } from '../helpers/random.js';
import { tempDir } from '../helpers/temp.js';
import { requireNats, startNats, stopAllNats } from '../helpers/nats.js';

const CALLS = 360;
const WORKERS = 6;
/** Long past anything the scripted agent takes: a call still open then is one left hanging. */
const DEADLINE_MS = 45_000;
/** What a status a person can act on never reads like: a JavaScript failure. */
const CRASH = /Internal error|TypeError|ReferenceError|RangeError|Cannot read prop|is not a function|is not iterable|\[object Object\]|(?<!received )undefined/;
/** The requests of a task its caller answers, and the RPC each is answered with. */
const ANSWERS = { approval: ['ApproveToolExecution', 'execution_id'], file_request: ['ProvideFile', 'request_id'], file_write: ['ConfirmFileWrite', 'request_id'], question: ['AnswerQuestion', 'request_id'], terminal: ['AnswerTerminal', 'request_id'] } as const;

const stops: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});
afterAll(stopAllNats);

interface Outcome {
  method: string;
  raw: boolean;
  code: number;
  details: string;
  messages: string[];
}

/** What the fuzz has learnt that makes its next requests nearer the mark. */
interface Known {
  sessions: string[];
  tasks: string[];
  requests: string[];
}

function fuzzer(seed: number, workspace: string) {
  const random = seeded(seed);
  const pick = pickWith(random);
  const known: Known = { sessions: [], tasks: [], requests: [] };
  const some = <T>(items: T[], otherwise: () => T) => (items.length && random() < 0.6 ? pick(items) : otherwise());
  const text = (): string =>
    pick([
      '', 'x', 'INSTANT hi', 'what is this?', 'Tidy the config', 'PLAN', 'THINK', '/review it', fileUri(`${workspace}/a.ts`), fileUri(workspace), workspace,
      'file:///etc/passwd', '../../../etc/passwd', '\u0000', 'a'.repeat(70_000), '__proto__', 'constructor', 'fuzzer', 'colleague', '😀\ud800', 'ask', 'task', 'edit',
      () => some(known.sessions, () => 'no-session'), () => some(known.tasks, () => 'no-task'), () => some(known.requests, () => 'no-request'),
    ].map((item) => (typeof item === 'function' ? item : () => item)))();
  const message = messageMaker(random, text);
  const ascii = () => pick(['fuzzer', 'fuzzer', 'colleague', '', 'x'.repeat(4_000), 'a b', '1', '2', '0', 'ask', 'edit', 'nonsense', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']);
  const metadata = (caller?: string) => {
    const made = new grpc.Metadata();
    if (caller) made.set(AGENT_HEADER, caller);
    for (const header of [...(caller ? [] : [AGENT_HEADER, AGENT_HEADER]), SESSION_HEADER, INTENT_HEADER, BUFFERS_HEADER, QUESTIONS_HEADER, TERMINALS_HEADER, CONVERSATION_HEADER, DETACH_HEADER, 'traceparent']) {
      if (random() < 0.5) continue;
      made.set(header, header === SESSION_HEADER ? some(known.sessions, ascii) : ascii());
    }
    return made;
  };
  const prompt = () => pick(['INSTANT hi', 'what is this?', 'Tidy the config', 'PLAN', 'THINK', 'TOKENS', 'do it ASK USER confirm', 'do it ASK USER choice', 'RUN echo hi', 'TERMINAL echo hi', 'CRASH NOW', 'MALFORMED', 'UNSAFE', '/review it', text()]);
  const task = () => ({
    agent_id: 'fuzzer',
    query: prompt(),
    message: { role: 'user', content: prompt() },
    ...(random() < 0.7 ? { context: { document: { uri: fileUri(`${workspace}/a.ts`), content: 'export const a = 1;\n', language_id: 'typescript', workspace_root: fileUri(workspace), selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 5 } } }, metadata: random() < 0.5 ? {} : message(typeOf('EditorContext')).metadata } } : {}),
  });
  /** The outcomes of the answers to tasks' requests, made meanwhile. */
  const answers: Outcome[] = [];
  return { random, pick, known, message, metadata, task, answers };
}

/** The coordinator alone, or a replica of a team on NATS; its agent the scripted one, in its sandbox. */
async function coordinator(store: 'memory' | 'nats'): Promise<CoordinatorProcess> {
  const home = tempDir('grpc-fuzz-home');
  const team = store === 'nats' ? ['--nats', (await startNats()).url, '--replica', 'fuzzed'] : [];
  const running = await startCoordinatorProcess([...team, '--agent', process.execPath, SCRIPTED_AGENT], { HOME: home, XDG_STATE_HOME: home, XDG_CONFIG_HOME: home });
  stops.push(() => running.stop());
  return running;
}

const runs: ['memory' | 'nats', number][] = [['memory', 20261129], ['memory', 5], ...(requireNats() ? [['nats', 20261129] as ['nats', number]] : [])];

describe.each(runs)('seeded fuzz of the gRPC face, tasks %s (seed %i)', (store, seed) => {
  it('ends every call with a reply or a status in words, and lives on', async () => {
    const workspace = tempDir('grpc-fuzz-workspace');
    mkdirSync(`${workspace}/src`);
    writeFileSync(`${workspace}/a.ts`, 'export const a = 1;\n');
    const running = await coordinator(store);
    const client = new grpc.Client(running.address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    stops.push(async () => client.close());
    const fuzz = fuzzer(seed, workspace);
    const outcomes: Outcome[] = [];
    const methods = Object.keys(service);
    let left = CALLS;
    const worker = async () => {
      while (left-- > 0) {
        // A third are tasks asked as a bridge would, to have them run and ask; the rest anything.
        if (fuzz.random() < 0.35) outcomes.push(await call(client, { ...fuzz, metadata: () => fuzz.metadata('fuzzer') }, fuzz.pick(['StreamTask', 'StreamTask', 'SendMessage']), fuzz.task()));
        else outcomes.push(await call(client, fuzz, fuzz.pick(methods)));
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));

    outcomes.push(...fuzz.answers);
    const unanswered = outcomes.filter((outcome) => outcome.code === grpc.status.DEADLINE_EXCEEDED);
    const unworded = outcomes.filter((outcome) => !outcome.raw && (CRASH.test(outcome.details) || outcome.messages.some((message) => CRASH.test(message))));
    expect({ unanswered, unworded }).toEqual({ unanswered: [], unworded: [] });
    // It was tried, not skipped: tasks ran, and their requests were met.
    expect(outcomes.filter((outcome) => outcome.method === 'StreamTask' && outcome.code === grpc.status.OK).length).toBeGreaterThan(3);
    expect(running.process.exitCode).toBeNull();
    expect(running.said()).not.toMatch(/TypeError|ReferenceError|Cannot read prop|Unhandled|uncaught/i);
    // And it still serves a caller that asks well.
    const good = await call(client, { ...fuzz, random: () => 1, metadata: () => new grpc.Metadata() }, 'StreamTask', { query: 'INSTANT good', agent_id: 'fuzzer' });
    expect(good).toMatchObject({ code: grpc.status.OK });
    expect(good.messages.join('')).toContain('Done');
  }, 600_000);
});

type Fuzz = ReturnType<typeof fuzzer>;

/** One call of `name`, with a made-up request (or `request`); its outcome once it ends. */
function call(client: grpc.Client, fuzz: Fuzz, name: string, request?: Record<string, unknown>): Promise<Outcome> {
  const method = service[name]!;
  const raw = !request && fuzz.random() < 0.1;
  const body = request ?? fuzz.message(method.requestType.type);
  const serialize = raw ? () => Buffer.from(Array.from({ length: Math.floor(fuzz.random() * 64) }, () => Math.floor(fuzz.random() * 256))) : method.requestSerialize;
  const metadata = fuzz.metadata();
  const options = { deadline: Date.now() + DEADLINE_MS };
  const outcome: Outcome = { method: name, raw, code: grpc.status.OK, details: '', messages: [] };
  const ended = (error: grpc.ServiceError | null) => Object.assign(outcome, error ? { code: error.code, details: error.details ?? error.message } : {});
  if (!method.responseStream) {
    return new Promise((resolve) => client.makeUnaryRequest(method.path, serialize, method.responseDeserialize, body, metadata, options, (error, reply) => {
      learn(fuzz.known, reply);
      resolve(ended(error));
    }));
  }
  return new Promise((resolve) => {
    const stream = client.makeServerStreamRequest(method.path, serialize, method.responseDeserialize, body, metadata, options);
    stream.on('data', (event: Record<string, any>) => {
      learn(fuzz.known, event);
      if (typeof event.message === 'string') outcome.messages.push(event.message);
      if (typeof event.answer_delta === 'string') outcome.messages.push(event.answer_delta);
      for (const [kind, [rpc, idField]] of Object.entries(ANSWERS)) {
        const id = event[kind]?.[idField];
        if (typeof id !== 'string' || !id) continue;
        // Its requests: answered by its caller with whatever the fuzz makes, after someone else tried; or left (the call cancelled).
        const roll = fuzz.random();
        if (roll < 0.15) {
          stream.cancel();
          continue;
        }
        const answer = (as: () => grpc.Metadata) => call(client, { ...fuzz, metadata: as }, rpc, { ...fuzz.message(service[rpc]!.requestType.type), [idField]: id }).then((outcome) => fuzz.answers.push(outcome));
        void (roll < 0.3 ? answer(fuzz.metadata) : Promise.resolve()).then(() => answer(() => metadata));
      }
    });
    stream.on('error', () => undefined);
    stream.on('status', (status: grpc.StatusObject) => resolve(ended(status.code === grpc.status.OK || status.code === grpc.status.CANCELLED ? null : ({ code: status.code, details: status.details } as grpc.ServiceError))));
  });
}

function learn(known: Known, reply: Record<string, any> | undefined): void {
  if (!reply) return;
  if (typeof reply.session_id === 'string' && reply.session_id) known.sessions.push(reply.session_id);
  if (typeof reply.task_id === 'string' && reply.task_id) known.tasks.push(reply.task_id);
  for (const task of Array.isArray(reply.tasks) ? reply.tasks : []) known.tasks.push(task.task_id);
  for (const [kind, [, idField]] of Object.entries(ANSWERS)) if (typeof reply[kind]?.[idField] === 'string') known.requests.push(reply[kind][idField]);
}
