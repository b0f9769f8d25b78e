/**
 * Requests to the editor that must not wait for ever: an editor that never answers one (a
 * progress token, its settings) gets it cancelled after a deadline, and the caller goes on.
 */
import { CancellationTokenSource, type Connection, type ProtocolRequestType } from 'vscode-languageserver';

export async function requestWithin<P, R, PR>(connection: Connection, type: ProtocolRequestType<P, R, PR, void, void>, params: P, timeoutMs: number): Promise<R> {
  const source = new CancellationTokenSource();
  const timer = setTimeout(() => source.cancel(), timeoutMs);
  try {
    return await Promise.race([
      connection.sendRequest(type, params, source.token),
      new Promise<never>((_, reject) => source.token.onCancellationRequested(() => reject(new Error(`no answer within ${timeoutMs} ms`)))),
    ]);
  } finally {
    clearTimeout(timer);
    source.dispose();
  }
}
