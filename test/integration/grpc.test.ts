/**
 * The promise gRPC client and our coordinator, over real gRPC on 127.0.0.1 port 0: deadlines,
 * cancellation, reply validation, identity metadata, UNIMPLEMENTED for RPCs we do not serve,
 * and StreamTask streaming an answer from the scripted ACP agent.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AcpDriver } from '../../src/coordinator/agents/acp.js';
import { CoordinatorClient } from '../../src/wire/client.js';
import { CoordinatorError } from '../../src/wire/errors.js';
import { agentCommunicationService } from '../../src/wire/protos.js';
import { startCoordinator } from '../../src/coordinator/server.js';
import { serverCapabilitiesSchema, sessionSchema, taskEventSchema, taskListSchema, type TaskEvent } from '../../src/wire/contract.js';
import { RootLogger } from '../../src/logger.js';
import { FIXTURES, SCRIPTED_AGENT } from '../helpers/paths.js';

const logger = new RootLogger('error');
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A grpc-js server with the given handlers, on a free loopback port. */
async function serve(handlers: grpc.UntypedServiceImplementation): Promise<string> {
  const server = new grpc.Server();
  server.addService(agentCommunicationService().service, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  cleanups.push(() => server.forceShutdown());
  return `127.0.0.1:${port}`;
}

/** A client on a connection of its own (grpc-js would otherwise share one between equal channels). */
function client(address: string, agentId = 'tester', secret?: string): CoordinatorClient {
  const result = new CoordinatorClient({ address, agentId, secret, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
  cleanups.push(() => result.close());
  return result;
}

describe('CoordinatorClient', () => {
  it('sends x-buckley-agent-id and validates the reply', async () => {
    let seen: string | undefined;
    const address = await serve({
      CreateSession: (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
        seen = String(call.metadata.get('x-buckley-agent-id')[0]);
        callback(null, { session_id: 's-1', agent_id: call.request.agent_id });
      },
    });
    const session = await client(address).unary('CreateSession', { agent_id: 'tester' }, sessionSchema, { timeoutMs: 5000 });
    expect(session.session_id).toBe('s-1');
    expect(seen).toBe('tester');
  });

  it('turns a malformed reply into an INTERNAL CoordinatorError naming the field', async () => {
    const address = await serve({
      CreateSession: (_call: unknown, callback: grpc.sendUnaryData<any>) => callback(null, { session_id: '' }),
    });
    const error = await client(address).unary('CreateSession', { agent_id: 'tester' }, sessionSchema, { timeoutMs: 5000 }).catch((e) => e);
    expect(error).toBeInstanceOf(CoordinatorError);
    expect(error).toMatchObject({ method: 'CreateSession', code: grpc.status.INTERNAL, details: 'malformed reply: session_id: the coordinator returned a session without session_id' });
  });

  it('ends a call that gets no answer at its deadline', async () => {
    const address = await serve({ GetServerCapabilities: () => undefined });
    const error = await client(address).unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 200 }).catch((e) => e);
    expect(error).toMatchObject({ method: 'GetServerCapabilities', code: grpc.status.DEADLINE_EXCEEDED });
  });

  it('cancels a call when its AbortSignal fires, and the server sees the cancellation', async () => {
    let serverSawCancel!: () => void;
    let serverGotCall!: () => void;
    const cancelledOnServer = new Promise<void>((resolve) => (serverSawCancel = resolve));
    const arrived = new Promise<void>((resolve) => (serverGotCall = resolve));
    const address = await serve({
      GetServerCapabilities: (call: grpc.ServerUnaryCall<any, any>) => {
        call.on('cancelled', serverSawCancel);
        serverGotCall();
      },
    });
    const controller = new AbortController();
    const pending = client(address).unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 30_000, signal: controller.signal });
    await arrived;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: grpc.status.CANCELLED, cancelled: true });
    await cancelledOnServer;
  });

  it('reports an unreachable coordinator as UNAVAILABLE', async () => {
    const error = await client('127.0.0.1:1').unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5000 }).catch((e) => e);
    expect(error).toMatchObject({ code: grpc.status.UNAVAILABLE, unavailable: true });
  });
});

describe('our coordinator', () => {
  async function coordinator(options: { callerGraceMs?: number; roots?: string[]; keepaliveMs?: number } = {}) {
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger, clientVersion: 'test' });
    const running = await startCoordinator('127.0.0.1:0', { driver, logger, ...options });
    cleanups.push(() => running.close());
    return running;
  }

  it('announces its features and answers UNIMPLEMENTED for RPCs it does not serve', async () => {
    const running = await coordinator();
    const c = client(running.address);
    expect(await c.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5000 })).toEqual({
      protocol_version: '1.0',
      // An agent not started in a sandbox cannot keep an ask read-only: not announced, and said why.
      features: ['chat', 'stream_task', 'answer_stream', 'tool_approval', 'approval_events', 'editor_context', 'ask_intent', 'editor_buffers', 'edit_selection', 'conversations', 'usage', 'plan', 'thoughts', 'questions', 'task_events', 'prompt_images', 'client_terminals', 'agent_controls'],
      max_agents: 1,
      supported_auth: ['insecure_local'],
      notes: ['the agent runs without a sandbox (it is not started in one)'],
    });
    await expect(c.unary('DiscoverAgents', {}, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
    await expect(c.unary('ApplyEdits', {}, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
  });

  it('checks identity and arguments like Buckley does', async () => {
    const running = await coordinator();
    const c = client(running.address, 'editor-1');
    await expect(c.unary('CreateSession', { agent_id: 'someone-else' }, sessionSchema, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    await expect(c.unary('CreateSession', { agent_id: '' }, sessionSchema, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(c.unary('SendMessage', { agent_id: 'editor-1', message: { role: 'user', content: '  ' } }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'message.content must not be empty',
    });
    await expect(c.unary('UpdateSessionContext', { session_id: 'nope' }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    // A session is its caller's: another that names it finds none — neither its workspace nor its agent's conversation.
    const mine = await c.unary('CreateSession', { agent_id: 'editor-1', metadata: { workspace_root: FIXTURES } }, sessionSchema, { timeoutMs: 5000 });
    const other = client(running.address, 'editor-2');
    const none = { code: grpc.status.NOT_FOUND, details: `no session ${mine.session_id} of yours (unknown, or unused for long and forgotten): create one with CreateSession` };
    await expect(other.unary('UpdateSessionContext', { session_id: mine.session_id, metadata: { workspace_root: '/' } }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject(none);
    await expect(other.stream('StreamTask', { agent_id: 'editor-2', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 30_000, metadata: { 'x-buckley-session-id': mine.session_id } }).next()).rejects.toMatchObject(none);
    await expect(c.unary('UpdateSessionContext', { session_id: mine.session_id, metadata: { note: 'x'.repeat(70_000) } }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: "the session's metadata would hold 69 KB: at most 64 KB" });
    await c.unary('UpdateSessionContext', { session_id: mine.session_id, metadata: { note: 'kept' } }, z.object({}), { timeoutMs: 5000 });
    // A refused stream ends with its status at once, not at the caller's deadline.
    await expect(c.stream('StreamTask', { task_id: 't', agent_id: 'editor-1', query: ' ' }, taskEventSchema, { timeoutMs: 60_000 }).next()).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'query must not be empty',
    });
  });

  it('streams an answer over StreamTask as answer_delta events and ends with completed', async () => {
    const running = await coordinator();
    const c = client(running.address, 'editor-1');
    const session = await c.unary('CreateSession', { agent_id: 'editor-1' }, sessionSchema, { timeoutMs: 5000 });
    const events: TaskEvent[] = [];
    for await (const event of c.stream('StreamTask', { task_id: 't-1', agent_id: 'editor-1', query: 'What is up?' }, taskEventSchema, {
      timeoutMs: 30_000,
      metadata: { 'x-buckley-session-id': session.session_id, 'x-buckley-intent': 'ask' },
    })) {
      events.push(event);
    }
    const answer = events.map((event) => event.answer_delta).join('');
    expect(answer).toContain('You asked: What is up?');
    expect(answer).toContain('permission to edit: no');
    expect(events.every((event) => event.task_id === 't-1')).toBe(true);
    expect(events.at(-1)).toMatchObject({ status: 'completed', progress: 100 });
    const tools = events.flatMap((event) => event.tool_executions);
    expect(tools).toContainEqual(expect.objectContaining({ id: 'edit-1', kind: 'edit', status: 'failed' }));
  });

  it('announces tool approvals in TaskEvents and takes exactly one decision each, from the caller only — its identity, on any connection', async () => {
    const running = await coordinator();
    const owner = client(running.address, 'editor-1');
    const intruder = client(running.address, 'intruder');
    // The same identity on another connection (the editor's bridge, moved to another replica or reconnected).
    const again = client(running.address, 'editor-1');
    // The session names its workspace: where the agent's relative paths land, so their risk is known.
    const folder = mkdtempSync(join(tmpdir(), 'buckley-approvals-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const workspace = pathToFileURL(folder).href;
    const session = await owner.unary('CreateSession', { agent_id: 'editor-1', metadata: { workspace_root: workspace } }, sessionSchema, { timeoutMs: 5000 });
    const empty = z.object({});
    const approvals: NonNullable<TaskEvent['approval']>[] = [];
    let answer = '';
    for await (const event of owner.stream('StreamTask', { task_id: 't-2', agent_id: 'editor-1', query: 'Tidy the config' }, taskEventSchema, {
      timeoutMs: 30_000,
      metadata: { 'x-buckley-session-id': session.session_id },
    })) {
      answer += event.answer_delta;
      if (event.status !== 'awaiting_approval' || !event.approval) continue;
      const id = event.approval.execution_id;
      approvals.push(event.approval);
      await expect(intruder.unary('ApproveToolExecution', { execution_id: id }, empty, { timeoutMs: 5000 })).rejects.toMatchObject({
        code: grpc.status.PERMISSION_DENIED,
        details: 'only the caller that started the task can decide its approvals',
      });
      if (event.approval.tool === 'Read README.md') await owner.unary('ApproveToolExecution', { execution_id: id }, empty, { timeoutMs: 5000 });
      else await again.unary('RejectToolExecution', { execution_id: id, reason: 'not now' }, empty, { timeoutMs: 5000 });
      await expect(owner.unary('ApproveToolExecution', { execution_id: id }, empty, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    }
    expect(answer).toContain('Permission to read: yes; permission to edit: no.');
    expect(approvals).toMatchObject([
      { tool: 'Read README.md', risk: 'low', parameters: { path: 'README.md' }, agent_id: 'scripted-agent.mjs', kind: 'read', reason: '' },
      { tool: 'Edit config.json', risk: 'medium', parameters: { path: 'config.json', content: '{}' }, kind: 'edit', reason: 'edits files' },
    ]);
    expect(new Set(approvals.map((a) => a.execution_id)).size).toBe(2);
    // The task's id, then the request's own: any coordinator of a team finds the task from it.
    for (const approval of approvals) expect(approval.execution_id).toMatch(/^t-2\.[0-9a-f]{32}$/);
    await expect(owner.unary('RejectToolExecution', { execution_id: 'no-such-approval' }, empty, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it('keeps a detached task running when its stream ends: followed again from a sequence, cancelled only by its caller (CancelTask)', async () => {
    const running = await coordinator();
    const owner = client(running.address, 'editor-1');
    const other = client(running.address, 'someone-else');
    const stream = owner.stream('StreamTask', { task_id: 't-detach', agent_id: 'editor-1', query: 'HANG' }, taskEventSchema, { timeoutMs: 30_000, metadata: { 'x-buckley-detach': '1' } });
    let first: TaskEvent | undefined;
    for await (const event of stream) {
      if (event.answer_delta) {
        first = event;
        break;
      }
    }
    // The stream is gone; the task is not.
    const listed = await owner.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 });
    expect(listed.tasks).toContainEqual(expect.objectContaining({ task_id: 't-detach', owner: 'editor-1', status: 'running' }));
    const followed = owner.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['t-detach'], from_sequence: first!.sequence }, taskEventSchema, { timeoutMs: 30_000 });
    expect((await followed.next()).value).toMatchObject({ sequence: first!.sequence, answer_delta: first!.answer_delta });
    // Followed from far past what it has: from after its last record, so its end still comes.
    const ahead = owner.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['t-detach'], from_sequence: first!.sequence + 1e9 }, taskEventSchema, { timeoutMs: 30_000 });
    const aheadEvents = (async () => {
      const got: TaskEvent[] = [];
      for await (const event of ahead) got.push(event);
      return got;
    })();
    await expect(other.unary('CancelTask', { task_id: 't-detach' }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: 'only the caller that started the task can cancel it' });
    await owner.unary('CancelTask', { task_id: 't-detach' }, z.object({}), { timeoutMs: 5000 });
    const rest: TaskEvent[] = [];
    for await (const event of followed) rest.push(event);
    expect(rest.at(-1)).toMatchObject({ status: 'cancelled' });
    expect((await aheadEvents).map((event) => [event.sequence, event.status])).toEqual([[rest.at(-1)!.sequence, 'cancelled']]);
    // Over, and followed from past its end: its final event again, and the call ends — it does not wait for what will never come.
    const past: TaskEvent[] = [];
    for await (const event of owner.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['t-detach'], from_sequence: rest.at(-1)!.sequence + 1 }, taskEventSchema, { timeoutMs: 10_000 })) past.push(event);
    expect(past.map((event) => [event.sequence, event.status])).toEqual([[rest.at(-1)!.sequence, 'cancelled']]);
    await expect(owner.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['no-such-task'], from_sequence: 0 }, taskEventSchema, { timeoutMs: 5000 }).next()).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    // What one call follows is bounded.
    const many = Array.from({ length: 100_000 }, (_, i) => `t-${i}`);
    await expect(owner.stream('SubscribeTaskEvents', { plan_id: '', task_ids: many, from_sequence: 0 }, taskEventSchema, { timeoutMs: 5000 }).next()).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'task_ids names 100,000 tasks: follow at most 1,000 a call' });
  });

  it('cancels a detached task whose caller does not follow it again within the grace; a colleague watching does not keep it', async () => {
    const running = await coordinator({ callerGraceMs: 400 });
    const owner = client(running.address, 'editor-1');
    const colleague = client(running.address, 'colleague');
    const detached = async (taskId: string) => {
      for await (const event of owner.stream('StreamTask', { task_id: taskId, agent_id: 'editor-1', query: 'HANG' }, taskEventSchema, { timeoutMs: 30_000, metadata: { 'x-buckley-detach': '1' } })) if (event.answer_delta) return;
    };
    const follow = async (who: CoordinatorClient, taskId: string, until?: AbortSignal) => {
      const events: TaskEvent[] = [];
      try {
        for await (const event of who.stream('SubscribeTaskEvents', { plan_id: '', task_ids: [taskId], from_sequence: 0 }, taskEventSchema, { timeoutMs: 30_000, signal: until })) events.push(event);
      } catch (error) {
        if (!until?.aborted) throw error;
      }
      return events;
    };
    await detached('t-gone');
    // Only a colleague follows it: its caller is still gone, and the task ends cancelled, in words.
    const watched = await follow(colleague, 't-gone');
    expect(watched.at(-1)).toMatchObject({ status: 'cancelled', message: 'Task cancelled: its caller went away and did not follow it again within 0 s' });
    await detached('t-back');
    // Its caller follows it again: well past the grace, it still runs — and is cancelled by its caller only.
    const stop = new AbortController();
    const following = follow(owner, 't-back', stop.signal);
    const later = Date.now() + 1_200;
    while (Date.now() < later) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await owner.unary('ListTasks', { running_only: true }, taskListSchema, { timeoutMs: 5000 })).tasks).toContainEqual(expect.objectContaining({ task_id: 't-back', status: 'running' }));
    await owner.unary('CancelTask', { task_id: 't-back' }, z.object({}), { timeoutMs: 5000 });
    expect((await following).at(-1)).toMatchObject({ status: 'cancelled', message: 'Task cancelled' });
  });

  it("notices by its pings a caller whose connection went silent (its machine asleep, no TCP reset), and takes its task's caller as gone", async () => {
    const running = await coordinator({ callerGraceMs: 400, keepaliveMs: 500 });
    // Between the caller and the coordinator: a link that can stop carrying anything, both ways, without closing.
    const frozen: Socket[] = [];
    const link = createServer((socket) => {
      const upstream = connect(running.port, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      frozen.push(socket, upstream);
      for (const end of [socket, upstream]) end.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => link.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => link.close(resolve)));
    cleanups.push(() => frozen.forEach((end) => end.destroy()));
    const owner = client(`127.0.0.1:${(link.address() as AddressInfo).port}`, 'editor-1');
    const colleague = client(running.address, 'colleague');
    for await (const event of owner.stream('StreamTask', { task_id: 't-silent', agent_id: 'editor-1', query: 'HANG' }, taskEventSchema, { timeoutMs: 60_000, metadata: { 'x-buckley-detach': '1' } })) {
      if (!event.answer_delta) continue;
      // Its caller still holds the stream, but nothing goes through any more.
      for (const end of frozen) {
        end.unpipe();
        end.pause();
      }
      break;
    }
    const watched: TaskEvent[] = [];
    for await (const event of colleague.stream('SubscribeTaskEvents', { plan_id: '', task_ids: ['t-silent'], from_sequence: 0 }, taskEventSchema, { timeoutMs: 30_000 })) watched.push(event);
    expect(watched.at(-1)).toMatchObject({ status: 'cancelled', message: expect.stringContaining('its caller went away') });
  });

  it('takes tasks only in the workspaces under its roots (--roots); one that names none is taken', async () => {
    const running = await coordinator({ roots: ['/srv/checkouts'] });
    const caller = client(running.address, 'editor-1');
    const elsewhere = await caller.unary('CreateSession', { agent_id: 'editor-1', metadata: { workspace_root: 'file:///home/someone/project' } }, sessionSchema, { timeoutMs: 5000 });
    const refused = caller.stream('StreamTask', { task_id: 't-roots', agent_id: 'editor-1', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 30_000, metadata: { 'x-buckley-session-id': elsewhere.session_id } });
    await expect(refused.next()).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: 'this coordinator takes tasks in workspaces under /srv/checkouts only, not in /home/someone/project: open a folder under them, or use a coordinator that serves it',
    });
    const events: TaskEvent[] = [];
    for await (const event of caller.stream('StreamTask', { task_id: 't-nowhere', agent_id: 'editor-1', query: 'INSTANT' }, taskEventSchema, { timeoutMs: 30_000 })) events.push(event);
    expect(events.at(-1)).toMatchObject({ status: 'completed' });
  });

  it('refuses a task whose workspace is named relative — it would be found from the coordinator\'s own folder — saying so', async () => {
    const running = await coordinator();
    const caller = client(running.address, 'editor-1');
    const context = (root: string) => ({ related_documents: [], symbols: [], metadata: { workspace_root: root } });
    for (const root of ['.', 'src', 'file://elsewhere/project', 'untitled:Untitled-1']) {
      await expect(caller.stream('StreamTask', { task_id: '', agent_id: 'editor-1', query: 'INSTANT', context: context(root) }, taskEventSchema, { timeoutMs: 30_000 }).next()).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `the task's workspace "${root}" is neither a file: URI nor an absolute path: name the folder whole`,
      });
    }
    const session = await caller.unary('CreateSession', { agent_id: 'editor-1', metadata: { workspace_root: '..' } }, sessionSchema, { timeoutMs: 5000 });
    await expect(caller.unary('SendMessage', { agent_id: 'editor-1', message: { role: 'user', content: 'hi' } }, z.object({}), { timeoutMs: 5000, metadata: { 'x-buckley-session-id': session.session_id } })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('takes an editor context as proto3 leaves it — a selection without its ends, ranges below the first line — and runs its task', async () => {
    const running = await coordinator();
    const caller = client(running.address, 'editor-1');
    const document = { uri: 'file:///tmp/a.ts', content: 'const a = 1;\n', selection: { end: { line: -3, character: -1 } }, visible_ranges: [{}, { start: { line: -2 } }] };
    const context = { document, related_documents: [{ uri: 'file:///tmp/b.ts', content: 'b', selection: {} }], symbols: [], metadata: {} };
    const events: TaskEvent[] = [];
    for await (const event of caller.stream('StreamTask', { task_id: 't-proto3', agent_id: 'editor-1', query: 'What is up?', context }, taskEventSchema, { timeoutMs: 30_000, metadata: { 'x-buckley-intent': 'ask' } })) events.push(event);
    expect(events.at(-1)).toMatchObject({ status: 'completed' });
    expect(events.map((event) => event.answer_delta).join('')).toContain('You asked: What is up?');
  });

  it("asks the caller that holds buffers for an agent's read, and takes the answer only from that caller", async () => {
    const driver = new AcpDriver({ command: [process.execPath, SCRIPTED_AGENT], logger, clientVersion: 'test' });
    const running = await startCoordinator('127.0.0.1:0', { driver, logger });
    cleanups.push(() => running.close());
    const owner = client(running.address, 'editor-1');
    const impostor = client(running.address, 'someone-else');
    const session = await owner.unary('CreateSession', { agent_id: 'editor-1', metadata: { workspace_root: FIXTURES } }, sessionSchema, { timeoutMs: 5000 });
    const empty = z.object({});
    const path = `${FIXTURES}workspace/retry.ts`;
    const requests: NonNullable<TaskEvent['file_request']>[] = [];
    let answer = '';
    for await (const event of owner.stream('StreamTask', { task_id: 't-3', agent_id: 'editor-1', query: `READ ${path} 2 1` }, taskEventSchema, {
      timeoutMs: 30_000,
      metadata: { 'x-buckley-session-id': session.session_id, 'x-buckley-editor-buffers': '1' },
    })) {
      answer += event.answer_delta;
      if (!event.file_request) continue;
      requests.push(event.file_request);
      const content = { request_id: event.file_request.request_id, open: true, text: 'the line the editor has\n', version: 7 };
      await expect(impostor.unary('ProvideFile', content, empty, { timeoutMs: 5000 })).rejects.toMatchObject({
        code: grpc.status.PERMISSION_DENIED,
        details: 'only the caller that started the task can answer its file requests',
      });
      await owner.unary('ProvideFile', content, empty, { timeoutMs: 5000 });
      await expect(owner.unary('ProvideFile', content, empty, { timeoutMs: 5000 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    }
    expect(requests).toEqual([{ request_id: expect.stringMatching(/^t-3\.[0-9a-f]{32}$/), path, line: 2, limit: 1 }]);
    expect(answer).toContain(`read ${path}:\n~~~~\nthe line the editor has\n\n~~~~`);
  });

  it('with a secret, serves only callers that send it: every RPC refuses the others', async () => {
    const running = await startCoordinator('127.0.0.1:0', { logger, secret: 'the-bridge-secret' });
    cleanups.push(() => running.close());
    const stranger = client(running.address, 'editor-1');
    const guesser = client(running.address, 'editor-1', 'not-the-secret');
    const unauthenticated = { code: grpc.status.UNAUTHENTICATED, details: 'this coordinator serves only the editor that started it' };
    for (const caller of [stranger, guesser]) {
      await expect(caller.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5000 })).rejects.toMatchObject(unauthenticated);
      await expect(caller.unary('CreateSession', { agent_id: 'editor-1' }, sessionSchema, { timeoutMs: 5000 })).rejects.toMatchObject(unauthenticated);
      await expect(caller.unary('ApproveToolExecution', { execution_id: 'x' }, z.object({}), { timeoutMs: 5000 })).rejects.toMatchObject(unauthenticated);
      const stream = caller.stream('StreamTask', { task_id: 't', agent_id: 'editor-1', query: 'hello' }, taskEventSchema, { timeoutMs: 5000 });
      await expect(stream.next()).rejects.toMatchObject(unauthenticated);
    }
    const bridge = client(running.address, 'editor-1', 'the-bridge-secret');
    expect((await bridge.unary('GetServerCapabilities', {}, serverCapabilitiesSchema, { timeoutMs: 5000 })).protocol_version).toBe('1.0');
  });

  it('refuses to listen in plaintext on a non-loopback address', async () => {
    await expect(startCoordinator('0.0.0.0:0', { logger })).rejects.toThrow('plaintext is only allowed on loopback addresses');
  });
});
