/**
 * Messages to the user. `window/showMessage` is a notification and always one line of at most
 * MESSAGE_WIDTH cells: Neovim 0.12 stalls on a multi-line (or wider than the screen) message,
 * Helix squashes it into its one status row. A message says the key or the fix first, and only
 * its variable part (a question, a tool name) is shortened to fit (`fit`), so the useful part is
 * never cut off. Messages carry no "Buckley:" prefix: every editor names the server already
 * ("LSP[buckley-lsp]", "buckley:"). (vscode-languageserver's `window.show*Message` helpers send
 * showMessageRequest instead, which Helix cannot answer: don't use them for plain messages.)
 */
import { MessageType } from 'vscode-languageserver';
import type { EditorClient } from './client.js';
import * as text from '../../text.js';
import { inline, shortenAtWord, width } from '../../text.js';

/** About 60 characters: at 80 columns Neovim prefixes "LSP[buckley-lsp] ". */
export const MESSAGE_WIDTH = 60;

export function showMessage(editor: EditorClient, type: MessageType, line: string, max = MESSAGE_WIDTH): void {
  editor.message(type, text.oneLine(line, max));
}

export const info = (editor: EditorClient, text: string, max?: number) => showMessage(editor, MessageType.Info, text, max);
export const warn = (editor: EditorClient, text: string, max?: number) => showMessage(editor, MessageType.Warning, text, max);
export const error = (editor: EditorClient, text: string, max?: number) => showMessage(editor, MessageType.Error, text, max);

export { seconds } from '../../text.js';


/**
 * `before` + `middle` + `after` on one line of at most `max` cells, shortening only `middle` (a
 * question, a tool name): "answered «why does the retry…»: answer opened".
 */
export function fit(before: string, middle: string, after = '', max = MESSAGE_WIDTH): string {
  const room = max - width(before) - width(after);
  return text.oneLine(`${before}${shortenAtWord(inline(middle), Math.max(8, room))}${after}`, max);
}

/** Settings problems in one line: the first one, key first, and how many more the log has. */
export function problems(list: readonly { key: string; summary: string }[]): string {
  const [first] = list;
  if (!first) return '';
  const more = list.length > 1 ? ` (+${list.length - 1} more, see log)` : '';
  return fit(`${first.key}: `, first.summary.slice(first.key.length + 2), more);
}
