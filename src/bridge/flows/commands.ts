/**
 * `workspace/executeCommand`: every command the server lists in
 * `executeCommandProvider.commands` (Zed drops code actions whose command is not listed).
 * Commands answer at once; the work continues in the background. A bare string argument is
 * the question, the task or the task id (handy from a key binding).
 */
import { ErrorCodes, ResponseError, type ExecuteCommandParams } from 'vscode-languageserver';
import * as z from '../../schema.js';
import { answerQuestionArgsSchema, approvalCommandArgsSchema, askCommandArgsSchema, changeArgsSchema, chooseModelArgsSchema, chooseModeArgsSchema, cancelTaskCommandArgsSchema, watchTaskCommandArgsSchema, Commands, describeIssues, editCommandArgsSchema, followUpCommandArgsSchema, runTaskCommandArgsSchema, undoTaskEditsArgsSchema, type EditCommandArgs } from '../protocol.js';
import type { ApprovalService } from './approvals.js';
import type { AskService } from './ask.js';
import type { TaskService } from './tasks.js';
import type { AgentQuestions } from './questions.js';
import type { HunkReview } from './hunkReview.js';
import type { WatchService } from './watch.js';

export const ALL_COMMANDS: string[] = Object.values(Commands);

const USAGE: Record<string, string> = {
  [Commands.ask]:
    'buckley.ask takes one JSON argument {"question": "…", "uri"?: "…", "range"?: {…}, "text"?: "…"}, e.g. :lsp-workspace-command buckley.ask {"question": "what does this do?", "text": "%{selection}", "uri": "%{buffer_name}"}',
  [Commands.runTask]:
    'buckley.runTask takes one JSON argument {"task": "…", "uri"?: "…", "range"?: {…}, "text"?: "…"}, e.g. :lsp-workspace-command buckley.runTask {"task": "write tests for this", "text": "%{selection}", "uri": "%{buffer_name}"}',
  [Commands.cancelTask]: 'buckley.cancelTask takes {"taskId": "…"} or nothing (the newest running task)',
  [Commands.approve]: 'buckley.approve takes {"executionId": "…", "remember"?: true} or nothing (the newest pending approval)',
  [Commands.deny]: 'buckley.deny takes {"executionId": "…"} or nothing (the newest pending approval)',
  [Commands.showLog]: 'buckley.showLog takes nothing',
  [Commands.edit]: 'buckley.edit takes {"instruction": "…", "uri": "…", "range": {…}}: the lines to change and how',
  [Commands.undoTaskEdits]: 'buckley.undoTaskEdits takes {"taskId": "…"} or nothing (the newest task that changed files)',
  [Commands.followUp]:
    'buckley.followUp takes {"uri": "<answer document>"} or {"conversation": "…"}, and "question"? (default: the one written below the document\'s last line)',
  [Commands.newConversation]: 'buckley.newConversation takes {"uri": "<answer document>"} or {"conversation": "…"}, and "question"? — asked afresh about the same code',
  [Commands.conversations]: 'buckley.conversations takes nothing',
  [Commands.keepChange]: 'buckley.keepChange takes {"taskId": "…", "path": "…", "line"?: N, "text"?: "…"} (from the code action "Buckley: keep this change")',
  [Commands.undoChange]: 'buckley.undoChange takes {"taskId": "…", "path": "…", "line"?: N, "text"?: "…"} (from the code action "Buckley: undo this change")',
  [Commands.answerQuestion]: 'buckley.answerQuestion takes {"id": "…", "option": N} (from the code action "Buckley: answer «…»: …"; -1 declines)',
  [Commands.chooseModel]: 'buckley.chooseModel takes {"model": "<id or name>"} or nothing (choose from what the agent offers)',
  [Commands.chooseMode]: 'buckley.chooseMode takes {"mode": "<id or name>"} or nothing (choose from the modes that ask first)',
  [Commands.watchTask]: 'buckley.watchTask takes {"taskId": "…"} or nothing (choose among the tasks running on the coordinator)',
};

export interface CommandDependencies {
  asks: AskService;
  tasks: TaskService;
  approvals: ApprovalService;
  status(): unknown;
  showLog(): Promise<unknown>;
  /** buckley.edit: by the coordinator's proposals where it makes them, else as a task. */
  edit(args: EditCommandArgs): unknown;
  /** buckley.conversations: lists them (and shows the list where the editor opens documents). */
  conversations(): unknown;
  /** buckley.chooseModel: the model given, else chosen by the user from what the agent offers. */
  chooseModel(model: string | undefined): unknown;
  /** buckley.chooseMode: the mode tasks run in — the one given, else chosen by the user from those that ask first. */
  chooseMode(mode: string | undefined): unknown;
  /** buckley.keepChange / buckley.undoChange: a change under review (or all of its task's). */
  review: Pick<HunkReview, 'keep' | 'undo'>;
  /** buckley.answerQuestion: the agent's question answered with a code action. */
  questions: Pick<AgentQuestions, 'answer'>;
  /** buckley.watchTask: a colleague's task followed. */
  watch: Pick<WatchService, 'watch'>;
}

export function executeCommand(params: ExecuteCommandParams, deps: CommandDependencies): unknown {
  const [first] = params.arguments ?? [];
  switch (params.command) {
    case Commands.ask: {
      deps.asks.askInBackground(parseArgs(params.command, askCommandArgsSchema, typeof first === 'string' ? { question: first } : first));
      return { started: true };
    }
    case Commands.runTask:
      return deps.tasks.start(parseArgs(params.command, runTaskCommandArgsSchema, typeof first === 'string' ? { task: first } : first));
    case Commands.cancelTask: {
      const { taskId } = parseArgs(params.command, cancelTaskCommandArgsSchema, typeof first === 'string' ? { taskId: first } : (first ?? {}));
      const id = taskId ?? deps.tasks.newest();
      return { taskId: id ?? null, cancelled: id ? deps.tasks.cancel(id) : false };
    }
    case Commands.approve:
    case Commands.deny: {
      const { executionId, remember, forTask } = parseArgs(params.command, approvalCommandArgsSchema, typeof first === 'string' ? { executionId: first } : (first ?? {}));
      return { decided: deps.approvals.decide(executionId, params.command === Commands.approve, remember, forTask) };
    }
    case Commands.status:
      return deps.status();
    case Commands.showLog:
      return deps.showLog();
    case Commands.edit:
      return deps.edit(parseArgs(params.command, editCommandArgsSchema, first));
    case Commands.followUp:
    case Commands.newConversation: {
      const args = parseArgs(params.command, followUpCommandArgsSchema, typeof first === 'string' ? { uri: first } : (first ?? {}));
      return deps.asks.followUp(args, params.command === Commands.newConversation);
    }
    case Commands.conversations:
      return deps.conversations();
    case Commands.keepChange:
      return deps.review.keep(parseArgs(params.command, changeArgsSchema, first));
    case Commands.undoChange:
      return deps.review.undo(parseArgs(params.command, changeArgsSchema, first));
    case Commands.answerQuestion: {
      const { id, option } = parseArgs(params.command, answerQuestionArgsSchema, first);
      return deps.questions.answer(id, option);
    }
    case Commands.chooseModel: {
      const { model } = parseArgs(params.command, chooseModelArgsSchema, typeof first === 'string' ? { model: first } : (first ?? {}));
      return deps.chooseModel(model);
    }
    case Commands.chooseMode: {
      const { mode } = parseArgs(params.command, chooseModeArgsSchema, typeof first === 'string' ? { mode: first } : (first ?? {}));
      return deps.chooseMode(mode);
    }
    case Commands.watchTask: {
      const { taskId } = parseArgs(params.command, watchTaskCommandArgsSchema, typeof first === 'string' ? { taskId: first } : (first ?? {}));
      return deps.watch.watch(taskId);
    }
    case Commands.undoTaskEdits: {
      const { taskId } = parseArgs(params.command, undoTaskEditsArgsSchema, typeof first === 'string' ? { taskId: first } : (first ?? {}));
      return deps.tasks.undoEdits(taskId);
    }
    default:
      throw new ResponseError(ErrorCodes.InvalidParams, `unknown command ${params.command}; known: ${ALL_COMMANDS.join(', ')}`);
  }
}

function parseArgs<T>(command: string, schema: z.core.$ZodType<T>, args: unknown): T {
  if (args === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `missing arguments: ${USAGE[command]}`);
  const parsed = z.safeParse(schema, args);
  if (!parsed.success) throw new ResponseError(ErrorCodes.InvalidParams, `${describeIssues(parsed.error, 'arguments[0]')}. ${USAGE[command]}`);
  return parsed.data;
}
