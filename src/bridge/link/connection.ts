/**
 * The bridge's link to a coordinator: remote (an address is configured) or embedded (our
 * coordinator started in-process on a loopback port and reached over the same real gRPC). The
 * session is kept up by session.ts; this is what the flows call (`CoordinatorSession`): asks,
 * tasks, edit proposals, completions, approval decisions — each choosing what this coordinator
 * offers (its typed features), each failure said in words by failures.ts — and the session's file
 * list, kept in step with the editor.
 */
import { randomUUID } from 'node:crypto';
import { idsOnly } from '../../tracing.js';
import { oneLine } from '../../text.js';
import type { CoordinatorClient } from '../../wire/client.js';
import { BUFFERS_HEADER, QUESTIONS_HEADER, CONVERSATION_HEADER, EARLIER_TURNS_KEY, INTENT_HEADER, SESSION_HEADER, type AgentControls, type EditorContext, type ProposeEditsResponse, type TaskSummary } from '../../wire/contract.js';
import { featureFlags, type FeatureFlag } from '../../wire/features.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import { buildPrompt, withEarlierTurns } from '../../wire/prompt.js';
import type { AgentControlsCall, ApprovalDecision, AskCall, AskOutcome, CoordinatorSession, Outcome, StreamCall, StreamOutcome, WatchCall } from './calls.js';
import { failureOf, type Failure, type FailureContext } from './failures.js';
import { isRefusal } from './identity.js';
import { NOT_READ_ONLY } from './readOnly.js';
import { SessionKeeper, type ConnectionOptions } from './session.js';
import { runStream, watchStream, type StreamRunner } from './streams.js';

export type { AskCall, AskOutcome, StreamCall, StreamOutcome } from './calls.js';

export type ConnectionState = 'starting' | 'ready' | 'unavailable';

export type { ConnectionOptions } from './session.js';

export class CoordinatorConnection implements CoordinatorSession {
  private readonly keeper: SessionKeeper;
  private readonly openFiles = new Set<string>();
  private contextSync: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private readonly streams: StreamRunner;

  constructor(private readonly options: ConnectionOptions) {
    this.keeper = new SessionKeeper({
      ...options,
      changed: () => {
        for (const listener of this.listeners) listener();
      },
      established: () => {
        if (this.openFiles.size > 0) this.syncContext([...this.openFiles], []);
      },
    });
    this.streams = {
      keeper: this.keeper,
      logger: options.logger,
      messageFor: (query, context, intent) => this.messageFor(query, context, intent),
      metadata: (intent, conversation, traceparent) => this.callMetadata(intent, conversation, traceparent),
      offers: (flag) => this.offers(flag),
    };
  }

  // ---- what it is, for the status and the notices ----

  get state(): ConnectionState {
    const { kind } = this.keeper.state;
    return kind === 'starting' || kind === 'ready' ? kind : 'unavailable';
  }
  /** What is wrong, in full, with how to fix it. */
  get error(): string | undefined {
    const { state, agentProblem } = this.keeper;
    return state.kind === 'backoff' || state.kind === 'failed' ? state.failure.message : agentProblem?.message;
  }
  /** The same in a few words, for a one-line message. */
  get errorSummary(): string | undefined {
    const { state, agentProblem } = this.keeper;
    return state.kind === 'backoff' || state.kind === 'failed' ? state.failure.summary : agentProblem?.summary;
  }
  get mode(): 'embedded' | 'remote' {
    return this.keeper.mode;
  }
  get address(): string | undefined {
    return this.keeper.address;
  }
  get addresses(): string[] {
    return this.keeper.addresses;
  }
  get capabilities() {
    return this.keeper.capabilities;
  }
  get sessionId(): string | undefined {
    return this.keeper.sessionId;
  }
  get agentDescription(): string | undefined {
    return this.keeper.agentDescription;
  }
  get identity() {
    return this.keeper.identity;
  }
  /** The embedded coordinator has no agent (none configured or found). */
  get agentMissing(): boolean {
    return this.keeper.agentProblem !== undefined;
  }
  get features(): string[] {
    return this.capabilities?.features ?? [];
  }
  /** The announced features, or undefined until the coordinator has answered. */
  get knownFeatures(): string[] | undefined {
    return this.capabilities?.features;
  }
  /** It keeps an ask read-only (it says so: `ask_read_only`). Buckley does not: its tools run unasked. */
  get keepsAsksReadOnly(): boolean {
    return this.offers('readOnlyAsks');
  }
  /** What the coordinator says it cannot promise here (ours: why its agent runs without a sandbox). */
  get notes(): string | undefined {
    return this.capabilities?.notes.join('; ') || undefined;
  }

  /** Called whenever the state changes (ready or unavailable). */
  onStateChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /** Resolves once the connection is up or has failed — or after `ms`; never rejects. */
  whenSettled(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
    return Promise.race([this.keeper.settled, waited]).finally(() => clearTimeout(timer));
  }

  // ---- the calls ----

  ask(call: AskCall): Promise<AskOutcome> {
    return this.tracked(async () => {
      // One deadline for the whole ask, connecting included: the wire's call ends at the same instant.
      const deadline = AbortSignal.timeout(call.timeoutMs);
      const context = { call: 'ask', timeoutMs: call.timeoutMs, timeoutSetting: 'buckley.ask.timeoutMs' } as const;
      const outOfTime = () => deadline.aborted && !call.signal.aborted;
      const ranOut = (): AskOutcome => ({ status: 'failed', failure: this.failure(new CoordinatorError('ask', Status.DEADLINE_EXCEEDED, 'the ask ran out of time'), context) });
      try {
        const outcome = await this.askOnce({ ...call, signal: AbortSignal.any([call.signal, deadline]) });
        return outcome.status === 'cancelled' && outOfTime() ? ranOut() : outcome;
      } catch (error) {
        if (outOfTime()) return ranOut();
        if (cancelledBy(error, call.signal)) return { status: 'cancelled' };
        return { status: 'failed', failure: this.failure(error, context) };
      }
    });
  }

  private async askOnce(call: AskCall): Promise<AskOutcome> {
    await this.keeper.usable(call.signal);
    if (call.requireReadOnly && !this.keepsAsksReadOnly) return { status: 'failed', failure: { message: NOT_READ_ONLY(this.address!, this.notes), summary: 'asks refused: buckley.ask.requireReadOnly' } };
    const { context, earlier } = this.withEarlier(call);
    // Our coordinator streams answers (and progress) through StreamTask; Buckley answers SendMessage.
    if (this.offers('answerStream')) {
      return runStream(this.streams, { ...call, context, taskId: randomUUID(), query: withEarlierTurns(call.question, earlier), intent: 'ask', timeoutSetting: 'buckley.ask.timeoutMs' });
    }
    return this.askWithMessage({ ...call, context }, earlier);
  }

  private async askWithMessage(call: AskCall, earlier: string | undefined): Promise<AskOutcome> {
    const content = withEarlierTurns(this.messageFor(call.question, call.context, 'ask'), earlier);
    const request = { agent_id: this.identity.agentId, message: { role: 'user', content }, context: call.context };
    const options = { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('ask', call.conversation) };
    // The coordinator restarted or forgot our session: connect anew and ask once more.
    const reply = await this.keeper.calling(call.signal, (client) => client.call.SendMessage(request, options));
    const text = reply.response?.content ?? '';
    const asked = `«${oneLine(call.question, 80)}»`;
    // A reply that repeats the whole request is a receipt ("Plan … executed for request: …"), not
    // an answer; and Buckley's receipt is one however it spells the request back.
    if (content.trim() && text.includes(content.trim())) return { status: 'completed', answer: '', report: [text.replace(content.trim(), asked)] };
    if (BUCKLEY_RECEIPT.test(text)) return { status: 'completed', answer: '', report: [text.replace(/(executed for request: )[\s\S]*$/, `$1${asked}`)] };
    return { status: 'completed', answer: text };
  }

  /** Runs a task on the coordinator (StreamTask) to its end. */
  runTask(call: StreamCall): Promise<StreamOutcome> {
    return this.tracked(async () => {
      // What the coordinator offers is known once it is up (a failure to get there is the stream's to say).
      if (call.earlier) await this.keeper.usable(call.signal).catch(() => undefined);
      const { context, earlier } = this.withEarlier(call);
      return runStream(this.streams, { ...call, context, query: withEarlierTurns(call.query, earlier) });
    });
  }

  /**
   * A follow-up's earlier turns: beside the context for a coordinator that keeps conversations
   * (it sends them only where its agent lost the session); for the message (`earlier`) for any other.
   */
  private withEarlier(call: { context: EditorContext; earlier?: string }): { context: EditorContext; earlier?: string } {
    if (!call.earlier) return { context: call.context };
    if (!this.offers('conversations')) return { context: call.context, earlier: call.earlier };
    return { context: { ...call.context, metadata: { ...call.context.metadata, [EARLIER_TURNS_KEY]: call.earlier } } };
  }

  /** Buckley's ProposeEdits: edits for the selection in `context`, proposed, not applied. */
  proposeEdits(call: { instruction: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ proposal: ProposeEditsResponse }>> {
    return this.tracked(async () => {
      const request = { agent_id: this.identity.agentId, session_id: this.sessionId, instruction: call.instruction, context: call.context, apply: false, max_suggestions: 1 };
      const options = { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('edit') };
      try {
        return { status: 'completed', proposal: await this.keeper.calling(call.signal, (client) => client.call.ProposeEdits(request, options), () => false) };
      } catch (error) {
        return { status: 'failed', failure: this.failure(error, { call: 'call' }) };
      }
    });
  }

  /**
   * Completions at the cursor (StreamInlineCompletions): the text of each, streamed pieces joined.
   * Aborting `signal` cancels the call (our coordinator then aborts the model's HTTP request).
   */
  inlineCompletions(call: { prompt: string; context: EditorContext; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ texts: string[] }>> {
    return this.tracked(async () => {
      const texts = new Map<string, string>();
      const request = { agent_id: this.identity.agentId, session_id: this.sessionId ?? '', context: call.context, prompt: call.prompt, max_suggestions: 1 };
      // Read-only, as an ask is (a coordinator that keeps asks so is told it is one).
      const options = { timeoutMs: call.timeoutMs, signal: call.signal, metadata: this.callMetadata('ask') };
      const complete = async (client: CoordinatorClient) => {
        for await (const event of client.open.StreamInlineCompletions(request, options)) texts.set(event.completion_id, (texts.get(event.completion_id) ?? '') + event.text);
      };
      try {
        await this.keeper.calling(call.signal, complete, () => false);
      } catch (error) {
        if (cancelledBy(error, call.signal)) return { status: 'cancelled' };
        return { status: 'failed', failure: this.failure(error, { call: 'call' }) };
      }
      return { status: 'completed', texts: [...texts.values()].filter((text) => text.length > 0) };
    });
  }

  /**
   * What the agent offers and uses (our coordinator's `agent_controls`), or — with `model` or
   * `mode` — the model its turns use, or the mode its tasks run in, from now on. A coordinator
   * that does not say (Buckley's) fails, in words.
   */
  agentControls(call: AgentControlsCall): Promise<Outcome<{ controls: AgentControls }>> {
    return this.tracked(async () => {
      const options = { timeoutMs: call.timeoutMs, signal: call.signal };
      const agent_id = this.identity.agentId;
      const controls = async (client: CoordinatorClient) => {
        if (!this.offers('agentControls')) return 'agent_controls';
        if (call.model !== undefined) return client.call.SetAgentModel({ agent_id, model: call.model }, options);
        if (call.mode === undefined) return client.call.GetAgentControls({ agent_id, discover: call.discover }, options);
        if (!this.offers('agentModes')) return 'agent_modes';
        return client.call.SetAgentMode({ agent_id, mode: call.mode }, options);
      };
      try {
        const answered = await this.keeper.calling(call.signal, controls, () => false);
        if (typeof answered === 'object') return { status: 'completed', controls: answered };
        const what = answered === 'agent_modes' ? 'cannot put its agent in a mode' : 'does not say what its agent offers';
        return { status: 'failed', failure: { message: `the coordinator at ${this.keeper.address} ${what} (it does not announce ${answered}): choose it in the agent's own settings` } };
      } catch (error) {
        if (cancelledBy(error, call.signal)) return { status: 'cancelled' };
        return { status: 'failed', failure: this.failure(error, { call: 'call' }) };
      }
    });
  }

  /**
   * Sends the user's decision on a pending approval; NOT_FOUND means it was already decided. A
   * coordinator gone meanwhile: the decision goes to the one connected anew (a team's next replica).
   */
  async decideApproval(executionId: string, decision: ApprovalDecision): Promise<void> {
    const options = { timeoutMs: this.keeper.callTimeoutMs };
    await this.keeper.calling(AbortSignal.timeout(this.keeper.callTimeoutMs * 2), (client) =>
      decision.approved
        ? client.call.ApproveToolExecution({ execution_id: executionId, remember: decision.remember ?? false }, options)
        : client.call.RejectToolExecution({ execution_id: executionId, reason: decision.reason ?? '' }, options),
    );
  }

  /** The tasks the coordinator knows (ListTasks); a coordinator that keeps none apart from their streams (Buckley's) fails, in words. */
  listTasks(call: { runningOnly: boolean; signal: AbortSignal; timeoutMs: number }): Promise<Outcome<{ tasks: TaskSummary[] }>> {
    return this.tracked(async () => {
      const list = async (client: CoordinatorClient) => (this.offers('taskEvents') ? client.call.ListTasks({ running_only: call.runningOnly }, { timeoutMs: call.timeoutMs, signal: call.signal }) : undefined);
      try {
        const listed = await this.keeper.calling(call.signal, list);
        if (listed) return { status: 'completed', tasks: listed.tasks };
        return { status: 'failed', failure: { message: `the coordinator at ${this.keeper.address} does not list its tasks (it does not announce task_events)`, summary: 'this coordinator does not list its tasks' } };
      } catch (error) {
        if (cancelledBy(error, call.signal)) return { status: 'cancelled' };
        return { status: 'failed', failure: this.failure(error, { call: 'call' }) };
      }
    });
  }

  /** Follows a task from its start to its end (a colleague's, watched). */
  watchTask(call: WatchCall): Promise<StreamOutcome> {
    return this.tracked(() => watchStream(this.streams, call));
  }

  // ---- the session's files ----

  documentOpened(uri: string): void {
    this.openFiles.add(uri);
    if (this.state === 'ready') this.syncContext([uri], []);
  }

  documentClosed(uri: string): void {
    this.openFiles.delete(uri);
    if (this.state === 'ready') this.syncContext([], [uri]);
  }

  /** UpdateSessionContext calls go out one at a time, in order. */
  private syncContext(added: string[], removed: string[]): void {
    this.contextSync = this.contextSync.then(async () => {
      const { client, sessionId, callTimeoutMs } = this.keeper;
      if (!client || !sessionId) return;
      try {
        await client.call.UpdateSessionContext({ session_id: sessionId, added_files: added, removed_files: removed, metadata: {} }, { timeoutMs: callTimeoutMs });
      } catch (error) {
        this.options.logger.warn(`could not update the session's files: ${(error as Error).message}`);
      }
    });
  }

  // ---- closing ----

  /** Closes once the asks in flight have ended (the settings changed: a new connection takes over). */
  async closeWhenIdle(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.close();
  }

  /**
   * Closes at once (see SessionKeeper.close) — once the calls just ended have had a moment to
   * tell the coordinator so (a team's tasks are cancelled with CancelTask, not by their streams' end).
   */
  async close(): Promise<void> {
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        this.idle = resolve;
        setTimeout(resolve, CLOSE_GRACE_MS).unref();
      });
    }
    return this.keeper.close();
  }

  // ---- how calls are made ----

  /** The coordinator's features as flags, read once per answer it gave (a call asks several). */
  private flags: { of: readonly string[] | undefined; flags: Record<FeatureFlag, boolean> } | undefined;

  private offers(flag: FeatureFlag): boolean {
    const announced = this.capabilities?.features;
    if (!this.flags || this.flags.of !== announced) this.flags = { of: announced, flags: featureFlags(announced) };
    return this.flags!.flags[flag];
  }

  /** A failure in words; refused for who we are, the session fails for good. */
  private failure(error: unknown, context: Omit<FailureContext, 'address' | 'identity'>): Failure {
    if (isRefusal(error)) return this.keeper.refused(error);
    return failureOf(error, { ...context, address: this.address!, identity: this.identity });
  }

  /**
   * What goes in `message.content` / `query`: the bare question where the coordinator reads the
   * request's `context` (it says so: `editor_context`); else the question with the file (named
   * relative to its workspace), its language, the selection and the related excerpts — within the
   * same byte budget — since the message is all such a coordinator reads.
   */
  private messageFor(question: string, context: EditorContext | undefined, intent: StreamCall['intent']): string {
    if (this.offers('readsContext') || !context) return question;
    return buildPrompt(question, context, intent === 'ask');
  }

  /** Session, intent, and the W3C `traceparent` of the call's span: the coordinator's spans (and logs) join ours. */
  private callMetadata(intent: StreamCall['intent'], conversation?: string, traceparent = idsOnly.start(intent).traceparent): Record<string, string> {
    this.options.logger.debug(`${intent} on session ${this.sessionId}: traceparent ${traceparent}`);
    // The intent only where it is honoured: no promise rests on metadata a coordinator ignores.
    return {
      [SESSION_HEADER]: this.sessionId!,
      traceparent,
      // The bridge holds the editor's buffers: an agent's reads ask it first (ProvideFile).
      [BUFFERS_HEADER]: '1',
      // And it puts the agent's questions to the user (AnswerQuestion): choices, and typed answers
      // (an editor that cannot take one declines it, saying so).
      [QUESTIONS_HEADER]: '2',
      ...(intent === 'ask' && (this.keepsAsksReadOnly || this.offers('askIntent')) ? { [INTENT_HEADER]: 'ask' } : {}),
      ...(intent === 'edit' && this.offers('editSelection') ? { [INTENT_HEADER]: 'edit' } : {}),
      ...(conversation && this.offers('conversations') ? { [CONVERSATION_HEADER]: conversation } : {}),
    };
  }

  /** Counts the call as in flight, so a retired connection closes only once it is idle. */
  private async tracked<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight++;
    try {
      return await work();
    } finally {
      if (--this.inFlight === 0) this.idle?.();
    }
  }
}

/** How long closing waits for the calls just ended to tell the coordinator (within the server's stop deadline). */
const CLOSE_GRACE_MS = 500;

/** Buckley's fixed reply to SendMessage: a receipt of its plan → execute pipeline, never the model's words (see the wire contract). */
const BUCKLEY_RECEIPT = /^Plan \S+ executed for request: /;

/** The call was cancelled because its caller aborted it (not failed). */
function cancelledBy(error: unknown, signal: AbortSignal): boolean {
  return error instanceof CoordinatorError && error.cancelled && signal.aborted;
}
