/**
 * Agent tasks ("fix this bug", "write tests for this"): started at once, run in the background,
 * watched through whatever the editor has — `$/buckley/taskProgress` for clients that opted in,
 * `$/progress` on a server-created token (cancellable from the editor's UI), or messages — and
 * cancellable from every path. Every task ends with exactly one final state: completed, failed
 * (with the reason, timeouts included) or cancelled.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCodes, ResponseError, type Range } from 'vscode-languageserver';
import type { Features } from '../capabilities.js';
import type { Config } from '../../config.js';
import type { CoordinatorSession, EditorFiles, EditorQuestions, StreamOutcome } from '../link/calls.js';
import { FINAL_STATUSES, type TaskEvent } from '../../wire/contract.js';
import type { Logger } from '../../logger.js';
import { TaskProgressNotification, type TaskProgress, type TaskStatus, type ToolExecution } from '../protocol.js';
import { usageLine, type UsageTally } from './usage.js';
import { endLine, planSteps, turnNotes, TurnSteps } from './plans.js';
import { reportOnly, type Answer, type Answers } from '../stores/answers.js';
import { earlierTurns, withUndone, type Conversations } from '../stores/conversations.js';
import type { ApprovalService, WireApproval } from './approvals.js';
import { named, subjectOf } from './approvalWords.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import { inert, inline, oneLine, utf8Length } from '../../text.js';
import { AnswerTail, type Progress, type ProgressFactory } from '../editor/progress.js';
import type { Limiter } from '../editor/limits.js';
import type { Target, Targets, TargetInput } from './target.js';
import { Coalescer, UPDATE_INTERVAL_MS } from '../editor/throttle.js';
import type { TaskEdits } from './taskEdits.js';
import type { HunkReview } from './hunkReview.js';

export interface TaskInput extends TargetInput {
  task: string;
  /** What the agent is asked, when it says more than the task's title. */
  query?: string;
  /** An edit of the selection (buckley.edit). */
  edit?: boolean;
  planId?: string;
  /** A follow-up of a task: its conversation (same agent session, answer appended to its document). */
  conversation?: string;
}

export interface TaskDependencies {
  editor: EditorClient;
  approvals: ApprovalService;
  answers: Answers;
  progress: ProgressFactory;
  logger: Logger;
  targets: Targets;
  config(): Config;
  features(): Features;
  coordinator(): Promise<CoordinatorSession>;
  /** The editor's files as the agent reaches them. */
  files: EditorFiles;
  /** The agent's questions, put to the user. */
  questions: EditorQuestions;
  limiter: Limiter;
  /** What the tasks' agents changed, for review and undo. */
  edits: TaskEdits;
  /** Each change marked in its file, to keep or undo. */
  review: Pick<HunkReview, 'show' | 'publish'>;
  /** What the turns used and cost (for buckley/status). */
  usage: UsageTally;
  /** Tasks' conversations: followed up in their answer documents. */
  conversations: Conversations;
  /** Told when a turn has ended, however it ended. */
  turnEnded(): void;
}

interface RunningTask {
  id: string;
  title: string;
  query: string;
  /** Its conversation: its own (`task-<id>`), or the task's it follows up. */
  conversation: string;
  /** A follow-up's earlier turns (within the budget), for an agent that lost them. */
  earlier?: string;
  /** What the user undid that its query tells the agent (told again next time if the task does not complete). */
  undone: string[];
  edit: boolean;
  state: TaskProgress;
  tools: Map<string, ToolExecution>;
  controller: AbortController;
}

const STATUSES = new Set<TaskStatus>(['pending', 'in_progress', 'awaiting_approval', 'completed', 'failed', 'cancelled']);
const TOOL_STATUSES = new Set(['pending', 'in_progress', 'completed', 'failed']);
const TOOL_KINDS = new Set(['read', 'edit', 'execute', 'search', 'fetch', 'think', 'other']);

export class TaskService {
  private readonly tasks = new Map<string, RunningTask>();

  constructor(private readonly deps: TaskDependencies) {}

  /**
   * Starts a task and returns its id at once. What the task is about is resolved now, so a bad
   * URI is an error of the request that started it.
   */
  start(input: TaskInput): { taskId: string } {
    const { conversations } = this.deps;
    const config = this.deps.config();
    const thread = input.conversation ? conversations.get(input.conversation) : undefined;
    if (input.conversation && !thread?.task) throw new ResponseError(ErrorCodes.InvalidParams, `no task conversation ${input.conversation}: follow a task up in its answer document`);
    const earlier = thread ? earlierTurns(thread.turns, Math.floor(config.context.maxBytes / 2)) || undefined : undefined;
    const target = this.deps.targets.resolve(input, config, input.task, earlier ? utf8Length(earlier) + 100 : 0);
    const release = this.deps.limiter.acquire(`the task "${oneLine(input.task, 40)}"`);
    // StreamTask has no plan field; the plan a task belongs to travels in the context.
    if (input.planId) target.built.context.metadata.plan_id = input.planId;
    const id = randomUUID();
    const query = input.query ?? input.task;
    const conversation = thread?.id ?? `task-${id}`;
    // What the user undid since the agent's last turn here, told after the task (not with an agent's /command).
    const undone = query.trimStart().startsWith('/') ? [] : conversations.takeUndone(conversation);
    const task: RunningTask = {
      id,
      title: input.task,
      query: withUndone(query, undone),
      conversation,
      undone,
      ...(earlier ? { earlier } : {}),
      edit: input.edit ?? false,
      state: { taskId: '', status: 'pending', message: 'Starting…' },
      tools: new Map(),
      controller: new AbortController(),
    };
    task.state.taskId = task.id;
    this.tasks.set(task.id, task);
    this.run(task, target).finally(release).catch((error: unknown) => {
      // run() settles every task itself; this is a bug guard, not a path.
      this.deps.logger.error(`task ${task.id} ended unexpectedly: ${(error as Error).stack ?? error}`);
    });
    return { taskId: task.id };
  }

  /**
   * "Buckley: edit «…»" / `buckley.edit`: a task whose agent changes the selected lines as told.
   * Its write is the proposed edit: the user sees it as a diff and applies it by approving it.
   */
  edit(input: { instruction: string; uri: string; range: Range }): { taskId: string } {
    return this.start({ task: `Edit: ${input.instruction}`, query: editQuery(input.instruction), uri: input.uri, range: input.range, edit: true });
  }

  /** True when the task was running and is now being cancelled; cancelling a finished task is harmless. */
  cancel(taskId: string): boolean {
    const task = this.tasks.get(taskId);
    if (!task || task.controller.signal.aborted) return false;
    this.deps.logger.info(`cancelling task ${taskId} ("${task.title}")`);
    task.controller.abort();
    // Nobody is to be asked about a cancelled task any more.
    this.deps.approvals.withdrawTask(taskId, 'its task was cancelled');
    return true;
  }

  /** The newest running task, for `buckley.cancelTask` without arguments. */
  newest(): string | undefined {
    return [...this.tasks.keys()].at(-1);
  }

  running(): { id: string; title: string; state: TaskProgress }[] {
    return [...this.tasks.values()].map(({ id, title, state }) => ({ id, title, state: { ...state } }));
  }

  cancelAll(): void {
    for (const id of this.tasks.keys()) this.cancel(id);
  }

  private async run(task: RunningTask, target: Target): Promise<void> {
    const { deps } = this;
    const config = deps.config();
    const features = deps.features();
    const notifications = new Coalescer<TaskProgress>(
      (state) => deps.editor.notify(TaskProgressNotification.type, state),
      UPDATE_INTERVAL_MS,
    );
    let lastStatus: TaskStatus | undefined;
    const publish = () => {
      if (!features.taskProgress) return;
      // A change of status (waiting for approval, and back) goes out at once, within the bound of 10 a second; the rest coalesced.
      notifications.push(snapshot(task), lastStatus !== undefined && task.state.status !== lastStatus);
      lastStatus = task.state.status;
    };
    publish();
    const progress = deps.progress.begin({ title: task.title, kind: 'task', workDoneProgress: features.workDoneProgress });
    progress.onCancel(() => this.cancel(task.id));
    deps.logger.info(`task ${task.id} started: "${task.title}"`);
    deps.approvals.taskStarted(task.id);

    const written = new AnswerTail();
    const steps = new TurnSteps();
    let outcome: StreamOutcome;
    try {
      const coordinator = await deps.coordinator();
      const approve = (approval: WireApproval) => {
        void deps.approvals.handle({ taskId: task.id, approval, coordinator, uri: target.document?.uri, range: target.range });
      };
      outcome = await coordinator.runTask({
        taskId: task.id,
        query: task.query,
        context: target.built.context,
        signal: task.controller.signal,
        timeoutMs: config.task.timeoutMs,
        timeoutSetting: 'buckley.task.timeoutMs',
        intent: task.edit ? 'edit' : 'task',
        // A task is a conversation of its own (its follow-ups' too): it never carries an ask's history, nor another task's.
        conversation: task.conversation,
        ...(task.earlier ? { earlier: task.earlier } : {}),
        files: deps.files,
        questions: deps.questions,
        onDelta: (delta) => progress.writing(written.push(delta)),
        onEvent: (event) => {
          if (event.file_changed) return deps.edits.record(task.id, task.title, event.file_changed, task.conversation);
          applyEvent(task, event, steps.of(event));
          const approval = event.status === 'awaiting_approval' ? event.approval : undefined;
          if (approval) {
            const decided = deps.approvals.howDecided(approval, task.id);
            if (decided === 'by the user') {
              const waiting = deps.approvals.waiting(task.id) + 1;
              // The count first: a progress line cut to the editor's width keeps it.
              // The count, what to do and the call's key facts first: a line cut to the editor's width keeps them; the agent's words last.
              const tool = oneLine(approval.tool, 60);
              const subject = subjectOf(approval);
              const [facts, theirs] = named({ tool, subject }) === tool ? [tool, ''] : [subject, `: ${tool}`];
              task.state.message = `Waiting for your approval${waiting > 1 ? ` (${waiting.toLocaleString('en')} waiting)` : ''}: ${facts} (${inline(approval.risk) || 'unknown risk'}) — ${deps.approvals.hint()}${theirs}`;
            } else {
              // Decided at once (policy, trust, the task's "approve all", the limit): nothing to wait for.
              task.state = { ...task.state, status: 'in_progress', message: `${decided === 'approved' ? 'Approved' : 'Denied'}: ${named({ tool: oneLine(approval.tool, 60), subject: subjectOf(approval) })}` };
            }
          }
          publish();
          // The final state is the progress's end ("Done", "Failed: …"), not a step before it; and a
          // piece of the answer alone says nothing new: its words are shown (onDelta), not the last step again.
          const saysSomething = event.message !== '' || event.tool_executions.length > 0 || event.progress > 0 || approval !== undefined || event.plan || event.thought_delta;
          if (!FINAL_STATUSES.has(event.status) && saysSomething) progress.report(task.state.message ?? 'Working…', task.state.progress);
          // The editor hears that the task waits before it is asked.
          if (approval) approve(approval);
        },
      });
    } catch (error) {
      outcome = { status: 'failed', failure: { message: (error as Error).message } };
    }
    this.finish(task, outcome, progress, notifications, features, target);
  }

  private finish(
    task: RunningTask,
    outcome: StreamOutcome,
    progress: Progress,
    notifications: Coalescer<TaskProgress>,
    features: Features,
    target: Target,
  ): void {
    const { deps } = this;
    this.tasks.delete(task.id);
    deps.turnEnded();
    // Not completed: the next turn tells the agent again what the user undid.
    if (outcome.status !== 'completed') deps.conversations.noteUndone(task.conversation, task.undone);
    deps.approvals.withdrawTask(task.id, `its task ${outcome.status === 'completed' ? 'ended' : outcome.status}`);
    const tools = [...task.tools.values()];
    const plan = task.state.plan ? { plan: task.state.plan } : {};
    if (outcome.status === 'completed') {
      task.state = { taskId: task.id, status: 'completed', progress: 100, message: 'Done', ...(tools.length ? { toolExecutions: tools } : {}), ...plan };
    } else if (outcome.status === 'failed') {
      task.state = { taskId: task.id, status: 'failed', message: inline(outcome.failure.message), ...(task.state.progress ? { progress: task.state.progress } : {}), ...(tools.length ? { toolExecutions: tools } : {}), ...plan };
    } else {
      task.state = { taskId: task.id, status: 'cancelled', message: 'Cancelled', ...(tools.length ? { toolExecutions: tools } : {}), ...plan };
    }
    if (features.taskProgress) notifications.finish(snapshot(task));
    else notifications.finish();
    const used = outcome.status === 'completed' ? usageLine(outcome.usage) : undefined;
    if (outcome.status === 'completed') deps.usage.add(outcome.usage, `task-${task.id}`);
    const line = outcome.status === 'completed' ? endLine('Done', outcome.plan, used) : outcome.status === 'failed' ? `Failed: ${outcome.failure.message}` : 'Cancelled';
    progress.done(oneLine(line, 80));
    if (outcome.status === 'failed') deps.logger.error(`task ${task.id} ("${task.title}") failed: ${outcome.failure.message}`);
    else deps.logger.info(`task ${task.id} ${outcome.status}`);

    // What the agent changed ends the answer, however the task ended: it is what the user reviews.
    const review = deps.edits.review(task.id);
    deps.review.show(task.id, task.title);
    const place = { uri: target.document?.uri, range: target.range };
    // One message names the final state, in every editor (without progress, it is the only sign of the end).
    if (outcome.status === 'completed') {
      const reported = !outcome.answer.trim() && outcome.report?.length ? reportOnly(outcome.report) : undefined;
      const text = reported ?? outcome.answer;
      const answered = text.trim() !== '' || review !== undefined;
      // With an answer (or the coordinator's report), its message is the final state: "done «task»: answer opened".
      if (answered) {
        const notes = turnNotes(outcome);
        this.deliver(task, { answer: [text, review].filter(Boolean).join('\n\n---\n\n'), ...(reported ? { report: true } : {}), ...(used ? { usage: used } : {}), ...(notes ? { notes } : {}), ...place }, features);
      }
      if (!answered || !features.answerMessage) messages.info(deps.editor, messages.fit('done «', task.title, '»'));
    } else {
      if (review) this.deliver(task, { answer: `The task ${outcome.status === 'failed' ? `failed: ${outcome.failure.message}` : 'was cancelled'}.\n\n---\n\n${review}`, report: true, ...place }, features);
      if (outcome.status === 'failed') messages.error(deps.editor, `task failed: ${outcome.failure.summary ?? outcome.failure.message}`);
      else messages.info(deps.editor, messages.fit('cancelled «', task.title, '»'));
    }
  }

  /**
   * The task's answer, kept as a turn of its conversation and written in its document (a
   * follow-up's appended to it), which ends with a place to follow it up.
   */
  private deliver(task: RunningTask, answer: Omit<Answer, 'at' | 'documentUri' | 'question' | 'conversation'>, features: Features): void {
    const { answers, conversations } = this.deps;
    const { conversation } = task;
    const document = conversations.get(conversation)?.document;
    const delivered = answers.deliver({ ...answer, question: task.title, conversation }, features, 'done', { appendTo: document, documented: (uri) => conversations.setDocument(conversation, uri) });
    conversations.record(conversation, { question: delivered.question, answer: delivered.answer }, { uri: answer.uri, range: answer.range, task: true });
  }

  /** "Buckley: undo the task's edits": the newest task's, or `taskId`'s; says in the editor what became of each file. */
  async undoEdits(taskId?: string): Promise<{ undone: string[]; kept: { path: string; why: string }[] }> {
    const outcome = await this.deps.edits.undo(taskId);
    this.deps.review.publish();
    if (!outcome) {
      messages.info(this.deps.editor, 'no task edits to undo');
      return { undone: [], kept: [] };
    }
    // One line: what was kept matters most (the log says why, file by file).
    if (outcome.kept.length) {
      messages.warn(this.deps.editor, `undo: ${outcome.kept.map(({ path }) => path.split('/').pop()).join(', ')} kept — changed since (see log)`);
    } else {
      messages.info(this.deps.editor, messages.fit('undid the edits of «', outcome.title, '»'));
    }
    return { undone: outcome.undone, kept: outcome.kept };
  }
}

/** What the agent is asked for an edit of the selection (the selection and file follow as context). */
export function editQuery(instruction: string): string {
  return `Edit the selected code: ${instruction.trim()}\n(Change the selected lines only, and write the file with your file tools: the user sees the change as a diff and applies it by approving it.)`;
}

/** Folds one coordinator event into the task's state, with the step it shows (its plan's, its thinking). Never invents a percentage. */
function applyEvent(task: RunningTask, event: TaskEvent, step: { line: string; percentage?: number } | undefined): void {
  for (const tool of event.tool_executions) {
    if (!tool.id) continue;
    task.tools.set(tool.id, {
      id: tool.id,
      tool: oneLine(tool.tool, 200) || 'tool',
      status: (TOOL_STATUSES.has(tool.status) ? tool.status : 'in_progress') as ToolExecution['status'],
      ...(TOOL_KINDS.has(tool.kind) ? { kind: tool.kind as ToolExecution['kind'] } : {}),
      ...(tool.input ? { input: inert(tool.input) } : {}),
      ...(tool.output ? { output: inert(tool.output) } : {}),
    });
  }
  // Buckley often leaves status empty: a message on a running task means it is in progress.
  const status = STATUSES.has(event.status as TaskStatus) && !FINAL_STATUSES.has(event.status) ? (event.status as TaskStatus) : 'in_progress';
  const lastTool = event.tool_executions.at(-1);
  const plan = event.plan ? planSteps(event.plan.entries) : task.state.plan;
  const percentage = step?.percentage ?? (event.progress > 0 ? Math.min(100, event.progress) : task.state.progress);
  // The plan's step says most; then the coordinator's words, the tool call, the thinking.
  const message = event.plan && step ? step.line : event.message ? oneLine(event.message, 200) : lastTool ? `${oneLine(lastTool.tool, 150)} (${inline(lastTool.status)})` : (step?.line ?? task.state.message);
  task.state = { taskId: task.id, status, ...(percentage !== undefined ? { progress: percentage } : {}), message, ...(plan ? { plan } : {}) };
}

function snapshot(task: RunningTask): TaskProgress {
  const tools = [...task.tools.values()];
  return { ...task.state, ...(tools.length && !task.state.toolExecutions ? { toolExecutions: tools } : {}) };
}
