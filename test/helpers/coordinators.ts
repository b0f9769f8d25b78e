/**
 * Coordinators for tests, all real gRPC on 127.0.0.1: our `buckley-lsp coordinator` as a
 * process, and a Buckley double that does what the real `buckley serve` was seen doing (see
 * the wire contract's "Observed when running it") and records what the bridge sends:
 *
 * - it announces Buckley's features (none of ours: no answer_stream, editor_context,
 *   ask_read_only);
 * - it ignores `context`: only `message.content` / `query` reach its "model";
 * - SendMessage answers the fixed `Plan <id> executed for request: <content>`, never the model's
 *   words, and runs tools without approval (it writes its plan under its project root);
 * - StreamTask sends status lines only, with empty status and progress;
 * - sessions are keyed by agent id (`acp-send-<agent_id>`); an unknown session is made, not
 *   NOT_FOUND; over mutual TLS the caller is its certificate's CN, which must be the agent_id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentCommunicationService } from '../../src/wire/protos.js';
import type { TestCerts } from './certs.js';
import { BIN, REPO, SCRIPTED_AGENT } from './paths.js';

export interface CoordinatorProcess {
  address: string;
  process: ChildProcess;
  /** What it has said on stderr so far (its log). */
  said(): string;
  stop(): Promise<void>;
}

/** How long a coordinator has to listen, or to stop saying why: its start is a call like any other. */
const START_DEADLINE_MS = 60_000;

export function startCoordinatorProcess(args: string[], env: NodeJS.ProcessEnv = {}, listen = '127.0.0.1:0', deadlineMs = START_DEADLINE_MS): Promise<CoordinatorProcess> {
  const child = spawn(process.execPath, [BIN, 'coordinator', '--listen', listen, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`coordinator neither listened nor stopped within ${deadlineMs / 1000} s: ${stderr}`));
    }, deadlineMs);
    child.once('exit', () => clearTimeout(deadline));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      const match = /listening on (127\.0\.0\.1:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(deadline);
        resolve({
          address: match[1]!,
          process: child,
          said: () => stderr,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`coordinator exited with ${code}: ${stderr}`)));
  });
}

/** A replica of a team's coordinator on the NATS server at `natsUrl`, with the scripted agent; `maxRunning` 0: it only serves callers. */
export function startReplica(natsUrl: string, name: string, maxRunning = 4, extra: { args?: string[]; env?: NodeJS.ProcessEnv; deadlineMs?: number } = {}): Promise<CoordinatorProcess> {
  return startCoordinatorProcess(['--nats', natsUrl, '--replica', name, '--max-running', String(maxRunning), ...(extra.args ?? []), '--agent', process.execPath, SCRIPTED_AGENT], extra.env, undefined, extra.deadlineMs);
}

export interface RecordedCall {
  method: string;
  request: any;
  metadata: Record<string, string>;
}

export interface FakeBuckley {
  address: string;
  calls: RecordedCall[];
  /** What its "model" was given: each message content and query, as it reads nothing else. */
  modelInputs: string[];
  /** Tools it ran without asking anyone (as Buckley's pipeline does), e.g. `write_file docs/plans/plan-1.md`. */
  ranUnasked: string[];
  /** Resolves when a call of `method` matching `match` has been recorded. */
  waitFor(method: string, match?: (request: any) => boolean): Promise<RecordedCall>;
  stop(): Promise<void>;
}

/** The features and checks of the real Buckley coordinator (see shared/wire), answering SendMessage. */
export interface FakeBuckleyOptions {
  /** Never answer unary calls: the bridge's deadline must end them. */
  hang?: boolean;
  /** Never answer SendMessage (the rest answers): an ask's own deadline must end it. */
  silentAnswers?: boolean;
  /** How its receipt spells the request back (as it is, by default). */
  spellsBack?: (content: string) => string;
  /** What StreamTask sends, as Buckley does: message lines with empty status and progress. */
  taskMessages?: string[];
  /** Break the StreamTask stream with this error after the messages. */
  taskError?: string;
  /**
   * Announce this tool approval in StreamTask (and list `approval_events`), as a coordinator of
   * ours would — with whatever risk label it says — then end with the decision it received.
   */
  approval?: { tool: string; parameters: Record<string, string>; risk: string; kind?: string };
  /** Its approvals have already ended when decided (it gave up waiting): the decision gets NOT_FOUND. */
  approvalExpired?: boolean;
  /** Serve mutual TLS with these certificates: the caller is its certificate's CN, which must be the agent_id. */
  tls?: TestCerts;
  /** Its project root: where its pipeline writes docs/plans/* (recorded in ranUnasked either way). */
  projectRoot?: string;
  /** Listen on this port of 127.0.0.1 (a restart on the same address); default: a free one. */
  port?: number;
}

export async function startFakeBuckley(options: FakeBuckleyOptions = {}): Promise<FakeBuckley> {
  const calls: RecordedCall[] = [];
  const modelInputs: string[] = [];
  const ranUnasked: string[] = [];
  let plans = 0;
  /** Its plan → execute pipeline: the model gets `input`, tools run unasked, a plan is written. */
  const pipeline = (input: string): string => {
    modelInputs.push(input);
    const plan = `plan-${++plans}`;
    ranUnasked.push(`write_file docs/plans/${plan}.md`);
    if (options.projectRoot) {
      mkdirSync(join(options.projectRoot, 'docs', 'plans'), { recursive: true });
      writeFileSync(join(options.projectRoot, 'docs', 'plans', `${plan}.md`), `# ${plan}\n\n${input}\n`);
    }
    return plan;
  };
  const waiters: { method: string; match: (r: any) => boolean; resolve: (c: RecordedCall) => void }[] = [];
  const record = (method: string, call: { request: any; metadata: grpc.Metadata }) => {
    const metadata = Object.fromEntries(Object.entries(call.metadata.getMap()).map(([k, v]) => [k, String(v)]));
    const recorded = { method, request: call.request, metadata };
    calls.push(recorded);
    for (const waiter of [...waiters]) {
      if (waiter.method === method && waiter.match(call.request)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(recorded);
      }
    }
  };
  /**
   * As Buckley: over mutual TLS the caller is its certificate's CN, on loopback plaintext the
   * x-buckley-agent-id header; either must be the request's agent_id.
   */
  const identity = (call: { metadata: grpc.Metadata; getAuthContext?: () => any }, agentId: string) => {
    const cn = call.getAuthContext?.()?.sslPeerCertificate?.subject?.CN;
    const peer = (Array.isArray(cn) ? cn[0] : cn) || String(call.metadata.get('x-buckley-agent-id')[0] ?? '');
    return !peer || peer === agentId ? undefined : { code: grpc.status.PERMISSION_DENIED, details: `agent mismatch: peer ${peer} cannot act as ${agentId}` };
  };
  const decisions = new Map<string, (decision: string) => void>();
  const server = new grpc.Server();
  const unary = (method: string, handle: (call: any) => [grpc.ServiceError | Partial<grpc.StatusObject> | null, unknown?]) =>
    (call: any, callback: grpc.sendUnaryData<unknown>) => {
      record(method, call);
      if (options.hang) return; // never answers: the bridge's deadline must end the call
      const [error, reply] = handle(call);
      callback(error as any, reply);
    };
  server.addService(agentCommunicationService().service, {
    GetServerCapabilities: unary('GetServerCapabilities', () => [
      null,
      {
        protocol_version: '1.0',
        features: ['chat', 'stream_task', 'tool_approval', 'context_handles', 'inline_completion', 'propose_edits', 'apply_edits', 'editor_state', ...(options.approval ? ['approval_events'] : [])],
        supported_auth: ['mtls', 'insecure_local'],
      },
    ]),
    // As Buckley: one session per agent id, whatever CreateSession is asked; an unknown session is made, not NOT_FOUND.
    CreateSession: unary('CreateSession', (call) => {
      if (!call.request.agent_id) return [{ code: grpc.status.INVALID_ARGUMENT, details: 'agent_id required' }];
      return [identity(call, call.request.agent_id) ?? null, { session_id: `acp-send-${call.request.agent_id}`, agent_id: call.request.agent_id }];
    }),
    UpdateSessionContext: unary('UpdateSessionContext', (call) =>
      call.request.session_id ? [null, {}] : [{ code: grpc.status.INVALID_ARGUMENT, details: 'session_id required' }],
    ),
    StreamTask: (call: grpc.ServerWritableStream<any, any>) => {
      record('StreamTask', call);
      const denied = identity(call, call.request.agent_id);
      if (denied) return call.destroy(Object.assign(new Error(denied.details), denied));
      if (!call.request.query) return call.destroy(Object.assign(new Error('query required'), { code: grpc.status.INVALID_ARGUMENT }));
      if (options.approval) {
        const execution_id = `approval-${calls.length}`;
        call.write({ task_id: call.request.task_id, status: 'awaiting_approval', message: 'waiting', approval: { execution_id, agent_id: 'fake-agent', ...options.approval } });
        decisions.set(execution_id, (decision) => {
          call.write({ task_id: call.request.task_id, status: 'completed', message: 'done', answer_delta: `Decision: ${decision}` });
          call.end();
        });
        return;
      }
      pipeline(call.request.query);
      for (const message of options.taskMessages ?? ['Planning task…', 'Executing plan…', '✅ Task completed']) {
        call.write({ task_id: call.request.task_id, message });
      }
      if (options.taskError) call.emit('error', { code: grpc.status.INTERNAL, details: options.taskError });
      else call.end();
    },
    // Not seen on the real Buckley either: completes, per the proto, with two pieces of one completion.
    StreamInlineCompletions: (call: grpc.ServerWritableStream<any, any>) => {
      record('StreamInlineCompletions', call);
      const denied = identity(call, call.request.agent_id);
      if (denied) return call.destroy(Object.assign(new Error(denied.details), denied));
      call.write({ completion_id: 'c1', text: 'a + ', is_final: false });
      call.write({ completion_id: 'c1', text: 'b;', is_final: true, finish_reason: 'stop' });
      call.end();
    },
    ApproveToolExecution: unary('ApproveToolExecution', (call) => {
      decisions.get(call.request.execution_id)?.(options.approvalExpired ? 'rejected (no decision in time)' : 'approved');
      return options.approvalExpired ? [{ code: grpc.status.NOT_FOUND, details: `no pending approval ${call.request.execution_id} (unknown, or already answered)` }] : [null, {}];
    }),
    RejectToolExecution: unary('RejectToolExecution', (call) => {
      decisions.get(call.request.execution_id)?.('rejected');
      return options.approvalExpired ? [{ code: grpc.status.NOT_FOUND, details: `no pending approval ${call.request.execution_id} (unknown, or already answered)` }] : [null, {}];
    }),
    // Not seen on the real Buckley (the wire doc has its messages, not its replies): proposes, per the
    // proto, one edit of the context's document — the instruction as a comment above the selection.
    ProposeEdits: unary('ProposeEdits', (call) => {
      const denied = identity(call, call.request.agent_id);
      if (denied) return [denied];
      const document = call.request.context?.document;
      if (!document?.uri || !document.selection) return [null, { edits: [], summary: 'nothing selected' }];
      const at = { line: document.selection.start.line, character: 0 };
      // "… in file:///…": the edit is proposed for that file instead (one the editor may not have open).
      const uri = / in (file:\/\/\S+)$/.exec(call.request.instruction)?.[1] ?? document.uri;
      const edit = { uri, range: { start: at, end: at }, new_text: `// ${call.request.instruction}\n` };
      return [null, { plan_id: 'plan-edit', edits: [{ uri, edits: [edit], summary: 'adds a comment', title: 'Say what it does', rank: 1 }], summary: 'one edit' }];
    }),
    SendMessage: (call: any, callback: grpc.sendUnaryData<unknown>) => (options.silentAnswers ? record('SendMessage', call) : answerMessage(call, callback)),
  });
  const answerMessage = unary('SendMessage', (call) => {
      const denied = identity(call, call.request.agent_id);
      if (denied) return [denied];
      const content = call.request.message?.content ?? '';
      if (!content) return [{ code: grpc.status.INVALID_ARGUMENT, details: 'content required' }];
      // `context` is not read: the selection reaches the model only through the content.
      const plan = pipeline(content);
      return [null, { response: { role: 'assistant', content: `Plan ${plan} executed for request: ${options.spellsBack?.(content) ?? content}` } }];
    });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${options.port ?? 0}`, credentialsOf(options.tls), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    address: `127.0.0.1:${port}`,
    calls,
    modelInputs,
    ranUnasked,
    waitFor(method, match = () => true) {
      const seen = calls.find((call) => call.method === method && match(call.request));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ method, match, resolve }));
    },
    stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()),
  };
}

function credentialsOf(tls: TestCerts | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(readFileSync(tls.ca), [{ cert_chain: readFileSync(tls.serverCert), private_key: readFileSync(tls.serverKey) }], true);
}
