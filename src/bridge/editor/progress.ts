/**
 * Work-done progress, whatever the editor supports: the client's own token, a token we create
 * with window/workDoneProgress/create (Zed ignores tokens it did not create), or — without
 * `window.workDoneProgress` — a showMessage at the start and a logMessage per step. Reports are
 * coalesced (see throttle.ts) so a chatty agent cannot flood the editor, and every progress
 * ends with a final message.
 */
import {
  MessageType,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type ProgressToken,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageserver';
import type { Logger } from '../../logger.js';
import type { EditorClient } from './client.js';
import { lastLine, oneLine } from '../../text.js';
import * as messages from './messages.js';
import { Coalescer, UPDATE_INTERVAL_MS } from './throttle.js';

/** How long the editor may take to accept a progress token. */
const CREATE_TIMEOUT_MS = 2_000;
/** Progress titles and messages are one line of at most this many cells (they come from agents). */
const TITLE_WIDTH = 60;
const MESSAGE_WIDTH = 80;

export interface Progress {
  report(message: string, percentage?: number): void;
  /**
   * The answer as it is being written (its last characters, see AnswerTail): its latest words
   * become the progress message, the first of them at once. Not logged where progress is a log.
   */
  writing(answerTail: string): void;
  /** Ends the progress with its final state, e.g. "Answered", "Failed: …", "Cancelled". */
  done(message: string): void;
  /** Runs `listener` when the user cancels from the editor's progress UI. */
  onCancel(listener: () => void): void;
}

export interface BeginOptions {
  /** What the work is: the question or the task (shown as "Buckley: <title>"). */
  title: string;
  /** Names the progress token an editor may show ("[task 3]" in Helix): `task 3`, `ask 4`. */
  kind: 'ask' | 'task';
  /** The token the client sent with its request (`workDoneToken`), if any. */
  clientToken?: ProgressToken;
  /** The client supports `$/progress` with server-created tokens. */
  workDoneProgress: boolean;
}

export class ProgressFactory {
  private readonly cancellers = new Map<ProgressToken, () => void>();
  /** Tokens created so far: a token is a few words a person can read, not a UUID. */
  private created = 0;

  constructor(
    private readonly editor: EditorClient,
    private readonly logger: Logger,
  ) {}

  /** window/workDoneProgress/cancel from the editor. */
  cancel(token: ProgressToken): void {
    this.cancellers.get(token)?.();
  }

  /**
   * Starts a progress at once. A token we must create first is asked for in the background, so
   * the work (an ask, a task) does not wait a round trip to the editor: what is reported before
   * the editor accepts the token is replayed, in order, once it has.
   */
  begin(options: BeginOptions): Progress {
    const title = oneLine(`Buckley: ${options.title}`, TITLE_WIDTH);
    if (options.clientToken !== undefined) return this.onToken(options.clientToken, title);
    if (!options.workDoneProgress) return new MessageProgress(this.editor, options.title);
    const pending = new PendingProgress();
    void this.createToken(options.kind).then((token) =>
      // Refused after the work ended: no "started…" message after the fact, only the log lines.
      pending.settle(token === undefined ? new MessageProgress(this.editor, options.title, !pending.ended) : this.onToken(token, title)),
    );
    return pending;
  }

  /** A token the editor accepted (window/workDoneProgress/create), or undefined when it did not. */
  private async createToken(kind: BeginOptions['kind']): Promise<ProgressToken | undefined> {
    const token = `${kind} ${++this.created}`;
    try {
      // An editor that never answers must not hold the progress up: messages then.
      await this.editor.request(WorkDoneProgressCreateRequest.type, { token }, { timeoutMs: CREATE_TIMEOUT_MS });
      return token;
    } catch (error) {
      this.logger.debug(`the editor refused a progress token (${(error as Error).message}); using messages`);
      return undefined;
    }
  }

  private onToken(token: ProgressToken, title: string): Progress {
    const progress = new TokenProgress(this.editor, token, title, () => this.cancellers.delete(token));
    this.cancellers.set(token, () => progress.cancelled());
    return progress;
  }
}

/**
 * A progress whose token the editor has not accepted yet: calls are kept and replayed in order,
 * only the latest of consecutive reports (the rest would be coalesced away anyway).
 */
class PendingProgress implements Progress {
  /** done() was called (the work is over) before the token settled. */
  ended = false;
  private target: Progress | undefined;
  private readonly calls: { report: boolean; call: (progress: Progress) => void }[] = [];

  settle(progress: Progress): void {
    this.target = progress;
    for (const { call } of this.calls.splice(0)) call(progress);
  }

  private forward(call: (progress: Progress) => void, report = false): void {
    if (this.target) return call(this.target);
    if (report && this.calls.at(-1)?.report) this.calls.pop();
    this.calls.push({ report, call });
  }

  report(message: string, percentage?: number): void {
    this.forward((progress) => progress.report(message, percentage), true);
  }
  writing(answerTail: string): void {
    this.forward((progress) => progress.writing(answerTail), true);
  }

  done(message: string): void {
    this.ended = true;
    this.forward((progress) => progress.done(message));
  }

  onCancel(listener: () => void): void {
    this.forward((progress) => progress.onCancel(listener));
  }
}

class TokenProgress implements Progress {
  /** Made when sent: of an answer streaming in many pieces, only the tails sent are laid out. */
  private readonly reports: Coalescer<() => WorkDoneProgressReport | WorkDoneProgressEnd>;
  private ended = false;
  private lastReport: string | undefined;
  /** The answer has begun to arrive. */
  private wrote = false;
  private readonly cancelListeners: (() => void)[] = [];

  constructor(
    editor: EditorClient,
    token: ProgressToken,
    title: string,
    private readonly release: () => void,
  ) {
    this.reports = new Coalescer((report) => editor.progress(WorkDoneProgress.type, token, report()), UPDATE_INTERVAL_MS);
    // The begin counts in the token's budget of notifications a second, as the end does.
    editor.progress(WorkDoneProgress.type, token, { kind: 'begin', title, cancellable: true });
    this.reports.counted();
  }

  report(message: string, percentage?: number): void {
    if (this.ended) return;
    const clamped = percentage === undefined ? {} : { percentage: Math.max(0, Math.min(100, Math.round(percentage))) };
    const report: WorkDoneProgressReport = { kind: 'report', cancellable: true, message: oneLine(message, MESSAGE_WIDTH), ...clamped };
    // The same step again tells the editor nothing.
    const key = `${report.message}\u0000${report.percentage ?? ''}`;
    if (key === this.lastReport) return;
    this.lastReport = key;
    this.reports.push(() => report);
  }

  writing(answerTail: string): void {
    if (this.ended) return;
    const first = !this.wrote;
    this.wrote = true;
    this.lastReport = undefined;
    // The first words go out at once (within the bound of 10 a second): the user sees the answer begin.
    this.reports.push(() => ({ kind: 'report', cancellable: true, message: lastLine(answerTail, MESSAGE_WIDTH) }), first);
  }
  done(message: string): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
    // The end in the slot kept for it: a report still waiting is superseded, not sent before it.
    this.reports.finish(() => ({ kind: 'end', message: oneLine(message, MESSAGE_WIDTH) }));
  }

  onCancel(listener: () => void): void {
    this.cancelListeners.push(listener);
  }

  cancelled(): void {
    for (const listener of this.cancelListeners) listener();
  }
}

/**
 * Without `$/progress`: a message at the start, a log line per step (each once: a step repeated
 * by the agent is not logged again), and a log line at the end. The final state's one-line
 * message is the work's own (a task's "done: …", an ask's answer).
 */
class MessageProgress implements Progress {
  private readonly steps: Coalescer<string>;
  private lastLogged: string | undefined;
  /** Log lines say whose step they are. */
  private readonly title: string;

  constructor(
    private readonly editor: EditorClient,
    work: string,
    announce = true,
  ) {
    this.title = `Buckley: ${oneLine(work, TITLE_WIDTH)}`;
    if (announce) messages.info(editor, messages.fit('working on «', work, '»…'));
    this.steps = new Coalescer((line) => this.log(line), UPDATE_INTERVAL_MS);
  }
  private log(line: string): void {
    if (line === this.lastLogged) return;
    this.lastLogged = line;
    this.editor.log(MessageType.Log, line);
  }
  report(message: string): void {
    this.steps.push(`${this.title}: ${oneLine(message, MESSAGE_WIDTH)}`);
  }
  writing(): void {
    // A log line per piece of the answer would bury the log: the answer comes whole at the end.
  }
  done(message: string): void {
    this.steps.finish(`${this.title}: ${oneLine(message, MESSAGE_WIDTH)}`);
  }
  onCancel(): void {
    // No progress UI to cancel from; $/cancelRequest and commands still cancel.
  }
}

/** How much of an answer being written is kept to show its latest words. */
const TAIL_CHARS = 1024;

/** The last characters of an answer being written: bounded however long it grows (a flattened rope would cost the whole answer per piece). */
export class AnswerTail {
  private text = '';
  push(delta: string): string {
    this.text = (this.text + delta).slice(-TAIL_CHARS);
    return this.text;
  }
}
