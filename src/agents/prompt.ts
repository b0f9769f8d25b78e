/**
 * Turns a question and the editor context into the prompt an agent reads: the question first,
 * then the selection, the document it came from, related documents, and what was left out.
 */
import type { DocumentSnapshot, EditorContext } from '../coordinator/wire.js';
import { describeLines } from '../features/context.js';

export function buildPrompt(question: string, context: EditorContext | undefined, readOnly: boolean): string {
  const parts: string[] = [question.trim()];
  if (readOnly) {
    parts.push('(This is a question: answer it. Do not edit files or run commands.)');
  }
  const doc = context?.document;
  const selected = context?.metadata?.selected_text;
  if (selected) {
    const where = doc?.selection
      ? ` (${describeLines(doc.selection)} of ${displayPath(doc)})`
      : '';
    parts.push(`The selected code${where}:\n${fence(selected, doc?.language_id)}`);
  }
  if (doc) {
    const excerpt = doc.metadata?.excerpt_start_line
      ? ` (an excerpt: lines ${Number(doc.metadata.excerpt_start_line) + 1}-${Number(doc.metadata.excerpt_end_line) + 1})`
      : '';
    parts.push(`The file ${displayPath(doc)}${excerpt}:\n${fence(doc.content, doc.language_id)}`);
  }
  for (const related of context?.related_documents ?? []) {
    parts.push(`Another open file, ${displayPath(related)}:\n${fence(related.content, related.language_id)}`);
  }
  if (context?.metadata?.left_out) parts.push(`Left out of this context: ${context.metadata.left_out}.`);
  return parts.join('\n\n');
}

function displayPath(doc: DocumentSnapshot): string {
  return doc.uri.startsWith('file://') ? decodeURIComponent(doc.uri.slice('file://'.length)) : doc.uri;
}

/** A markdown code fence longer than any backtick run inside the text. */
function fence(text: string, language = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  return `${ticks}${language}\n${text}${text.endsWith('\n') ? '' : '\n'}${ticks}`;
}
