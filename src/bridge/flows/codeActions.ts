/**
 * Code actions on a selection: "Buckley: explain this", "Buckley: find problems", and
 * "Buckley: ask «…»" when the selection's first line is a comment holding a question, "Buckley:
 * edit «…»" when it holds an instruction (`# edit: …`); in an answer document, "Buckley: follow
 * up «…»" and "Buckley: new conversation «…»" on the question written below its last line. Each
 * carries its `command` directly, with no edit and no resolve step: Zed never runs the command
 * of an action that has an edit, and Helix 25.01 ignores commands that arrive only through
 * codeAction/resolve.
 */
import { CodeActionKind, type CodeAction, type Command, type Range } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { Commands, type AskCommandArgs, type EditCommandArgs } from '../protocol.js';
import { oneLine } from '../../text.js';
import { normalizeRange } from './context.js';
import { typedFollowUp } from '../stores/conversations.js';

export const EXPLAIN_QUESTION = 'Explain what this code does and why.';
export const PROBLEMS_QUESTION = 'Find problems in this code: bugs, edge cases, performance and security issues. Be specific.';

export const FIX_TASK = 'Fix the problems in this code.';

/**
 * The actions for a selection, plus "cancel task" for each running task (offered anywhere, so
 * Helix and Neovim users, who have no progress cancel button, can stop a task).
 */
export interface CodeActionInput {
  document: TextDocument;
  range: Range;
  /** The editor takes CodeAction literals (else bare Commands). */
  literals: boolean;
  /** Tasks running now: each can be cancelled. */
  tasks?: readonly { id: string; title: string }[];
  /** Approvals waiting for the user, as commands (approvals.ts). */
  approvals?: readonly Command[];
  /** Finished tasks that changed this document, newest first: their edits can be undone. */
  undoable?: readonly { id: string; title: string }[];
  /** The conversation this document is the answer document of: following it up replaces asking about it. */
  conversation?: { id: string };
  /** The agent's controls as commands (choose its model: agentControls.ts), offered anywhere. */
  agent?: readonly Command[];
  /** Keep or undo the task changes under review at the range (hunkReview.ts). */
  review?: readonly Command[];
}

export function codeActionsFor(input: CodeActionInput): (CodeAction | Command)[] {
  const { document, literals, tasks: runningTasks = [], approvals = [], undoable = [], conversation, agent = [], review = [] } = input;
  const requested = input.range;
  const range = normalizeRange(document, requested);
  const commands: Command[] = [];
  if (conversation) {
    const question = typedFollowUp(document.getText());
    if (question) {
      const args = [{ uri: document.uri }];
      commands.push(
        { title: `Buckley: follow up «${oneLine(question, 50)}»`, command: Commands.followUp, arguments: args },
        { title: `Buckley: new conversation «${oneLine(question, 40)}»`, command: Commands.newConversation, arguments: args },
      );
    }
    commands.push({ title: 'Buckley: list conversations', command: Commands.conversations, arguments: [] });
  } else if (!isEmpty(range)) {
    const ask = (title: string, question: string): Command => ({
      title,
      command: Commands.ask,
      arguments: [{ question, uri: document.uri, range } satisfies AskCommandArgs],
    });
    const task = (title: string, text: string): Command => ({
      title,
      command: Commands.runTask,
      arguments: [{ task: text, uri: document.uri, range }],
    });
    const firstLine = document.getText({ start: range.start, end: { line: range.start.line + 1, character: 0 } });
    const instruction = commentInstruction(firstLine);
    if (instruction) {
      commands.push({ title: `Buckley: edit «${oneLine(instruction, 50)}»`, command: Commands.edit, arguments: [{ instruction, uri: document.uri, range } satisfies EditCommandArgs] });
    }
    const question = instruction ? undefined : commentQuestion(firstLine);
    if (question) {
      commands.push(ask(`Buckley: ask «${oneLine(question, 50)}»`, question));
      commands.push(task(`Buckley: run task «${oneLine(question, 50)}»`, question));
    }
    commands.push(ask('Buckley: explain this', EXPLAIN_QUESTION), ask('Buckley: find problems', PROBLEMS_QUESTION));
    commands.push(task('Buckley: fix problems here', FIX_TASK));
  }
  // Pending approvals first: they hold a task up; then the changes under review here.
  commands.unshift(...approvals, ...review);
  for (const running of runningTasks) {
    commands.push({ title: `Buckley: cancel task «${oneLine(running.title, 40)}»`, command: Commands.cancelTask, arguments: [{ taskId: running.id }] });
  }
  for (const task of undoable) {
    commands.push({ title: `Buckley: undo the task's edits «${oneLine(task.title, 40)}»`, command: Commands.undoTaskEdits, arguments: [{ taskId: task.id }] });
  }
  commands.push(...agent);
  if (!literals) return commands;
  return commands.map((command) => ({ title: command.title, kind: CodeActionKind.Empty, command }));
}

const COMMENT_MARKERS = [/^\s*\/\/+!?\s?/, /^\s*#+!?\s?/, /^\s*--+\s?/, /^\s*;+\s?/, /^\s*%+\s?/, /^\s*\/\*+\s?/, /^\s*\*\s?/, /^\s*<!--\s?/, /^\s*"\s/, /^\s*'\s/, /^\s*\(\*\s?/];
const COMMENT_ENDS = /\s*(\*\/|-->|\*\))\s*$/;

/**
 * The question in a comment line: `// why is this slow?`, `# ask: explain the retry loop`.
 * A comment counts as a question when it ends with "?" or starts with "ask:", "buckley:" or "@buckley".
 */
/** The instruction in a comment line starting with "edit:": `# edit: handle the empty list`. */
export function commentInstruction(line: string): string | undefined {
  const marker = COMMENT_MARKERS.find((pattern) => pattern.test(line));
  if (!marker) return undefined;
  const text = line.replace(marker, '').replace(COMMENT_ENDS, '').trim();
  return /^edit\s*:\s*(.+)$/i.exec(text)?.[1]?.trim() || undefined;
}

export function commentQuestion(line: string): string | undefined {
  const marker = COMMENT_MARKERS.find((pattern) => pattern.test(line));
  if (!marker) return undefined;
  const text = line.replace(marker, '').replace(COMMENT_ENDS, '').trim();
  const prefixed = /^(?:@?buckley|ask)\s*[:,]?\s+(.+)$/i.exec(text);
  if (prefixed?.[1]) return prefixed[1].trim();
  return text.length > 1 && text.endsWith('?') ? text : undefined;
}

function isEmpty(range: Range): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}
