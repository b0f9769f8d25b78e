/**
 * A fake editor for the in-process flow tests: an `EditorClient` that records what the server
 * told it (messages, log lines, progress, notifications, diagnostics, requests) and answers
 * requests as a real editor would — it holds its own buffers, applies workspace edits to them and
 * tells the server (didChange), as Neovim does. A request nobody answers for stays open until its
 * deadline, as with a real editor that never answers.
 */
import { ErrorCodes, MessageType, ResponseError, type Diagnostic, type Disposable, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver';
import type { TextDocuments } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Deadline, EditorClient, RequestType } from '../../src/bridge/editor/client.js';

type DocumentEvents = Parameters<TextDocuments<TextDocument>['listen']>[0];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Handler = (...args: any[]) => unknown;
type Responder = (params: unknown) => unknown;

export interface Recorded {
  kind: 'message' | 'log' | 'notification' | 'progress' | 'request' | 'diagnostics';
  method?: string;
  params: unknown;
}

/** How long `until` waits before it fails, naming what never happened. */
const UNTIL_MS = 5_000;

export class FakeEditor implements EditorClient {
  readonly recorded: Recorded[] = [];
  readonly diagnosticsOf = new Map<string, Diagnostic[]>();
  private readonly buffers = new Map<string, TextDocument>();
  private readonly handlers = new Map<string, Handler>();
  private readonly responders = new Map<string, Responder>();
  private readonly waiters = new Set<() => void>();

  constructor() {
    this.respond('workspace/applyEdit', (params) => this.applyWorkspaceEdit((params as { edit: WorkspaceEdit }).edit));
    this.respond('window/showDocument', () => ({ success: true }));
    this.respond('window/workDoneProgress/create', () => null);
  }

  /** What TextDocuments listens to: the editor's document notifications. */
  readonly events: DocumentEvents = {
    onDidOpenTextDocument: (handler) => this.on('open', handler),
    onDidChangeTextDocument: (handler) => this.on('change', handler),
    onDidCloseTextDocument: (handler) => this.on('close', handler),
    onWillSaveTextDocument: (handler) => this.on('willSave', handler),
    onWillSaveTextDocumentWaitUntil: (handler) => this.on('willSaveWaitUntil', handler),
    onDidSaveTextDocument: (handler) => this.on('save', handler),
  };

  /** Answers requests of `method` (replacing the default); a promise that never settles is an editor that never answers. */
  respond(method: string, responder: Responder): void {
    this.responders.set(method, responder);
  }

  /** No answer to `method`: the editor does not know it (MethodNotFound). */
  refuse(method: string): void {
    this.responders.delete(method);
  }

  open(uri: string, text: string, languageId = 'python'): void {
    this.buffers.set(uri, TextDocument.create(uri, languageId, 1, text));
    this.emit('open', { textDocument: { uri, languageId, version: 1, text } });
    this.wake();
  }

  /** The user types: the whole buffer replaced, as one change. */
  type(uri: string, text: string): void {
    const buffer = this.buffers.get(uri)!;
    const next = TextDocument.update(buffer, [{ text }], buffer.version + 1);
    this.buffers.set(uri, next);
    this.emit('change', { textDocument: { uri, version: next.version }, contentChanges: [{ text }] });
    this.wake();
  }

  text(uri: string): string | undefined {
    return this.buffers.get(uri)?.getText();
  }

  // ---- EditorClient ----

  message(type: MessageType, text: string): void {
    this.record({ kind: 'message', params: { type, text } });
  }
  log(type: MessageType, text: string): void {
    this.record({ kind: 'log', params: { type, text } });
  }
  notify<P>(type: { method: string }, params: P): void {
    this.record({ kind: 'notification', method: type.method, params });
  }
  progress<P>(_type: unknown, token: string | number, value: P): void {
    this.record({ kind: 'progress', params: { token, value } });
  }
  diagnostics(params: { uri: string; diagnostics: Diagnostic[] }): void {
    this.diagnosticsOf.set(params.uri, params.diagnostics);
    this.record({ kind: 'diagnostics', params });
  }
  request<P, R>(type: RequestType<P, R>, params: P, deadline: Deadline): Promise<R> {
    this.record({ kind: 'request', method: type.method, params });
    const responder = this.responders.get(type.method);
    if (!responder) return Promise.reject(new ResponseError(ErrorCodes.MethodNotFound, `Unhandled method ${type.method}`));
    return new Promise<R>((resolve, reject) => {
      const timer = 'timeoutMs' in deadline ? setTimeout(() => reject(new Error(`no answer within ${deadline.timeoutMs} ms`)), deadline.timeoutMs) : undefined;
      const withdrawn = 'token' in deadline ? deadline.token.onCancellationRequested(() => reject(new Error('withdrawn'))) : undefined;
      Promise.resolve()
        .then(() => responder(params))
        .then((result) => resolve(result as R), reject)
        .finally(() => {
          clearTimeout(timer);
          withdrawn?.dispose();
        });
    });
  }

  // ---- what the test reads ----

  messages(): string[] {
    return this.recorded.filter((entry) => entry.kind === 'message').map((entry) => (entry.params as { text: string }).text);
  }
  logs(): string[] {
    return this.recorded.filter((entry) => entry.kind === 'log').map((entry) => (entry.params as { text: string }).text);
  }
  requests(method: string): unknown[] {
    return this.recorded.filter((entry) => entry.kind === 'request' && entry.method === method).map((entry) => entry.params);
  }
  /** The `$/progress` values sent, in order. */
  progressValues(): { kind: string; title?: string; message?: string }[] {
    return this.recorded.filter((entry) => entry.kind === 'progress').map((entry) => (entry.params as { value: { kind: string; title?: string; message?: string } }).value);
  }
  notifications(method: string): unknown[] {
    return this.recorded.filter((entry) => entry.kind === 'notification' && entry.method === method).map((entry) => entry.params);
  }

  /** The document the server had shown (window/showDocument), once it is open in a buffer: its URI. */
  shown(index = 0): Promise<string> {
    return this.until(() => {
      const uri = (this.requests('window/showDocument')[index] as { uri: string } | undefined)?.uri;
      return uri !== undefined && this.text(uri) !== undefined && uri;
    }, `document ${index + 1} shown`);
  }

  /** Resolves with the first truthy value of `check`, tried now and after everything the editor is told, asked or typed. */
  until<T>(check: () => T | undefined | false, what: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const attempt = () => {
        const value = check();
        if (!value) return;
        this.waiters.delete(attempt);
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(attempt);
        reject(new Error(`the editor never saw ${what}; it was told:\n${this.recorded.map((entry) => `${entry.kind} ${entry.method ?? ''} ${JSON.stringify(entry.params).slice(0, 300)}`).join('\n')}`));
      }, UNTIL_MS);
      this.waiters.add(attempt);
      attempt();
    });
  }

  private record(entry: Recorded): void {
    this.recorded.push(entry);
    this.wake();
  }

  /** Something the waiters may be looking at changed (a call reached the fake coordinator): check them again. */
  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  private on(event: string, handler: Handler): Disposable {
    this.handlers.set(event, handler);
    return { dispose: () => this.handlers.delete(event) };
  }

  private emit(event: string, params: unknown): void {
    (this.handlers.get(event) as ((params: unknown) => void) | undefined)?.(params);
  }

  /** As an editor does: versioned edits checked against the buffer, applied, and the change sent back. */
  private applyWorkspaceEdit(edit: WorkspaceEdit): { applied: boolean; failureReason?: string } {
    const byUri: [string, TextEdit[], number | null | undefined][] = edit.documentChanges
      ? edit.documentChanges.flatMap((change) => ('textDocument' in change ? [[change.textDocument.uri, change.edits as TextEdit[], change.textDocument.version] as [string, TextEdit[], number | null]] : []))
      : Object.entries(edit.changes ?? {}).map(([uri, edits]) => [uri, edits, undefined]);
    for (const [uri, edits, version] of byUri) {
      const buffer = this.buffers.get(uri);
      if (!buffer) return { applied: false, failureReason: `${uri} is not open` };
      if (typeof version === 'number' && version !== buffer.version) return { applied: false, failureReason: `version ${version} is not the buffer's ${buffer.version}` };
      this.type(uri, TextDocument.applyEdits(buffer, edits));
    }
    return { applied: true };
  }
}
