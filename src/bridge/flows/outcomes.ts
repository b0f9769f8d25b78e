/**
 * A call to the coordinator that did not complete, as the editor's request ends: the one place a
 * failure (errors.ts: what happened, and in a few words what to do) becomes an LSP error — its
 * summary carried in `data` for clients that show one line — and a cancellation LSP's own.
 */
import { LSPErrorCodes, ResponseError } from 'vscode-languageserver';
import type { Failure } from '../../errors.js';
import { inline } from '../../text.js';

export type Unfinished = { status: 'failed'; failure: Failure } | { status: 'cancelled' };

/** How the work is named: "Buckley could not answer: …", "the ask was cancelled". */
export interface WorkWords {
  failed: string;
  cancelled: string;
}

export function responseError(outcome: Unfinished, words: WorkWords): ResponseError<{ summary: string } | undefined> {
  if (outcome.status === 'cancelled') return new ResponseError(LSPErrorCodes.RequestCancelled, words.cancelled);
  const { message, summary } = outcome.failure;
  // RequestFailed, not InternalError: the request was right and the server is whole; the coordinator
  // or its agent failed it, and the message says how (editors print an InternalError's code name).
  return new ResponseError(LSPErrorCodes.RequestFailed, `${words.failed}: ${inline(message)}`, summary ? { summary } : undefined);
}
