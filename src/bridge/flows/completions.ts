/**
 * Inline completions (LSP 3.18 `textDocument/inlineCompletion`, for editors that ask: Neovim
 * 0.12): the code around the cursor, within its budget, completed by the coordinator
 * (`StreamInlineCompletions`). Quick: a request goes out at once (or after `completions.debounceMs`,
 * where the user asks for a wait: dropped if the editor cancels it meanwhile); a newer request for the same document cancels the
 * older one end to end (the gRPC call, and with it the model's HTTP request); typing what the
 * last completion offered is answered from it, with no new request.
 */
import { LSPErrorCodes, ResponseError, type CancellationToken, type InlineCompletionItem, type InlineCompletionParams, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { utf8Length, utf8Prefix, utf8Suffix } from '../../text.js';
import { BUDGET_KEY, type EditorContext } from '../../wire/contract.js';
import type { Features } from '../capabilities.js';
import type { CoordinatorSession } from '../link/calls.js';

export interface CompletionDependencies {
  documents: TextDocuments<TextDocument>;
  config(): Config;
  features(): Features;
  coordinator(): Promise<CoordinatorSession>;
  logger: Logger;
}

/** The last completion offered, and the document's text before and after the cursor then: typing into it is answered from it. */
interface Offered {
  uri: string;
  before: string;
  after: string;
  text: string;
}

/** Why there are no completions, in words for `buckley/status` and `doctor`; undefined: there are. */
export function completionsUnavailable(features: Features, config: Config): string | undefined {
  if (!config.completions.enabled) return 'turned off (buckley.completions.enabled)';
  if (!features.inlineCompletion) return 'the editor does not ask for inline completions (LSP 3.18 textDocument/inlineCompletion: Neovim 0.12 does)';
  if (!features.coordinator.known) return 'the coordinator has not answered yet';
  if (!features.coordinator.inlineCompletion) return 'the coordinator does not complete code (ours does with a model, buckley.agent.driver "openai"; an ACP agent cannot)';
  return undefined;
}

export class InlineCompletions {
  private offered: Offered | undefined;
  /** The request in flight per document: a newer one cancels it. */
  private readonly inFlight = new Map<string, AbortController>();
  private saidWhy: string | undefined;

  constructor(private readonly deps: CompletionDependencies) {}

  async complete(params: InlineCompletionParams, token: CancellationToken): Promise<InlineCompletionItem[] | null> {
    const { deps } = this;
    const config = deps.config();
    // The first request may come before the coordinator has said what it offers (it is started with
    // the editor): wait for that, within the completion's deadline, rather than show nothing.
    if (config.completions.enabled && deps.features().inlineCompletion && !deps.features().coordinator.known) {
      await (await deps.coordinator()).whenSettled(config.completions.timeoutMs);
      if (token.isCancellationRequested) throw cancelled();
    }
    const why = completionsUnavailable(deps.features(), config);
    if (why) {
      if (why !== this.saidWhy) deps.logger.info(`no inline completions: ${why}`);
      this.saidWhy = why;
      return null;
    }
    const document = deps.documents.get(params.textDocument.uri);
    if (!document) return null;
    const text = document.getText();
    const offset = document.offsetAt(params.position);
    const position = params.position;
    const before = text.slice(0, offset);
    const after = text.slice(offset);
    const remembered = this.fromOffered(document.uri, before, after);
    if (remembered !== undefined) return remembered ? [item(remembered, position)] : null;

    const budget = Math.min(config.completions.maxBytes, config.context.maxBytes);
    // Three quarters of the budget before the cursor, the rest after it.
    const prefix = utf8Suffix(before, Math.floor((budget * 3) / 4));
    const suffix = utf8Prefix(after, budget - utf8Length(prefix));

    this.inFlight.get(document.uri)?.abort();
    const controller = new AbortController();
    this.inFlight.set(document.uri, controller);
    const onCancel = token.onCancellationRequested(() => controller.abort());
    try {
      await debounce(config.completions.debounceMs, controller.signal);
      if (controller.signal.aborted) throw cancelled();
      const coordinator = await deps.coordinator();
      const context = contextAround(document, prefix, suffix, position);
      const outcome = await coordinator.inlineCompletions({
        prompt: prefix,
        context,
        signal: AbortSignal.any([controller.signal, AbortSignal.timeout(config.completions.timeoutMs)]),
        timeoutMs: config.completions.timeoutMs,
      });
      if (controller.signal.aborted) throw cancelled();
      // A completion is a suggestion: a failure is logged, and the editor shows none.
      if (outcome.status === 'failed') deps.logger.info(`inline completion failed: ${outcome.failure.message}`);
      const texts = outcome.status === 'completed' ? outcome.texts : [];
      const best = texts[0];
      this.offered = best ? { uri: document.uri, before, after, text: best } : undefined;
      return texts.length ? texts.map((completion) => item(completion, position)) : null;
    } catch (error) {
      if (error instanceof ResponseError) throw error;
      // A completion is a suggestion: a failure is logged, and the editor shows none.
      deps.logger.info(`inline completion failed: ${(error as Error).message}`);
      return null;
    } finally {
      onCancel.dispose();
      if (this.inFlight.get(document.uri) === controller) this.inFlight.delete(document.uri);
    }
  }

  /**
   * The rest of the last completion where the user has typed its beginning since (and the code
   * after the cursor is as it was); '' when they typed all of it; undefined when it does not apply.
   */
  private fromOffered(uri: string, before: string, after: string): string | undefined {
    const offered = this.offered;
    if (!offered || offered.uri !== uri || offered.after !== after || !before.startsWith(offered.before)) return undefined;
    const typed = before.slice(offered.before.length);
    return offered.text.startsWith(typed) ? offered.text.slice(typed.length) : undefined;
  }

  /** Cancels every completion in flight (shutdown). */
  cancelAll(): void {
    for (const controller of this.inFlight.values()) controller.abort();
  }
}

function item(text: string, position: InlineCompletionParams['position']): InlineCompletionItem {
  return { insertText: text, range: { start: position, end: position } };
}

function cancelled(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.RequestCancelled, 'cancelled: a newer request or a keystroke replaced it');
}

/** The code around the cursor as the wire carries it: the excerpt, the cursor an empty selection in it. */
function contextAround(document: TextDocument, prefix: string, suffix: string, position: InlineCompletionParams['position']): EditorContext {
  const startOffset = document.offsetAt(position) - prefix.length;
  const startLine = document.positionAt(startOffset).line;
  const before = prefix.split('\n');
  const cursor = { line: before.length - 1, character: before.at(-1)!.length };
  return {
    document: {
      uri: document.uri,
      language_id: document.languageId,
      content: prefix + suffix,
      version: document.version,
      workspace_root: '',
      selection: { start: cursor, end: cursor },
      metadata: { excerpt_start_line: String(startLine), excerpt_end_line: String(startLine + (prefix + suffix).split('\n').length - 1) },
    },
    related_documents: [],
    symbols: [],
    metadata: { [BUDGET_KEY]: String(utf8Length(prefix) + utf8Length(suffix)) },
  };
}

function debounce(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
