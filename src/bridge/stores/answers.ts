/**
 * Delivering answers every way the editor can take them (brief §3.2): a markdown document
 * opened with window/showDocument, hover over the asked range, a one-line showMessage
 * summary, a markdown prompt where that is the best home (Zed), and the full text in
 * window/logMessage. Answers are remembered for hover and saved across restarts.
 */
import { writeFile } from 'node:fs';
import { mkdir, readdir, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CancellationToken, MarkupKind, MessageType, ShowMessageRequest, type Hover, type Position, type Range, type TextDocumentContentChangeEvent } from 'vscode-languageserver';
import * as z from '../../schema.js';
import type { Features } from '../capabilities.js';
import type { Logger } from '../../logger.js';
import { rangeSchema } from '../protocol.js';
import { parseJson, readStateFile, readStateFileSync, writeFileAtomicSync } from '../../state.js';
import { shiftRange } from '../editor/ranges.js';
import { wrapMarkdown } from '../editor/wrap.js';
import { codeSpan, describeLines, inert, oneLine } from '../../text.js';
import { readText, realPath, shortened, writeText } from '../../fileAccess.js';
import { MAX_READ_BYTES } from '../../wire/contract.js';
import { canonicalUri, shownName } from '../../uri.js';
import * as messages from '../editor/messages.js';
import { FOLLOW_UP_MARKER } from './conversations.js';
import { applyEdit, showDocument, type EditorClient } from '../editor/client.js';
import type { TextDocument } from 'vscode-languageserver-textdocument';

/** How long the editor may take to append a follow-up's answer to an open answer document. */
const APPEND_TIMEOUT_MS = 10_000;

/** Where a delivered answer goes: a conversation's document to append to, and who wants its URI. */
export interface Delivery {
  /** The conversation's answer document: the answer is appended to it (a new document otherwise). */
  appendTo?: string;
  /** Told the answer document's URI once it is written. */
  documented?: (uri: string) => void;
}

const answerSchema = z.object({
  question: z.string(),
  answer: z.string(),
  uri: z.optional(z.string()),
  range: z.optional(rangeSchema),
  documentUri: z.optional(z.string()),
  at: z.string(),
  /** The coordinator sent no answer, only a report of what it did (see reportOnly). */
  report: z.optional(z.boolean()),
  /** The conversation it belongs to (its document ends with a place to follow up). */
  conversation: z.optional(z.string()),
  /** The whole answer's length, when only its start is kept (for hover). */
  length: z.optional(z.number()),
  /** What the turn used and cost, in words (flows/usage.ts), where the agent said: the document's footer. */
  usage: z.optional(z.string()),
  /**
   * What the document shows of the turn besides its answer (the plan, the thinking: flows/plans.ts),
   * as markdown: in the document only, never kept with the answer, shown on hover or in a message.
   */
  notes: z.optional(z.string()),
});
export type Answer = z.infer<typeof answerSchema>;

/**
 * What the coordinator reported instead of an answer (status lines, or a receipt that repeats
 * the request), as the document says it: its words quoted, never passed off as the model's.
 */
export function reportOnly(lines: readonly string[]): string {
  return [
    'The coordinator sent no answer, only a report of what it did:',
    '',
    ...lines.flatMap((line) => line.split('\n')).map((line) => `> ${line}`),
    '',
    'Whatever it changed or wrote (plans, notes, files) is where it keeps them; buckley-lsp only relays this report.',
  ].join('\n');
}

const savedSchema = z.object({ version: z.literal(1), answers: z.array(answerSchema) });

// The callback API: a fifth less CPU per answer than fs/promises' FileHandle (measured).
const writeNewFile = promisify(writeFile);

const KEPT_ANSWERS = 100;
/** How much of an answer hover shows (and is kept for it): the start, and where the rest is. */
const HOVER_ANSWER_CHARS = 4_000;
/** How much of an answer the log line carries; the document has all of it. */
const LOGGED_ANSWER_CHARS = 256 * 1024;
/** Answers longer than this are written as they are: re-flowing megabytes would hold up the editor. */
const WRAPPED_ANSWER_CHARS = 1024 * 1024;
/** How long the editor may take to open an answer document before the message says where it is instead. */
const SHOW_DOCUMENT_TIMEOUT_MS = 5_000;
/** Answer documents kept on disk; older ones are removed. */
const KEPT_DOCUMENTS = 200;

interface Pending {
  uri: string;
  range: Range;
  question: string;
}

export class Answers {
  private answers: Answer[] = [];
  /** The saved answers have been read (or there were none). */
  private loaded = false;
  /** Something changed since the answers were loaded or saved. */
  private dirty = false;
  private readonly pending = new Set<Pending>();
  private written = 0;
  /** The answer directory known to exist (made once, not before every answer). */
  private madeDirectory: string | undefined;
  /** Answer directories said to be unwritable: each is named once, not with every answer. */
  private readonly unwritable = new Set<string>();

  constructor(
    private readonly editor: EditorClient,
    private readonly stateDir: string,
    private readonly logger: Logger,
    private answersDir: string,
    /** The workspace folders (URIs): documents are named relative to them. */
    private readonly workspaceRoots: () => string[] = () => [],
    /** The document the editor has open at a URI: a follow-up's answer is appended there, not on disk. */
    private readonly openDocument: (uri: string) => TextDocument | undefined = () => undefined,
  ) {}

  /** A document as a person names it (its path in the workspace, else its path, else its URI), as a name in markdown. */
  private displayName(uri: string): string {
    return codeSpan(shownName(uri, this.workspaceRoots()));
  }

  private get stateFile(): string {
    return join(this.stateDir, 'answers.json');
  }

  setDirectory(directory: string): void {
    this.answersDir = directory;
  }

  /** Loads the answers saved by an earlier session (before the ones of this session); a bad file is reported and ignored. */
  async load(): Promise<void> {
    try {
      this.answers = [...this.parse(await readStateFile(this.stateFile)), ...this.answers];
    } catch (error) {
      this.logger.warn(`ignoring the saved answers: ${(error as Error).message}`);
    }
    this.loaded = true;
  }

  private parse(text: string | undefined): Answer[] {
    if (text === undefined) return [];
    const parsed = savedSchema.safeParse(parseJson(text));
    if (parsed.success) return parsed.data.answers.map((answer) => (answer.uri ? { ...answer, uri: canonicalUri(answer.uri) } : answer));
    this.logger.warn(`ignoring ${this.stateFile}: it is not a saved answer list`);
    return [];
  }

  /**
   * Saves the answers, if anything changed. Synchronous and small, so it also runs as the process
   * exits, however it exits; answers saved by an earlier session that were not loaded yet are kept.
   */
  saveSync(): void {
    if (!this.dirty) return;
    if (!this.loaded) {
      try {
        this.answers = [...this.parse(readStateFileSync(this.stateFile)), ...this.answers];
      } catch {
        return; // not a file we can read: leave it alone (load() reported it)
      }
      this.loaded = true;
    }
    writeFileAtomicSync(this.stateFile, JSON.stringify({ version: 1, answers: this.answers.slice(-KEPT_ANSWERS) }));
    this.dirty = false;
  }

  /** Marks a range as being asked about, so hover can say so; returns the release function. */
  markPending(uri: string, range: Range, question: string): () => void {
    const entry = { uri, range, question };
    this.pending.add(entry);
    return () => this.pending.delete(entry);
  }

  /** Keeps answers on the code they are about while the document changes. */
  documentChanged(uri: string, changes: readonly TextDocumentContentChangeEvent[]): void {
    for (const change of changes) {
      for (const answer of this.answers) {
        if (answer.uri === uri && answer.range) {
          answer.range = shiftRange(answer.range, change);
          this.dirty = true;
        }
      }
      for (const pending of this.pending) {
        if (pending.uri === uri) pending.range = shiftRange(pending.range, change) ?? pending.range;
      }
    }
  }

  /** The newest answer (or ask in flight) whose range holds `position`. */
  hover(uri: string, position: Position, markdown: boolean): Hover | null {
    for (const pending of this.pending) {
      if (pending.uri === uri && contains(pending.range, position)) {
        return hoverOf(`**Buckley** is answering: ${pending.question}`, pending.range, markdown);
      }
    }
    for (let i = this.answers.length - 1; i >= 0; i--) {
      const answer = this.answers[i]!;
      if (answer.uri === uri && answer.range && contains(answer.range, position)) {
        const rest = answer.length === undefined ? '' : `\n\n… ${answer.documentUri ? `the whole answer (${answer.length.toLocaleString('en')} characters) is in [its document](${answer.documentUri})` : 'the rest of the answer is in the log'}`;
        return hoverOf(`**Buckley** — ${answer.question}\n\n${answer.answer}${rest}`, answer.range, markdown);
      }
    }
    return null;
  }

  /**
   * Delivers an answer. It is on hover at once; the messages and the document follow right after
   * the request that asked has its result (the requester is waiting on that, not on them), and the
   * document is written in the background, without holding anything up.
   */
  deliver(answer: Omit<Answer, 'at' | 'documentUri'>, features: Features, verb: 'answered' | 'done' = 'answered', delivery: Delivery = {}): Answer {
    // The agent's text is shown as written, never interpreted (no escapes, no bidi tricks).
    const record: Answer = { ...answer, question: inert(answer.question), answer: inert(answer.answer), at: new Date().toISOString() };
    // Kept for hover (and saved) is the start of a long answer: the document holds all of it.
    const { notes: _notes, ...bare } = record;
    const kept: Answer = record.answer.length > HOVER_ANSWER_CHARS ? { ...bare, answer: startOf(record.answer, HOVER_ANSWER_CHARS), length: record.answer.length } : bare;
    this.answers.push(kept);
    this.dirty = true;
    if (this.answers.length > KEPT_ANSWERS * 2) this.answers = this.answers.slice(-KEPT_ANSWERS);
    setImmediate(() => this.announce(record, kept, features, verb, delivery));
    return record;
  }

  /**
   * The one-line message says what happened and where the answer is — "answered «why…»: answer
   * opened", "done «task»: hover the code" — not the answer's first words; and only what did
   * happen: "opened" once the editor opened it.
   */
  private announce(record: Answer, kept: Answer, features: Features, verb: 'answered' | 'done', delivery: Delivery): void {
    // A long answer's start and end (where its conclusion is); the document holds all of it.
    const half = LOGGED_ANSWER_CHARS / 2;
    // (Cut where it may split a surrogate pair: each piece made well-formed again.)
    const logged = record.answer.length > LOGGED_ANSWER_CHARS ? `${record.answer.slice(0, half).toWellFormed()}\n\n… (${record.answer.length - 2 * half} characters left out here; the answer document has them) …\n\n${record.answer.slice(-half).toWellFormed()}` : record.answer;
    this.editor.log(MessageType.Info, `Buckley's ${record.report ? 'report on' : 'answer to'} "${record.question}":\n${logged}`);
    if (!features.showDocument && features.markdownMessageRequest) {
      // Zed keeps a prompt until the user acts, and renders markdown: the answer fits there (its start, if long).
      // Nothing waits on it: the prompt is where the answer is read, kept until the user dismisses it.
      const message = `**${record.question}**\n\n${kept.answer}${kept.length ? '\n\n… (the rest is in the log)' : ''}`;
      this.editor.request(ShowMessageRequest.type, { type: MessageType.Info, message, actions: [{ title: 'Dismiss' }] }, { token: CancellationToken.None }).catch(() => undefined);
    }
    const appended = delivery.appendTo ? this.appendToDocument(delivery.appendTo, record, features) : undefined;
    (appended ?? this.writeDocument(record).then((uri) => ({ uri, open: false })))
      .then(
        async ({ uri, open }): Promise<Shown> => {
          record.documentUri = uri;
          kept.documentUri = uri;
          delivery.documented?.(uri);
          // Already in the editor: the answer appears where the user is reading.
          if (open) return { opened: true };
          if (!features.showDocument) return { opened: false };
          // Beside the code, which keeps the focus: Neovim and Emacs open another window, Helix a split.
          const opened = await showDocument(this.editor, { uri, takeFocus: false }, SHOW_DOCUMENT_TIMEOUT_MS);
          if (!opened) this.logger.info(`the editor did not open the answer document ${uri}`);
          return { opened, ...(opened ? {} : { file: uri }) };
        },
        (error: Error): Shown => {
          this.cannotWrite(error);
          return { opened: false };
        },
      )
      .then((shown) => {
        if (!features.answerMessage) return;
        // "no answer to «…»: report opened": a report is never announced as an answer.
        const said = record.report && verb === 'answered' ? 'no answer to' : verb;
        messages.info(this.editor, messages.fit(`${said} «`, record.question, `»: ${whereShown(record, features, shown)}`));
      });
  }

  /** The answer directory cannot be written: said once per directory, with the setting that moves it. */
  private cannotWrite(error: Error): void {
    this.logger.warn(`could not write the answer document: ${error.message}`);
    if (this.unwritable.has(this.answersDir)) return;
    this.unwritable.add(this.answersDir);
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'ENOTDIR' || code === 'EEXIST' ? 'it is not a directory' : code === 'EROFS' ? 'read-only file system' : code === 'ENOSPC' ? 'no space left' : oneLine(error.message, 80);
    messages.warn(
      this.editor,
      `cannot write answers to ${shortened(this.answersDir, 100)} (${why}): set buckley.answers.directory to a folder you can write; until then each answer is in the log and its message says where else`,
      400,
    );
  }

  private async writeDocument(answer: Answer): Promise<string> {
    const stamp = answer.at.replace(/[:.]/g, '-');
    const when = answer.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
    const source = answer.uri
      ? `*About ${this.displayName(answer.uri)}${answer.range ? `, ${describeLines(answer.range)}` : ''} — ${when}*\n\n`
      : `*${when}*\n\n`;
    // Wrapped, so it reads in an editor that does not wrap long lines.
    const body = answer.answer.length > WRAPPED_ANSWER_CHARS ? answer.answer : wrapMarkdown(answer.answer);
    const content = `# ${answer.question}\n\n${source}${body}\n${footer(answer)}${answer.conversation ? `\n---\n\n${FOLLOW_UP_MARKER}\n\n` : ''}`;
    // A new file each time, opened only once written: no temporary file and rename needed.
    for (let attempt = 1; ; attempt++) {
      const path = join(this.answersDir, `${stamp}-${slug(answer.question)}${attempt > 1 ? `-${attempt}` : ''}.md`);
      try {
        if (this.madeDirectory !== this.answersDir) {
          await mkdir(this.answersDir, { recursive: true, mode: 0o700 });
          this.madeDirectory = this.answersDir;
        }
        await writeNewFile(path, content, { flag: 'wx', mode: 0o600 });
        if (++this.written % 20 === 0) await this.prune();
        return pathToFileURL(path).href;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (attempt >= 20 || (code !== 'EEXIST' && code !== 'ENOENT')) throw error;
        // EEXIST: the same question twice in one millisecond. ENOENT: the directory was removed.
        if (code === 'ENOENT') this.madeDirectory = undefined;
      }
    }
  }

  /**
   * A follow-up's answer, added to its conversation's document where the user wrote the question:
   * below the last follow-up line, which moves below the answer. Open in the editor, it is an edit
   * of the buffer (made against the version read; tried again if the user typed meanwhile);
   * otherwise the file on disk. A document that is gone is written anew.
   */
  private async appendToDocument(uri: string, answer: Answer, features: Features): Promise<{ uri: string; open: boolean }> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const open = this.openDocument(uri);
      if (!open || !features.applyEdit) break;
      const text = open.getText();
      const { from, to, newText } = followUpEdit(text, answer);
      const edits = [{ range: { start: open.positionAt(from), end: open.positionAt(to) }, newText }];
      const edit = features.documentChanges ? { documentChanges: [{ textDocument: { uri: open.uri, version: open.version }, edits }] } : { changes: { [open.uri]: edits } };
      try {
        const result = await applyEdit(this.editor, { label: 'Buckley: the answer', edit }, APPEND_TIMEOUT_MS);
        if (result.applied) return { uri, open: true };
        this.logger.debug(`the editor did not append the answer (${result.failureReason ?? 'no reason given'}); attempt ${attempt}`);
      } catch (error) {
        this.logger.debug(`appending the answer: ${(error as Error).message}`);
        break;
      }
    }
    // Open but not appended: the file under the user's buffer is not changed behind its back; a
    // document of its own holds the answer instead.
    if (this.openDocument(uri) && features.applyEdit) {
      this.logger.warn(`the editor did not add the answer to ${uri}: it is in a document of its own`);
      return { uri: await this.writeDocument(answer), open: false };
    }
    let path: string;
    try {
      path = fileURLToPath(uri);
    } catch {
      return { uri: await this.writeDocument(answer), open: false };
    }
    // Our own document, as a regular file of bounded size: a pipe or a link put in its place is not followed.
    const real = realPath(path);
    let text: string;
    try {
      if (!real) throw new Error('a loop of links');
      text = await readText(real, { maxBytes: MAX_READ_BYTES });
    } catch {
      return { uri: await this.writeDocument(answer), open: false };
    }
    const { from, to, newText } = followUpEdit(text, answer);
    await writeText(real, text.slice(0, from) + newText + text.slice(to));
    return { uri, open: false };
  }

  /** Writes a document of ours (a listing) to the answer directory, replacing the last one, and opens it. */
  async showListing(name: string, markdown: string): Promise<string> {
    await mkdir(this.answersDir, { recursive: true, mode: 0o700 });
    // A regular file only: a pipe or a link put in its place is refused, not waited on or followed.
    const path = join(realPath(this.answersDir) ?? this.answersDir, name);
    await writeText(path, markdown, 0o600);
    const uri = pathToFileURL(path).href;
    await showDocument(this.editor, { uri, takeFocus: true }, SHOW_DOCUMENT_TIMEOUT_MS);
    return uri;
  }

  /** Keeps the newest KEPT_DOCUMENTS answer documents (their names start with the time). */
  private async prune(): Promise<void> {
    // Answer documents start with their time (a digit); listings of ours do not, and stay.
    const names = (await readdir(this.answersDir)).filter((name) => /^\d.*\.md$/.test(name)).sort();
    await Promise.all(names.slice(0, Math.max(0, names.length - KEPT_DOCUMENTS)).map((name) => unlink(join(this.answersDir, name)).catch(() => undefined)));
  }
}

/**
 * Where a follow-up's answer goes in its document's `text`: it replaces the question the user
 * wrote below the follow-up line (as a heading, with the answer, and a new follow-up line after
 * it); a question written since the follow-up was asked is left below the new line.
 */
export function followUpEdit(text: string, answer: Pick<Answer, 'question' | 'answer' | 'at' | 'usage' | 'notes'>): { from: number; to: number; newText: string } {
  const when = answer.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const turn = `## ${answer.question}\n\n*${when}*\n\n${wrapMarkdown(answer.answer)}\n${footer(answer)}\n---\n\n${FOLLOW_UP_MARKER}\n\n`;
  const at = text.lastIndexOf(FOLLOW_UP_MARKER);
  if (at === -1) return { from: text.length, to: text.length, newText: `${text.endsWith('\n') ? '' : '\n'}\n---\n\n${turn}` };
  const typed = text.slice(at + FOLLOW_UP_MARKER.length).trim();
  // The asked question (or nothing) below the line: replaced by the turn.
  if (!typed || typed === answer.question.trim()) return { from: at, to: text.length, newText: turn };
  // Something else written there meanwhile: the turn goes above the line, the writing stays below it.
  return { from: at, to: at, newText: turn.slice(0, -(FOLLOW_UP_MARKER.length + 2)) };
}

function contains(range: Range, position: Position): boolean {
  const afterStart = position.line > range.start.line || (position.line === range.start.line && position.character >= range.start.character);
  const beforeEnd = position.line < range.end.line || (position.line === range.end.line && position.character <= range.end.character);
  return afterStart && beforeEnd;
}

function hoverOf(text: string, range: Range, markdown: boolean): Hover {
  return {
    contents: markdown ? { kind: MarkupKind.Markdown, value: text } : { kind: MarkupKind.PlainText, value: text.replace(/\*\*/g, '') },
    range,
  };
}

/** Whether the editor opened the answer's document; `file`: written, but not opened. */
interface Shown {
  opened: boolean;
  file?: string;
}

/** Where the editor shows the answer (or report), in a few words: only where it is. */
function whereShown(record: Answer, features: Features, shown: Shown): string {
  const what = record.report ? 'report' : 'answer';
  if (shown.opened) return `${what} opened`;
  if (shown.file) return `${what} in ${basename(fileURLToPath(shown.file))}`;
  if (features.markdownMessageRequest) return 'see the notification';
  if (record.uri && record.range && features.answerHover) return 'hover the code';
  return `${what} in the log`;
}

/** The start of a long text, cut at a line end where there is one near the cut, a code block closed if it was open. */
/** The start of a long answer, at most `chars`: cut at a line where one is near, a code block left open closed. */
export function startOf(text: string, chars: number): string {
  let cut = text.slice(0, chars).toWellFormed();
  const lineEnd = cut.lastIndexOf('\n');
  if (lineEnd > chars / 2) cut = cut.slice(0, lineEnd);
  // A code block left open is closed with the marker that opened it.
  const fences = [...cut.matchAll(/^\s*(```|~~~)/gm)];
  return fences.length % 2 === 1 ? `${cut}\n${fences.at(-1)![1]}` : cut;
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'answer'
  );
}

/** The answer's footer: what the turn used and cost, where the agent said (apart from the answer's words). */
/** What follows a turn's answer in its document: its notes (plan, thinking), then what it used. */
function footer(answer: Pick<Answer, 'usage' | 'notes'>): string {
  return `${answer.notes ?? ''}${answer.usage ? `\n*Usage: ${answer.usage}*\n` : ''}`;
}
