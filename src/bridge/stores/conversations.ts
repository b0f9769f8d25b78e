/**
 * Conversations: an ask and its follow-ups. Each keeps its turns (question, answer), the code it
 * started from and the answer document it lives in, saved across restarts, so a follow-up — typed
 * at the end of the answer document, or `buckley/ask` with the conversation's id — continues it:
 * the agent keeps the history in its session where the coordinator has one per conversation, and
 * the earlier turns are sent along (within the budget) for one that lost it or never had it.
 */
import { join } from 'node:path';
import type { Range } from 'vscode-languageserver';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { rangeSchema } from '../protocol.js';
import { parseJson, readStateFileSync, writeFileAtomicSync } from '../../state.js';
import { oneLine, utf8Length, utf8Prefix, utf8Suffix } from '../../text.js';
import { canonicalUri } from '../../uri.js';

/** The line of an answer document below which a follow-up question is written. */
export const FOLLOW_UP_MARKER = '*Follow up: write your question below this line, then run the code action "Buckley: follow up".*';

const turnSchema = z.object({ question: z.string(), answer: z.string(), at: z.string() });
const conversationSchema = z.object({
  id: z.string(),
  /** The first question. */
  title: z.string(),
  /** The code it started from. */
  uri: z.optional(z.string()),
  range: z.optional(rangeSchema),
  /** The answer document it is written in (appended to by each follow-up). */
  document: z.optional(z.string()),
  turns: z.array(turnSchema),
  updated: z.string(),
  /** A task's: a follow-up is a task too, in the same agent session. */
  task: z.optional(z.boolean()),
  /** What the user undid of the agent's changes since its last turn: said with the next turn. */
  undone: z.optional(z.array(z.string())),
});
export type Conversation = z.infer<typeof conversationSchema>;
export type Turn = z.infer<typeof turnSchema>;
const savedSchema = z.object({ version: z.literal(1), conversations: z.array(conversationSchema) });

/** Conversations kept (the ones used longest ago go first), and turns kept of each. */
const KEPT_CONVERSATIONS = 50;
const KEPT_TURNS = 40;
/** An answer kept for a thread: more than any budget sends of it. */
const KEPT_ANSWER_BYTES = 256 * 1024;
const SAVE_DELAY_MS = 300;
/** Undone changes told to the agent with its next turn: the newest, at most. */
const MAX_UNDONE_NOTES = 40;

/** What `buckley/status` and `buckley.conversations` list of a conversation. */
export interface ConversationSummary {
  id: string;
  title: string;
  turns: number;
  updated: string;
  document?: string;
}

export class Conversations {
  private readonly all = new Map<string, Conversation>();
  private loaded = false;
  private dirty = false;
  private saveTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stateDir: string,
    private readonly logger: Logger,
  ) {}

  private get stateFile(): string {
    return join(this.stateDir, 'conversations.json');
  }

  /** The conversations of earlier sessions, read at first use (a bad file is reported and ignored). */
  private ensureLoaded(): void {
    if (this.loaded) return;
    this.loaded = true;
    try {
      this.merge(this.parse(readStateFileSync(this.stateFile)));
    } catch (error) {
      this.logger.warn(`ignoring the saved conversations: ${(error as Error).message}`);
    }
  }

  private parse(text: string | undefined): Conversation[] {
    if (text === undefined) return [];
    const parsed = savedSchema.safeParse(parseJson(text));
    if (parsed.success) return parsed.data.conversations.map((conversation) => (conversation.document ? { ...conversation, document: canonicalUri(conversation.document) } : conversation));
    this.logger.warn(`ignoring ${this.stateFile}: it is not a saved conversation list`);
    return [];
  }

  /** Earlier sessions' conversations go before this session's (which win on the same id). */
  private merge(saved: Conversation[]): void {
    const current = [...this.all.values()];
    this.all.clear();
    for (const conversation of [...saved, ...current]) this.all.set(conversation.id, conversation);
  }

  /** Saves them if anything changed; synchronous and small (it also runs as the process exits). */
  saveSync(): void {
    if (!this.dirty) return;
    this.ensureLoaded();
    try {
      // Read again first: another editor's server may have saved its own since.
      this.merge(this.parse(readStateFileSync(this.stateFile)));
      writeFileAtomicSync(this.stateFile, JSON.stringify({ version: 1, conversations: [...this.all.values()].slice(-KEPT_CONVERSATIONS) }));
      this.dirty = false;
    } catch (error) {
      this.logger.warn(`could not save the conversations: ${(error as Error).message}`);
    }
  }

  /** Soon, off the ask's path (a burst of answers is one write); at exit at the latest. */
  private scheduleSave(): void {
    this.dirty = true;
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      this.saveSync();
    }, SAVE_DELAY_MS).unref();
  }

  get(id: string): Conversation | undefined {
    this.ensureLoaded();
    return this.all.get(id);
  }

  /** The conversation an answer document holds. */
  ofDocument(uri: string): Conversation | undefined {
    this.ensureLoaded();
    // Asked for every code action: documents are kept canonical, so this is one comparison each.
    const wanted = canonicalUri(uri);
    for (const conversation of this.all.values()) if (conversation.document === wanted) return conversation;
    return undefined;
  }

  /** Adds a turn (the first one starts the conversation). */
  record(id: string, turn: Omit<Turn, 'at'>, about: { uri?: string; range?: Range; task?: boolean } = {}): Conversation {
    this.ensureLoaded();
    const at = new Date().toISOString();
    const conversation = this.all.get(id) ?? { id, title: turn.question, ...about, turns: [], updated: at };
    const answer = utf8Length(turn.answer) > KEPT_ANSWER_BYTES ? `…${utf8Suffix(turn.answer, KEPT_ANSWER_BYTES)}` : turn.answer;
    conversation.turns = [...conversation.turns, { question: turn.question, answer, at }].slice(-KEPT_TURNS);
    conversation.updated = at;
    // Re-inserted: the conversation used last comes last (and is kept longest).
    this.all.delete(id);
    this.all.set(id, conversation);
    while (this.all.size > KEPT_CONVERSATIONS) this.all.delete(this.all.keys().next().value!);
    this.scheduleSave();
    return conversation;
  }

  setDocument(id: string, document: string): void {
    const conversation = this.all.get(id);
    const canonical = canonicalUri(document);
    if (!conversation || conversation.document === canonical) return;
    conversation.document = canonical;
    this.scheduleSave();
  }

  /** The user undid changes the agent made in this conversation: the agent is told with its next turn. */
  noteUndone(id: string, lines: readonly string[]): void {
    const conversation = this.get(id);
    if (!conversation || !lines.length) return;
    conversation.undone = [...(conversation.undone ?? []), ...lines].slice(-MAX_UNDONE_NOTES);
    this.scheduleSave();
  }

  /** What the user undid since the agent's last turn in it, for its next turn (then forgotten). */
  takeUndone(id: string): string[] {
    const conversation = this.get(id);
    const lines = conversation?.undone ?? [];
    if (conversation?.undone) {
      delete conversation.undone;
      this.scheduleSave();
    }
    return lines;
  }

  /** Newest first. */
  list(): ConversationSummary[] {
    this.ensureLoaded();
    return [...this.all.values()].reverse().map(({ id, title, turns, updated, document }) => ({ id, title, turns: turns.length, updated, ...(document ? { document } : {}) }));
  }
}

/**
 * The earlier turns as the agent reads them, newest kept within `maxBytes`; older ones that do
 * not fit are counted, not sent. Empty when there are none.
 */
export function earlierTurns(turns: readonly Turn[], maxBytes: number): string {
  const parts: string[] = [];
  let room = maxBytes - 80; // the note on what was left out
  let kept = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    const part = `The user asked: ${turn.question}\n\nYou answered:\n${turn.answer}`;
    const size = utf8Length(part) + 2;
    if (size > room) {
      // The newest turn is the one a follow-up most likely refers to: too big, its answer's end is kept.
      if (kept === 0 && room > 400) {
        parts.unshift(`The user asked: ${utf8Prefix(oneLine(turn.question, 150), 150)}\n\nYou answered (its end):\n…${utf8Suffix(turn.answer, room - 250)}`);
        kept = 1;
      }
      break;
    }
    parts.unshift(part);
    room -= size;
    kept++;
  }
  if (parts.length === 0) return '';
  const dropped = turns.length - kept;
  return [...(dropped ? [`(${dropped} earlier turn(s) left out: over the budget)`] : []), ...parts].join('\n\n');
}

/**
 * A turn's prompt told what the user undid of the agent's changes since its last turn (the agent's
 * history says it made them; the files no longer have them).
 */
export function withUndone(prompt: string, undone: readonly string[]): string {
  if (!undone.length) return prompt;
  // After the question: its first line stays the question (a title, an agent's /command).
  return `${prompt}\n\nSince your last turn, the user undid these changes of yours (the files have their earlier text there again); do not make them again unless asked:\n${undone.map((line) => `- ${line}`).join('\n')}`;
}

/** What the user wrote below the follow-up line of an answer document (trimmed); none: nothing. */
export function typedFollowUp(text: string): string | undefined {
  const at = text.lastIndexOf(FOLLOW_UP_MARKER);
  if (at === -1) return undefined;
  const typed = text.slice(at + FOLLOW_UP_MARKER.length).trim();
  return typed || undefined;
}
