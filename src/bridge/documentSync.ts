/**
 * What the editor says about its documents, as TextDocuments takes it: URIs in one canonical form,
 * and changes applied in the order of their versions. Helix 25.01 sends the `didChange`s of a burst
 * of keystrokes (a paste in a terminal, keys sent by a script) out of order — version 8 before 3 —
 * each right for its own version; applied as they come, the server's copy of the buffer is garbled
 * for good. A change that arrives ahead of its turn is held until the ones before it have come, for
 * at most HOLD_MS, and everything held is applied before any request reads a document (`flush`).
 * Versions need not be consecutive (Neovim's skip): a gap nobody fills only delays, never drops.
 */
import { ErrorCodes, ResponseError, type Connection, type DidChangeTextDocumentParams, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Logger } from '../logger.js';
import * as z from '../schema.js';
import { canonicalUri } from '../uri.js';
import { describeIssues, didChangeParamsSchema, didOpenParamsSchema, didSaveParamsSchema, documentParamsSchema } from './protocol.js';

/**
 * How long a change may wait for the ones before it, when nothing reads the document meanwhile
 * (a read applies everything held first). Generous: a burst of keystrokes can take tens of
 * milliseconds to arrive on a loaded machine, and applying part of it early garbles the text.
 */
const HOLD_MS = 250;

export class InVersionOrder {
  /** The version last applied, per open document. */
  private readonly applied = new Map<string, number>();
  /** Changes that came ahead of their turn, per document. */
  private readonly held = new Map<string, DidChangeTextDocumentParams[]>();
  private timer: NodeJS.Timeout | undefined;
  private reported = false;

  constructor(
    private readonly apply: (change: DidChangeTextDocumentParams) => void,
    private readonly logger?: Logger,
    private readonly holdMs = HOLD_MS,
  ) {}

  opened(uri: string, version: number): void {
    this.applied.set(uri, version);
    this.held.delete(uri);
  }

  closed(uri: string): void {
    this.flush(uri);
    this.applied.delete(uri);
  }

  changed(change: DidChangeTextDocumentParams): void {
    const { uri, version } = change.textDocument;
    const last = this.applied.get(uri);
    const held = this.held.get(uri);
    if (last === undefined || (version === last + 1 && !held) || version <= last) {
      // Not ours to order (unknown document), in turn, or late beyond repair: as it comes.
      this.applyOne(change);
      return;
    }
    if (held) held.push(change);
    else this.held.set(uri, [change]);
    this.drain(uri);
    if (this.held.has(uri)) this.timer ??= setTimeout(() => this.flush(), this.holdMs).unref();
  }

  /** Applies everything held (of one document, or all), in version order: before a document is read. */
  flush(uri?: string): void {
    for (const key of uri ? [uri] : [...this.held.keys()]) {
      const held = this.held.get(key);
      if (!held) continue;
      this.held.delete(key);
      held.sort((a, b) => a.textDocument.version - b.textDocument.version);
      for (const change of held) this.applyOne(change);
    }
    if (this.held.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** Applies the held changes that are next in line. */
  private drain(uri: string): void {
    const held = this.held.get(uri)!;
    held.sort((a, b) => a.textDocument.version - b.textDocument.version);
    if (!this.reported && held.length > 1) {
      this.reported = true;
      this.logger?.info(`the editor sent changes of ${uri} out of order (version ${held.at(-1)!.textDocument.version} before ${held[0]!.textDocument.version}): they are applied in version order`);
    }
    while (held.length && held[0]!.textDocument.version === this.applied.get(uri)! + 1) this.applyOne(held.shift()!);
    if (held.length === 0) this.held.delete(uri);
  }

  private applyOne(change: DidChangeTextDocumentParams): void {
    const { uri, version } = change.textDocument;
    if (this.applied.has(uri)) this.applied.set(uri, Math.max(this.applied.get(uri)!, version));
    this.apply(change);
  }
}

/**
 * The connection as TextDocuments listens to it: canonical URIs, changes in version order, and
 * only notifications whose fields are what LSP says (others are logged and dropped: one would make
 * the server's copy of a buffer something other than text). The returned `flush` applies held
 * changes; call it before reading documents.
 */
export function documentEvents(connection: Connection, logger: Logger): { events: Parameters<TextDocuments<TextDocument>['listen']>[0]; flush(): void } {
  const canonical = <Event extends { textDocument: { uri: string } }>(event: Event): Event => ({
    ...event,
    textDocument: { ...event.textDocument, uri: canonicalUri(event.textDocument.uri) },
  });
  const wellFormed = checker(logger);
  let order: InVersionOrder | undefined;
  const flush = () => order?.flush();
  return {
    flush,
    events: {
      onDidOpenTextDocument: (handler) =>
        connection.onDidOpenTextDocument((event) => {
          if (!wellFormed('textDocument/didOpen', didOpenParamsSchema, event)) return;
          const opened = canonical(event);
          order?.opened(opened.textDocument.uri, opened.textDocument.version);
          return handler(opened);
        }),
      onDidChangeTextDocument: (handler) => {
        order = new InVersionOrder((change) => handler(change), logger);
        const ordered = order;
        return connection.onDidChangeTextDocument((event) => wellFormed('textDocument/didChange', didChangeParamsSchema, event) && ordered.changed(canonical(event)));
      },
      onDidCloseTextDocument: (handler) =>
        connection.onDidCloseTextDocument((event) => {
          if (!wellFormed('textDocument/didClose', documentParamsSchema, event)) return;
          const closed = canonical(event);
          order?.closed(closed.textDocument.uri);
          return handler(closed);
        }),
      onWillSaveTextDocument: (handler) => connection.onWillSaveTextDocument((event) => wellFormed('textDocument/willSave', documentParamsSchema, event) && (flush(), handler(canonical(event)))),
      onWillSaveTextDocumentWaitUntil: (handler) =>
        connection.onWillSaveTextDocumentWaitUntil((event, token) => {
          if (!wellFormed('textDocument/willSaveWaitUntil', documentParamsSchema, event)) throw new ResponseError(ErrorCodes.InvalidParams, 'textDocument/willSaveWaitUntil needs params.textDocument.uri');
          flush();
          return handler(canonical(event), token);
        }),
      onDidSaveTextDocument: (handler) => connection.onDidSaveTextDocument((event) => wellFormed('textDocument/didSave', didSaveParamsSchema, event) && (flush(), handler(canonical(event)))),
    },
  };
}

/**
 * Whether a notification's params are what `schema` says; if not, the log says which fields are
 * wrong (a notification has no answer to carry it) and, for a change, what that costs.
 */
function checker(logger: Logger) {
  return (method: string, schema: z.core.$ZodType, params: unknown): boolean => {
    const parsed = z.safeParse(schema, params);
    if (parsed.success) return true;
    const uri = (params as { textDocument?: { uri?: unknown } } | null)?.textDocument?.uri;
    const named = typeof uri === 'string' ? ` for ${uri.slice(0, 300)}` : '';
    const cost = method === 'textDocument/didChange' && named ? `: the server's copy of that document may now differ from the editor's until it is closed and opened again` : '';
    logger.warn(`ignored the editor's ${method}${named}, not as LSP says (${describeIssues(parsed.error).slice(0, 500)})${cost}`);
    return false;
  };
}
