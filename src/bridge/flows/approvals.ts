/**
 * Tool approvals: the agent wants to run a tool; the user sees exactly what will run, how risky
 * it is and which agent asks, and decides — through `buckley/approveTool` (opted-in clients),
 * `window/showMessageRequest`, or the code-action fallback (a diagnostic on the task's document
 * with Approve / Approve & trust / Deny actions, also reachable as `buckley.approve` /
 * `buckley.deny`) — or the policy decides (auto-approval up to a risk, remembered trust). Every
 * approval gets exactly one decision, logged; one nobody answers is denied after a timeout.
 */
import { basename } from 'node:path';
import {
  CancellationTokenSource,
  DiagnosticSeverity,
  ErrorCodes,
  MessageType,
  ResponseError,
  ShowMessageRequest,
  type Command,
  type Diagnostic,
  type Range,
  type TextDocuments,
} from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Features } from '../capabilities.js';
import type { Config } from '../../config.js';
import type { CoordinatorSession } from '../link/calls.js';
import type { TaskEvent } from '../../wire/contract.js';
import type { Logger } from '../../logger.js';
import { ApproveToolRequest, Commands, toolApprovalResultSchema, type ToolApprovalRequest } from '../protocol.js';
import type { Risk } from '../../risk/assess.js';
import { allowedByPolicy, judgeApproval, narrowerPolicy, type JudgedApproval } from '../../risk/approvalRisk.js';
import { inert, inline, oneLine, wellFormed } from '../../text.js';
import type { EditorClient } from '../editor/client.js';
import type { DiagnosticsBoard } from '../editor/diagnostics.js';
import * as messages from '../editor/messages.js';
import { describeRequest, diffBlock, named, subjectOf } from './approvalWords.js';
import { FailedError } from '../../errors.js';
import { uriToPath } from '../../uri.js';
import type { TrustStore } from '../stores/trust.js';
import { CoordinatorError, Status } from '../../wire/errors.js';

export type WireApproval = NonNullable<TaskEvent['approval']>;
export type ApprovalDecider = Pick<CoordinatorSession, 'decideApproval'>;

export interface Decision {
  approved: boolean;
  remember: boolean;
  /** Who decided: the user (and how), the policy, trust, the timeout. */
  by: string;
  reason?: string;
}

export interface ApprovalDependencies {
  editor: EditorClient;
  documents: TextDocuments<TextDocument>;
  trust: TrustStore;
  logger: Logger;
  config(): Config;
  features(): Features;
  /** The workspace (a path), for judging the risk of a tool call ourselves. */
  workspaceRoot(): string | undefined;
  /** Shows the change a write would make, where the editor can show a document (agentEdits.ts). */
  showChange(executionId: string, diff: string): void;
  /** Where its diagnostics are shown, beside other flows'. */
  diagnostics: DiagnosticsBoard;
}

interface Pending {
  request: ToolApprovalRequest;
  /** Cancels the prompt sent to the editor once the approval is decided another way. */
  prompt: CancellationTokenSource;
  /** Who hears the decision: the coordinator whose agent asks, or the bridge itself (a proposed edit). */
  coordinator: ApprovalDecider;
  /** The document the task was started from: where the fallback diagnostic goes. */
  uri?: string;
  range?: Range;
  /** What approving it for the task covers (its kind, `batch` in the request); none for a call never approved so. */
  batchKey?: string;
  /** The user has been asked: it is the first of its task's queue, and its deadline runs. */
  asked: boolean;
  timer?: NodeJS.Timeout;
  /** The one decision; `withdrawn`: the task ended first, so there is nobody to tell. */
  settle(decision: Decision, withdrawn?: boolean): void;
}

/** Kinds of tool call as the user reads them in "approve all … of this task". */
const BATCH_LABELS: Record<string, string> = { read: 'reads', search: 'searches', edit: 'edits', move: 'moves', execute: 'commands', fetch: 'fetches', think: 'thinking steps' };

/** A prompt carries a bounded amount whatever the agent sends: names and titles in so many cells, values in so many characters. */
const MAX_NAME_CELLS = 200;
const MAX_VALUE_CHARS = 4_000;
/** The most approvals of one task that wait for the user; more are denied at once. */
const MAX_WAITING = 1_000;

/** A parameter's value, its start when it is long, saying how long it is (the risk is judged on all of it). */
function bounded(value: string): string {
  return value.length <= MAX_VALUE_CHARS ? value : `${value.slice(0, MAX_VALUE_CHARS).toWellFormed()}… (${value.length.toLocaleString('en')} characters in all)`;
}

const APPROVE = 'Approve';
const TRUST = 'Approve & trust';
const DENY = 'Deny';

export class ApprovalService {
  private readonly pending = new Map<string, Pending>();
  /**
   * Approvals waiting for the user, per task, in the order asked: only the first is in front of
   * the user (one prompt per task at a time); the rest wait their turn.
   */
  private readonly queues = new Map<string, Pending[]>();
  /** Tasks told that their agent asked more approvals at once than wait (said once per task). */
  private readonly overflowSaid = new Set<string>();
  /** Kinds of call the user approved for the rest of a task ("approve all edits of this task"). */
  private readonly approvedForTask = new Map<string, Set<string>>();
  /**
   * `approvals.autoApprove` as each running task started: a raise applies to the tasks started
   * after it, a lowering at once — a task's agent that raises it (a project's `.zed/settings.json`,
   * which Zed applies as it changes) gains nothing in that task.
   */
  private readonly policyAtStart = new Map<string, Risk | 'none'>();

  constructor(private readonly deps: ApprovalDependencies) {}

  /** A task of this editor's starts: the auto-approval it runs under is at most the one set now. */
  taskStarted(taskId: string): void {
    this.policyAtStart.set(taskId, this.deps.config().approvals.autoApprove);
  }

  /** Decides one approval announced by the coordinator and sends the decision back. */
  handle(input: { taskId: string; approval: WireApproval; coordinator: ApprovalDecider; uri?: string; range?: Range }): Promise<Decision> {
    const { approval } = input;
    const { risk, reason, opaque } = this.assess(approval);
    const subject = subjectOf(approval);
    // What the agent sent is shown, never interpreted: one-line names, inert parameter values.
    const request: ToolApprovalRequest = {
      executionId: approval.execution_id,
      tool: oneLine(approval.tool, MAX_NAME_CELLS) || 'a tool',
      parameters: Object.fromEntries(Object.entries(approval.parameters).map(([key, value]) => [oneLine(key, MAX_NAME_CELLS), bounded(inert(value))])),
      risk,
      agent: { id: inline(approval.agent_id) || 'agent' },
      taskId: input.taskId,
      ...(approval.title ? { title: oneLine(approval.title, MAX_NAME_CELLS) } : {}),
      ...(reason ? { reason: inline(reason) } : {}),
      ...(subject ? { subject } : {}),
      ...(approval.diff ? { change: { linesAdded: approval.lines_added, linesRemoved: approval.lines_removed, diff: wellFormed(approval.diff) } } : {}),
    };
    const batchKey = batchKeyOf(approval, risk, opaque);
    if (batchKey) request.batch = batchKey;
    return new Promise<Decision>((resolve) => {
      const pending: Pending = {
        request,
        prompt: new CancellationTokenSource(),
        coordinator: input.coordinator,
        uri: input.uri,
        range: input.range,
        batchKey,
        asked: false,
        settle: (decision, withdrawn = false) => {
          if (this.pending.get(request.executionId) !== pending) return; // exactly one decision
          this.pending.delete(request.executionId);
          // Every way it was asked is withdrawn: the timer, a prompt still open ($/cancelRequest), the diagnostic.
          clearTimeout(pending.timer);
          pending.prompt.cancel();
          pending.prompt.dispose();
          this.leaveQueue(pending);
          this.publishDiagnostics();
          if (withdrawn) {
            this.deps.logger.info(`approval ${request.executionId} for ${request.tool}: withdrawn, ${decision.reason}`);
            resolve(decision);
          } else {
            void this.apply(pending, decision).finally(() => resolve(decision));
          }
        },
      };
      this.pending.set(request.executionId, pending);

      const automatic = this.automaticDecision(request, opaque, input.taskId) ?? this.approvedWithTask(pending) ?? this.tooManyWaiting(pending);
      if (automatic) return pending.settle(automatic);
      this.enqueue(pending);
    });
  }

  /** Joins its task's queue; asked at once when nothing of the task is in front of the user. */
  private enqueue(pending: Pending): void {
    const key = queueOf(pending);
    const queue = this.queues.get(key) ?? [];
    queue.push(pending);
    this.queues.set(key, queue);
    // On the next turn of the loop: approvals that arrived together are counted in the first prompt ("1 of 1,000").
    if (queue.length === 1) setImmediate(() => this.askFirst(key));
  }

  private askFirst(key: string): void {
    const queue = this.queues.get(key);
    const first = queue?.[0];
    if (queue && first && !first.asked) this.askUser(first, queue.length);
  }

  /** Leaves the queue; the next of the task is asked once the first is decided. */
  private leaveQueue(pending: Pending): void {
    const key = queueOf(pending);
    const queue = this.queues.get(key);
    const index = queue?.indexOf(pending) ?? -1;
    if (!queue || index < 0) return;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(key);
    // On the next turn of the loop: a task's approvals decided together (withdrawn, denied) are all gone by then.
    else if (index === 0) setImmediate(() => this.askFirst(key));
  }

  /** Puts the approval in front of the user, with how many of its task wait; its deadline starts now. */
  private askUser(pending: Pending, waiting: number): void {
    const { deps } = this;
    pending.asked = true;
    if (waiting > 1) pending.request.waiting = waiting;
    // The user decides with the change in view: the diff opens beside the prompt.
    if (pending.request.change) deps.showChange(pending.request.executionId, pending.request.change.diff);
    const { timeoutMs } = deps.config().approvals;
    pending.timer = setTimeout(() => pending.settle({ approved: false, remember: false, by: 'timeout', reason: `no answer within ${messages.seconds(timeoutMs)} (setting buckley.approvals.timeoutMs)` }), timeoutMs);
    this.ask(pending);
  }

  /** A task may keep so many approvals waiting, not more: what an agent holds open is bounded. */
  private tooManyWaiting(pending: Pending): Decision | undefined {
    const waiting = this.queues.get(queueOf(pending))?.length ?? 0;
    if (waiting < MAX_WAITING) return undefined;
    const key = queueOf(pending);
    if (!this.overflowSaid.has(key)) {
      this.overflowSaid.add(key);
      messages.warn(this.deps.editor, `the agent asks more than ${MAX_WAITING.toLocaleString('en')} approvals at once in one task: the rest are denied until those are decided`, 200);
    }
    return { approved: false, remember: false, by: 'the limit', reason: `the task already has ${MAX_WAITING.toLocaleString('en')} approvals waiting for the user; ask again once they are decided` };
  }

  /** Approved already with an earlier call of the task: "approve all edits of this task". */
  private approvedWithTask(pending: Pending): Decision | undefined {
    const { taskId } = pending.request;
    if (!taskId || !pending.batchKey || !this.approvedForTask.get(taskId)?.has(pending.batchKey)) return undefined;
    return { approved: true, remember: false, by: `the user (all ${pending.batchKey} of this task)` };
  }

  /**
   * A decision for the whole task: approved, every call of this one's kind, waiting or to come
   * (never a destructive one, nor one whose effect cannot be seen: those have no `batchKey`);
   * denied, every call of the task waiting now.
   */
  private decideForTask(pending: Pending, approved: boolean, by: string): void {
    const taskId = pending.request.taskId;
    if (!taskId || (approved && !pending.batchKey)) return pending.settle({ approved, remember: false, by });
    if (approved) this.approvedForTask.set(taskId, (this.approvedForTask.get(taskId) ?? new Set()).add(pending.batchKey!));
    const waiting = [...(this.queues.get(queueOf(pending)) ?? [])].filter((other) => !approved || other.batchKey === pending.batchKey);
    const scope = approved ? `all ${pending.batchKey} of this task` : `all ${waiting.length} waiting of this task`;
    for (const other of waiting) other.settle({ approved, remember: false, by: `${by}: ${scope}` });
  }

  /** Whether the user will be asked, or the call is decided at once (policy, trust, the task's "approve all", the limit). */
  howDecided(approval: WireApproval, taskId: string): 'by the user' | 'approved' | 'denied' {
    const { risk, opaque } = this.assess(approval);
    if (this.automaticDecision({ risk, agent: { id: approval.agent_id || 'agent' }, tool: approval.tool || 'a tool' }, opaque, taskId)) return 'approved';
    const batchKey = batchKeyOf(approval, risk, opaque);
    if (batchKey && this.approvedForTask.get(taskId)?.has(batchKey)) return 'approved';
    return this.waiting(taskId) >= MAX_WAITING ? 'denied' : 'by the user';
  }

  /**
   * The risk of an approval: the coordinator's word, raised to what the call does as we judge it
   * (a coordinator's label never lowers it; an unknown label counts as high).
   */
  private assess(approval: WireApproval): JudgedApproval {
    return judgeApproval(approval, this.deps.workspaceRoot());
  }

  /**
   * Approval without asking: within the auto-approval risk, or trusted earlier; never destructive,
   * and never above low for a call whose effect the rules cannot see (`opaque`): what it does is
   * then not what its name says, whatever was trusted under that name.
   */
  private automaticDecision(request: Pick<ToolApprovalRequest, 'risk' | 'agent' | 'tool'>, opaque: string | undefined, taskId: string): Decision | undefined {
    const now = this.deps.config().approvals.autoApprove;
    const autoApprove = narrowerPolicy(now, this.policyAtStart.get(taskId) ?? now);
    if (allowedByPolicy({ risk: request.risk, ...(opaque ? { opaque } : {}) }, autoApprove)) return { approved: true, remember: false, by: `policy (buckley.approvals.autoApprove = ${autoApprove})` };
    if (request.risk === 'destructive' || (opaque && request.risk !== 'low')) return undefined;
    if (this.deps.trust.isTrusted(request.agent.id, request.tool)) return { approved: true, remember: false, by: 'trust (Approve & trust earlier)' };
    return undefined;
  }

  /** A decision from the code actions or the `buckley.approve` / `buckley.deny` commands. */
  decide(executionId: string | undefined, approved: boolean, remember = false, forTask = false): boolean {
    const id = executionId ?? [...this.pending.values()].filter((pending) => pending.asked).at(-1)?.request.executionId;
    const pending = id ? this.pending.get(id) : undefined;
    if (!pending) return false;
    const by = 'the user (code action or command)';
    if (forTask) this.decideForTask(pending, approved, by);
    else pending.settle({ approved, remember: approved && remember, by });
    return true;
  }

  /**
   * The task ended (done, failed, cancelled): its approvals are void — the coordinator dropped
   * them — and every prompt, diagnostic and timer of theirs is withdrawn at once.
   */
  withdrawTask(taskId: string, why: string): void {
    this.approvedForTask.delete(taskId);
    this.policyAtStart.delete(taskId);
    this.overflowSaid.delete(taskId);
    for (const pending of [...this.pending.values()]) {
      if (pending.request.taskId === taskId) pending.settle({ approved: false, remember: false, by: 'the task', reason: why }, true);
    }
  }

  list(): ToolApprovalRequest[] {
    return [...this.pending.values()].map((pending) => pending.request);
  }

  /** Approve / Approve & trust / Deny for every pending approval, as commands. */
  commands(): Command[] {
    return this.asked().flatMap(({ request }) => {
      const what = `«${oneLine(request.tool, 40)}» (${request.risk})`;
      const id = { executionId: request.executionId };
      const many = (request.waiting ?? 1) > 1;
      return [
        { title: `Buckley: approve ${what}`, command: Commands.approve, arguments: [id] },
        ...(request.risk === 'destructive' ? [] : [{ title: `Buckley: approve & trust ${what}`, command: Commands.approve, arguments: [{ ...id, remember: true }] }]),
        { title: `Buckley: deny ${what}`, command: Commands.deny, arguments: [id] },
        ...(many && request.batch ? [{ title: `Buckley: approve all ${request.batch} of this task`, command: Commands.approve, arguments: [{ ...id, forTask: true }] }] : []),
        ...(many ? [{ title: `Buckley: deny all ${request.waiting} waiting of this task`, command: Commands.deny, arguments: [{ ...id, forTask: true }] }] : []),
      ];
    });
  }

  /** The approvals in front of the user: the first of each task's queue. */
  private asked(): Pending[] {
    return [...this.pending.values()].filter((pending) => pending.asked);
  }

  /** How many of a task's approvals wait for the user. */
  waiting(taskId: string): number {
    return this.queues.get(taskId)?.length ?? 0;
  }

  /** How the user can decide, for the task's progress message. */
  hint(): string {
    const features = this.deps.features();
    if (features.approveTool || features.showMessageRequest) return 'answer the prompt';
    return 'use the code action "Buckley: approve…" or "Buckley: deny…"';
  }

  /** Asks through the best channel the editor has. */
  private ask(pending: Pending): void {
    const { editor, logger } = this.deps;
    const features = this.deps.features();
    const { request } = pending;
    const fallBack = () => this.askWithMessageOrDiagnostic(pending, features);
    if (!features.approveTool) return fallBack();
    editor.request(ApproveToolRequest.type, request, { token: pending.prompt.token }).then(
      (answer) => {
        const parsed = toolApprovalResultSchema.safeParse(answer);
        if (parsed.success && parsed.data.forTask) this.decideForTask(pending, parsed.data.approved, 'the user (buckley/approveTool)');
        else if (parsed.success) pending.settle({ approved: parsed.data.approved, remember: parsed.data.approved && parsed.data.remember === true, by: 'the user (buckley/approveTool)' });
        else pending.settle({ approved: false, remember: false, by: 'the editor', reason: `buckley/approveTool answered ${JSON.stringify(answer)}, which is not a decision` });
      },
      (error: unknown) => {
        if (error instanceof ResponseError && error.code === ErrorCodes.MethodNotFound) {
          logger.info('the editor does not handle buckley/approveTool after all; asking another way');
          return fallBack();
        }
        pending.settle({ approved: false, remember: false, by: 'the editor', reason: `buckley/approveTool failed: ${(error as Error).message}` });
      },
    );
  }

  private askWithMessageOrDiagnostic(pending: Pending, features: Features): void {
    const { request } = pending;
    if (features.showMessageRequest) {
      const many = (request.waiting ?? 1) > 1;
      const approveAll = many && request.batch ? `Approve all ${request.batch} of this task` : undefined;
      const denyAll = many ? `Deny all ${request.waiting} waiting` : undefined;
      const actions = [{ title: APPROVE }, ...(request.risk === 'destructive' ? [] : [{ title: TRUST }]), { title: DENY }, ...[approveAll, denyAll].flatMap((title) => (title ? [{ title }] : []))];
      // An editor that renders markdown in prompts (Zed) and opens no documents gets the diff in the prompt.
      const diff = request.change && features.markdownMessageRequest ? `\n\n${diffBlock(request.change.diff)}` : '';
      this.deps.editor.request(ShowMessageRequest.type, { type: MessageType.Warning, message: describeRequest(request) + diff, actions }, { token: pending.prompt.token }).then(
        (choice) => {
          const title = choice?.title;
          if (title && (title === approveAll || title === denyAll)) this.decideForTask(pending, title === approveAll, 'the user (prompt)');
          else if (title === APPROVE || title === TRUST) pending.settle({ approved: true, remember: title === TRUST, by: 'the user (prompt)' });
          else pending.settle({ approved: false, remember: false, by: 'the user (prompt)', ...(title === DENY ? {} : { reason: 'the prompt was dismissed' }) });
        },
        (error: Error) => pending.settle({ approved: false, remember: false, by: 'the editor', reason: `the prompt failed: ${error.message}` }),
      );
      return;
    }
    pending.uri ??= this.deps.documents.all()[0]?.uri;
    if (pending.uri) {
      this.publishDiagnostics();
      // Where: the diagnostic may be on a document the user is not looking at (the first open one).
      const at = `${basename(uriToPath(pending.uri))}:${(pending.range?.start.line ?? 0) + 1}`;
      messages.warn(this.deps.editor, messages.fit(`${at}: approve or deny `, named(request)));
      return;
    }
    pending.settle({
      approved: false,
      remember: false,
      by: 'policy',
      reason: 'the editor cannot be asked (no prompt, no open document for the code actions); raise buckley.approvals.autoApprove to allow such tools',
    });
  }

  /** One diagnostic per pending approval on its document; documents with none are cleared. */
  private publishDiagnostics(): void {
    const byUri = new Map<string, Diagnostic[]>();
    const features = this.deps.features();
    const fallback = !features.approveTool && !features.showMessageRequest;
    for (const pending of this.asked()) {
      if (!fallback || !pending.uri) continue;
      const list = byUri.get(pending.uri) ?? [];
      list.push({
        range: pending.range ? { start: pending.range.start, end: pending.range.start } : { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        severity: DiagnosticSeverity.Warning,
        source: 'buckley',
        // What it is in words (eglot and Neovim show the code beside the message); which one, as data.
        code: 'approval',
        data: { executionId: pending.request.executionId },
        message: `${describeRequest(pending.request)} Use the code actions "Buckley: approve…" or "Buckley: deny…".`,
      });
      byUri.set(pending.uri, list);
    }
    this.deps.diagnostics.show('approvals', byUri);
  }

  /** Sends the decision to the coordinator, remembers trust, and logs it: one line per approval. */
  private async apply(pending: Pending, decision: Decision): Promise<void> {
    const { logger, editor, trust } = this.deps;
    const { request } = pending;
    const line = `approval ${request.executionId}: ${request.agent.id} wants ${request.tool} (${request.risk}) — ${decision.approved ? 'approved' : 'denied'} by ${decision.by}${decision.reason ? `: ${decision.reason}` : ''}`;
    logger.info(line);
    if (decision.by === 'timeout') {
      messages.warn(editor, messages.fit('denied ', named(request), `: no answer in ${messages.seconds(this.deps.config().approvals.timeoutMs)}`));
    } else if (!decision.approved && decision.by === 'policy') {
      messages.warn(editor, messages.fit('denied ', named(request), ': no way to ask (see log)'));
    }
    // Trusted at once, saved meanwhile: saving must never hold up (or lose) the decision.
    const saving =
      decision.remember && request.risk !== 'destructive'
        ? trust.trust(request.agent.id, request.tool).catch((error: Error) => {
            logger.error(`could not save the trust (it holds for this session): ${error.message}`);
            messages.error(editor, `trust not saved: ${error instanceof FailedError ? error.summary : 'see log'}`);
          })
        : undefined;
    try {
      await pending.coordinator.decideApproval(request.executionId, { approved: decision.approved, remember: decision.remember, reason: decision.reason ?? `denied by ${decision.by}` });
    } catch (error) {
      logger.warn(`the coordinator did not take the decision on ${request.executionId}: ${(error as Error).message}`);
      // It had stopped waiting (its own deadline, or the task ended there): the user's answer changed nothing — say so.
      if (error instanceof CoordinatorError && error.code === Status.NOT_FOUND && decision.by.startsWith('the user')) {
        messages.warn(editor, messages.fit('too late, denied already (see log): ', named(request)));
      }
    }
    await saving;
  }
}

/** What approving a call for its task covers: its kind; none for a destructive call or one whose effect cannot be seen. */
function batchKeyOf(approval: WireApproval, risk: Risk, opaque: string | undefined): string | undefined {
  if (risk === 'destructive' || (opaque && risk !== 'low')) return undefined;
  return BATCH_LABELS[approval.kind] ?? `uses of ${oneLine(approval.tool, MAX_NAME_CELLS) || 'a tool'}`;
}

/** The queue an approval waits in: its task's (an approval of no task, such as a proposed edit, is alone). */
function queueOf(pending: Pending): string {
  return pending.request.taskId ?? `approval ${pending.request.executionId}`;
}
