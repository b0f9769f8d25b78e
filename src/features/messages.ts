/**
 * Messages to the user. `window/showMessage` is a notification and always one line: Neovim
 * 0.12 stalls on a multi-line (or wider than the screen) message, Helix squashes it into its
 * one status row. (vscode-languageserver's `window.show*Message` helpers send
 * showMessageRequest instead, which Helix cannot answer: don't use them for plain messages.)
 */
import { MessageType, ShowMessageNotification, type Connection } from 'vscode-languageserver';
import * as text from '../text.js';

/** About 60 characters: at 80 columns Neovim prefixes "LSP[buckley-lsp] ". */
export const MESSAGE_WIDTH = 60;

export function showMessage(connection: Connection, type: MessageType, line: string, max = MESSAGE_WIDTH): void {
  void connection.sendNotification(ShowMessageNotification.type, { type, message: oneLine(line, max) });
}

export const info = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Info, text, max);
export const warn = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Warning, text, max);
export const error = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Error, text, max);

export { seconds } from '../text.js';

/** One line of at most `max` cells (see text.ts): no control characters, cut between graphemes. */
export function oneLine(line: string, max = MESSAGE_WIDTH): string {
  return text.oneLine(line, max);
}
