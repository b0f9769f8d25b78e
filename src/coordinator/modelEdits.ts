/**
 * An edit of the selection (buckley.edit, `x-buckley-intent: edit`) by a driver that cannot write
 * files — an OpenAI-compatible model: it is asked for the new text of the selected lines, and its
 * answer becomes the agent's write of the file, reviewed and approved like any other (files.ts).
 */
import { basename } from 'node:path';
import type { EditorContext } from '../wire/contract.js';
import type { TurnSink } from './agents/driver.js';

/** What a model is told on top of the edit's prompt. */
export const MODEL_EDIT_REPLY =
  'You cannot write files here: reply with the new text of the selected lines only, complete, in one fenced code block, and nothing after it. It becomes the change the user reviews.';

/** The lines an edit replaces: `[fromLine, toLine)` of `path`, 0-based. */
export interface SelectionEdit {
  path: string;
  fromLine: number;
  toLine: number;
}

/** The selection of an edit's context as whole lines of a file, or undefined without one. */
export function selectionEditOf(context: EditorContext | undefined, toPath: (uri: string) => string | undefined): SelectionEdit | undefined {
  const document = context?.document;
  const selection = document?.selection;
  const path = document?.uri ? toPath(document.uri) : undefined;
  if (!path || !selection) return undefined;
  const { start, end } = selection;
  const toLine = end.character === 0 && end.line > start.line ? end.line : end.line + 1;
  return { path, fromLine: start.line, toLine };
}

/** The first fenced code block of an answer, with a final line end; undefined when there is none. */
export function replacementIn(answer: string): string | undefined {
  const block = /^(`{3,}|~{3,})[^\n]*\n([\s\S]*?)^\1[ \t]*$/m.exec(answer);
  if (!block) return undefined;
  const text = block[2]!;
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Makes the model's answer the change of the selected lines; says in a sentence what became of it. */
export async function makeModelEdit(edit: SelectionEdit, answer: string, sink: TurnSink, signal: AbortSignal): Promise<string> {
  const replacement = replacementIn(answer);
  const name = basename(edit.path);
  if (replacement === undefined) return `No change was made to ${name}: the answer holds no code block.`;
  try {
    const current = await sink.readFile({ path: edit.path }, signal);
    const lines = current.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    const content = [...lines.slice(0, edit.fromLine), replacement, ...lines.slice(edit.toLine)].join('');
    await sink.writeFile({ path: edit.path, content }, signal);
    return `The change to ${name} was made.`;
  } catch (error) {
    return `The change to ${name} was not made: ${(error as Error).message}.`;
  }
}
