/**
 * Turns a question and the editor context into the prompt an agent reads: the question first,
 * then the selection, the document it came from (named relative to its workspace, with its
 * language), related documents, and what was left out. Our coordinator builds it for its agents;
 * the bridge builds it for a coordinator that reads only the message (see
 * CoordinatorConnection.messageFor).
 *
 * The bridge builds the context within the user's byte budget (`metadata.budget_bytes`); the
 * prompt holds it too, whatever a caller sent: related documents that would take it over are
 * left out (and the prompt says how many), then the file is cut.
 */
import { BUDGET_KEY, type DocumentSnapshot, type EditorContext } from './contract.js';
import { codeBlock, describeLines, utf8Length, utf8Prefix } from '../text.js';
import { shownName } from '../uri.js';
import { imageName, imagesOf, isImageDocument, withinImageBound } from './images.js';

export function buildPrompt(question: string, context: EditorContext | undefined, readOnly: boolean): string {
  const head: string[] = [question.trim()];
  if (readOnly) {
    head.push('(This is a question: answer it. Do not edit files or run commands.)');
  }
  const doc = context?.document;
  const selected = context?.metadata?.selected_text;
  if (selected) {
    const where = doc?.selection
      ? ` (${describeLines(doc.selection)} of ${displayPath(doc)})`
      : '';
    head.push(`The selected code${where}:\n${codeBlock(selected, doc?.language_id)}`);
  }
  const file = doc ? fileSection(doc) : undefined;
  const images = withinImageBound(imagesOf(context)).kept;
  // Images go to the agent beside the text (AgentTurn.images): the text names them.
  if (images.length) head.push(`Attached: ${images.map(imageName).join(', ')} (${images.length === 1 ? 'the image follows' : `${images.length} images follow`}).`);
  const related = (context?.related_documents ?? []).filter((other) => !isImageDocument(other)).map((other) => `Another open file, ${displayPath(other)}:\n${codeBlock(other.content, other.language_id)}`);
  const leftOut = context?.metadata?.left_out;

  const budget = Number(context?.metadata?.[BUDGET_KEY]) || Infinity;
  const size = (parts: string[]) => parts.reduce((total, part) => total + utf8Length(part) + 2, 0);
  const fixed = size([...head, ...(file ? [file] : [])]) + (leftOut ? utf8Length(leftOut) + 40 : 0) + 120;
  // Related documents as long as they fit; the note says how many did not.
  let room = budget - fixed;
  let kept = 0;
  while (kept < related.length && utf8Length(related[kept]!) + 2 <= room) room -= utf8Length(related[kept++]!) + 2;
  const dropped = related.length - kept;
  const notes = [leftOut, dropped ? `${dropped} more open document(s) over the ${budget}-byte budget` : undefined].filter(Boolean);
  const parts = [...head, ...(file ? [file] : []), ...related.slice(0, kept), ...(notes.length ? [`Left out of this context: ${notes.join('; ')}.`] : [])];
  const prompt = parts.join('\n\n');
  // A context far over the budget (a caller that did not keep it): the end is cut.
  return utf8Length(prompt) <= budget ? prompt : utf8Prefix(prompt, budget);
}

function fileSection(doc: DocumentSnapshot): string {
  const excerpt = doc.metadata?.excerpt_start_line
    ? ` (an excerpt: lines ${Number(doc.metadata.excerpt_start_line) + 1}-${Number(doc.metadata.excerpt_end_line) + 1})`
    : '';
  return `The file ${displayPath(doc)}${excerpt}:\n${codeBlock(doc.content, doc.language_id)}`;
}

/** The document as a person names it: relative to its workspace folder, else its path. */
function displayPath(doc: DocumentSnapshot): string {
  return shownName(doc.uri, [doc.workspace_root]);
}


/** The prompt with the conversation's earlier turns after it, for an agent that does not hold them. */
export function withEarlierTurns(prompt: string, earlier: string | undefined): string {
  return earlier ? `${prompt}\n\nEarlier in this conversation (the question above follows up on it):\n\n${earlier}` : prompt;
}
