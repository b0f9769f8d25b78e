/**
 * Messages to the user. `window/showMessage` is a notification and always one line: Neovim
 * 0.12 stalls on a multi-line (or wider than the screen) message, Helix squashes it into its
 * one status row. (vscode-languageserver's `window.show*Message` helpers send
 * showMessageRequest instead, which Helix cannot answer: don't use them for plain messages.)
 */
import { MessageType, ShowMessageNotification, type Connection } from 'vscode-languageserver';

/** About 60 characters: at 80 columns Neovim prefixes "LSP[buckley-lsp] ". */
export const MESSAGE_WIDTH = 60;

export function showMessage(connection: Connection, type: MessageType, text: string, max = MESSAGE_WIDTH): void {
  void connection.sendNotification(ShowMessageNotification.type, { type, message: oneLine(text, max) });
}

export const info = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Info, text, max);
export const warn = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Warning, text, max);
export const error = (connection: Connection, text: string, max?: number) => showMessage(connection, MessageType.Error, text, max);

/** 1500 → "1.5 s", 180000 → "180 s". */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/** One line of at most `max` characters, never ending on half a surrogate pair. */
export function oneLine(text: string, max = MESSAGE_WIDTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max - 1);
  return (/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut) + '…';
}
