/**
 * "Buckley: watch a task" (`buckley.watchTask`): a colleague's task on a team's coordinator,
 * followed from its start to its end — its progress in the editor (cancelling it stops the
 * watching, not the task), its answer in a document of its own at the end. Its approvals and
 * questions are its owner's to answer: they show as what it waits for. Without a task id, the
 * tasks running on the coordinator are offered to choose from, where the editor can ask.
 */
import { MessageType, ShowMessageRequest } from 'vscode-languageserver';
import type { Features } from '../capabilities.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { oneLine } from '../../text.js';
import { FINAL_STATUSES, type TaskEvent, type TaskSummary } from '../../wire/contract.js';
import type { CoordinatorSession, StreamOutcome } from '../link/calls.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import { AnswerTail, type ProgressFactory } from '../editor/progress.js';
import { reportOnly, type Answers } from '../stores/answers.js';

/** How long the user may take to choose the task to watch. */
const CHOOSE_TIMEOUT_MS = 5 * 60_000;
/** The most tasks offered in one prompt. */
const MOST_OFFERED = 8;

export interface WatchDependencies {
  editor: EditorClient;
  progress: ProgressFactory;
  answers: Answers;
  logger: Logger;
  config(): Config;
  features(): Features;
  coordinator(): Promise<CoordinatorSession>;
  /** The tasks this editor runs (not offered: they are watched already). */
  ownTasks(): ReadonlySet<string>;
}

export type WatchResult = { taskId: string | null; watching: boolean; running?: { taskId: string; owner: string; title: string; status: string }[] };

export class WatchService {
  private readonly watching = new Map<string, AbortController>();

  constructor(private readonly deps: WatchDependencies) {}

  /** Watches `taskId`, or the task the user chooses among those running; answers once it is started. */
  async watch(taskId: string | undefined): Promise<WatchResult> {
    const coordinator = await this.deps.coordinator();
    const listed = await coordinator.listTasks({ runningOnly: taskId === undefined, signal: AbortSignal.timeout(this.deps.config().coordinator.callTimeoutMs), timeoutMs: this.deps.config().coordinator.callTimeoutMs });
    if (listed.status !== 'completed') {
      if (listed.status === 'failed') messages.error(this.deps.editor, `cannot watch tasks: ${listed.failure.summary ?? listed.failure.message}`);
      return { taskId: null, watching: false };
    }
    const task = taskId === undefined ? await this.choose(listed.tasks) : listed.tasks.find((known) => known.task_id === taskId);
    if (!task) {
      if (taskId !== undefined) messages.error(this.deps.editor, messages.fit('no task ', taskId, ' on the coordinator'));
      const own = this.deps.ownTasks();
      return { taskId: null, watching: false, ...(taskId === undefined ? { running: listed.tasks.filter((known) => !own.has(known.task_id)).map(summaryOf) } : {}) };
    }
    if (!this.watching.has(task.task_id)) void this.follow(coordinator, task);
    return { taskId: task.task_id, watching: true };
  }

  /** Stops watching every task (the server stops). */
  cancelAll(): void {
    for (const controller of this.watching.values()) controller.abort();
  }

  /** The task the user chooses among those running (not this editor's own), or undefined. */
  private async choose(tasks: TaskSummary[]): Promise<TaskSummary | undefined> {
    const { editor } = this.deps;
    const own = this.deps.ownTasks();
    const others = tasks.filter((task) => !own.has(task.task_id));
    if (!others.length) {
      messages.info(editor, 'no task of your team runs on the coordinator now');
      return undefined;
    }
    const offered = others.slice(0, MOST_OFFERED).map((task) => ({ task, title: `${oneLine(task.owner, 24)}: ${oneLine(task.title, 48)} (${task.status})` }));
    if (!this.deps.features().showMessageRequest) {
      // Nothing to choose with: the log names them, with how to watch one.
      this.deps.logger.info(`tasks running on the coordinator — watch one with buckley.watchTask {"taskId": "…"}:\n${offered.map(({ task, title }) => `  ${task.task_id}  ${title}`).join('\n')}`);
      messages.info(editor, `${others.length} task${others.length > 1 ? 's' : ''} running: see the log to watch one`);
      return undefined;
    }
    const picked = await editor
      .request(ShowMessageRequest.type, { type: MessageType.Info, message: 'Watch which task?', actions: offered.map(({ title }) => ({ title })) }, { timeoutMs: CHOOSE_TIMEOUT_MS })
      .catch(() => null);
    return offered.find(({ title }) => title === picked?.title)?.task;
  }

  private async follow(coordinator: CoordinatorSession, task: TaskSummary): Promise<void> {
    const { deps } = this;
    const controller = new AbortController();
    this.watching.set(task.task_id, controller);
    const owner = task.owner || 'someone';
    const title = `watching «${oneLine(task.title, 60)}» (${oneLine(owner, 30)})`;
    const progress = deps.progress.begin({ title, kind: 'task', workDoneProgress: deps.features().workDoneProgress });
    progress.onCancel(() => controller.abort());
    deps.logger.info(`${title}: task ${task.task_id}`);
    const tail = new AnswerTail();
    let outcome: StreamOutcome;
    try {
      outcome = await coordinator.watchTask({
        taskId: task.task_id,
        signal: controller.signal,
        timeoutMs: deps.config().task.timeoutMs,
        timeoutSetting: 'buckley.task.timeoutMs',
        onDelta: (delta) => progress.writing(tail.push(delta)),
        onEvent: (event) => {
          const line = lineOf(event, owner);
          if (line && !FINAL_STATUSES.has(event.status)) progress.report(line, event.progress > 0 ? Math.min(100, event.progress) : undefined);
        },
      });
    } catch (error) {
      outcome = { status: 'failed', failure: { message: (error as Error).message } };
    } finally {
      this.watching.delete(task.task_id);
    }
    this.finish(task, owner, outcome, controller.signal.aborted, (line) => progress.done(oneLine(line, 80)));
  }

  private finish(task: TaskSummary, owner: string, outcome: StreamOutcome, stopped: boolean, done: (line: string) => void): void {
    const { deps } = this;
    const question = `${owner}'s task: ${task.title}`;
    if (outcome.status === 'cancelled') {
      done(stopped ? 'Stopped watching' : `Cancelled by ${oneLine(owner, 30)}`);
      return;
    }
    if (outcome.status === 'failed') {
      done(`Failed: ${outcome.failure.message}`);
      deps.answers.deliver({ question, answer: `The task failed: ${outcome.failure.message}`, report: true }, deps.features(), 'done');
      return;
    }
    done('Done');
    const reported = !outcome.answer.trim() && outcome.report?.length ? reportOnly(outcome.report) : undefined;
    deps.answers.deliver({ question, answer: reported ?? outcome.answer, ...(reported ? { report: true } : {}) }, deps.features(), 'done');
  }
}

/** What a watched task's event says, in a line; its approvals are its owner's to decide. */
function lineOf(event: TaskEvent, owner: string): string | undefined {
  if (event.approval) return `Waiting for ${oneLine(owner, 30)}'s approval: ${oneLine(event.approval.tool, 60)}`;
  if (event.question) return `Waiting for ${oneLine(owner, 30)}'s answer: ${oneLine(event.question.message, 60)}`;
  if (event.message) return oneLine(event.message, 120);
  const tool = event.tool_executions.at(-1);
  return tool ? `${oneLine(tool.tool, 100)} (${tool.status})` : undefined;
}

const summaryOf = (task: TaskSummary) => ({ taskId: task.task_id, owner: task.owner, title: task.title, status: task.status });
