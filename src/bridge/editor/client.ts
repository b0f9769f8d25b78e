/**
 * What the features do to the editor, and nothing else: a message, a line in its log, progress,
 * a notification, diagnostics, and requests that always end. Implemented over the LSP connection
 * (`lspEditor`) and, in tests, by a fake editor that records what it was told — so the flows (ask,
 * task, approval, follow-up, agent edits) run in-process as well as over stdio.
 */
import {
  ApplyWorkspaceEditRequest,
  CancellationTokenSource,
  LogMessageNotification,
  ShowDocumentRequest,
  ShowMessageNotification,
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditResult,
  type CancellationToken,
  type Connection,
  type MessageType,
  type NotificationType,
  type ProgressToken,
  type ProgressType,
  type ProtocolRequestType,
  type RequestType as JsonRpcRequestType,
  type PublishDiagnosticsParams,
  type ShowDocumentParams,
} from 'vscode-languageserver';

/** When a request to the editor is given up: after so many milliseconds, or when the token is cancelled. */
export type Deadline = { timeoutMs: number } | { token: CancellationToken };

/** Any request type, LSP's or ours (protocol.ts). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RequestType<P, R> = ProtocolRequestType<P, R, any, any, any> | JsonRpcRequestType<P, R, any>;

export interface EditorClient {
  /** `window/showMessage`, as given: callers make it one line (messages.ts). */
  message(type: MessageType, text: string): void;
  /** `window/logMessage`: the editor's log of this server. */
  log(type: MessageType, text: string): void;
  /** A notification (`$/buckley/taskProgress`, `$/buckley/features`). */
  notify<P>(type: NotificationType<P>, params: P): void;
  /** `$/progress` on a token the editor gave or the server created. */
  progress<P>(type: ProgressType<P>, token: ProgressToken, value: P): void;
  /** `textDocument/publishDiagnostics`. */
  diagnostics(params: PublishDiagnosticsParams): void;
  /** A request that always ends: answered, failed, or given up at its deadline (rejected saying so). */
  request<P, R>(type: RequestType<P, R>, params: P, deadline: Deadline): Promise<R>;
}

/** The editor over the LSP connection. */
export function lspEditor(connection: Connection): EditorClient {
  return {
    message: (type, message) => void connection.sendNotification(ShowMessageNotification.type, { type, message }),
    log: (type, message) => void connection.sendNotification(LogMessageNotification.type, { type, message }),
    notify: (type, params) => void connection.sendNotification(type, params),
    progress: (type, token, value) => void connection.sendProgress(type, token, value),
    diagnostics: (params) => void connection.sendDiagnostics(params),
    request: (type, params, deadline) => requestWithin(connection, type, params, deadline),
  };
}

async function requestWithin<P, R>(connection: Connection, type: RequestType<P, R>, params: P, deadline: Deadline): Promise<R> {
  const source = new CancellationTokenSource();
  const given = 'token' in deadline ? deadline.token : undefined;
  const timer = 'timeoutMs' in deadline ? setTimeout(() => source.cancel(), deadline.timeoutMs) : undefined;
  const linked = given?.onCancellationRequested(() => source.cancel());
  if (given?.isCancellationRequested) source.cancel();
  const why = 'timeoutMs' in deadline ? `no answer within ${deadline.timeoutMs} ms` : 'withdrawn';
  try {
    return await Promise.race([
      connection.sendRequest(type as JsonRpcRequestType<P, R, unknown>, params, source.token),
      new Promise<never>((_, reject) => source.token.onCancellationRequested(() => reject(new Error(why)))),
    ]);
  } finally {
    clearTimeout(timer);
    linked?.dispose();
    source.dispose();
  }
}

/** `window/showDocument` within a deadline: whether the editor says it opened it (false if it failed or never said). */
export async function showDocument(editor: EditorClient, params: ShowDocumentParams, timeoutMs: number): Promise<boolean> {
  const result = await editor.request(ShowDocumentRequest.type, params, { timeoutMs }).catch(() => undefined);
  return result?.success === true;
}

/** `workspace/applyEdit` within a deadline. */
export function applyEdit(editor: EditorClient, params: ApplyWorkspaceEditParams, timeoutMs: number): Promise<ApplyWorkspaceEditResult> {
  return editor.request(ApplyWorkspaceEditRequest.type, params, { timeoutMs });
}
