/**
 * The ACP face's sessions, kept across restarts (`acp-sessions.json` in the state directory):
 * each one's workspace, mode, title and turns — what `session/list` lists, what `session/load`
 * replays to the client, and what a loaded session's next prompt carries for an agent that no
 * longer holds it. Bounded: the newest MAX_SESSIONS sessions, MAX_TURNS turns each, answers cut.
 */
import { join } from 'node:path';
import type { SessionInfo } from '@agentclientprotocol/sdk';
import type { Logger } from '../logger.js';
import * as z from '../schema.js';
import { parseJson, readStateFileSync, stateDirectory, writeFileAtomicSync } from '../state.js';
import { earlierTurns, type Turn } from '../bridge/stores/conversations.js';

const MAX_SESSIONS = 200;
const MAX_TURNS = 50;
/** An answer kept is cut to this (UTF-16 units): the replay and the earlier turns are for reading, not for everything. */
const MAX_ANSWER = 64 * 1024;

const storedSchema = z.object({
  sessionId: z.string(),
  cwd: z.string(),
  title: z.string(),
  updatedAt: z.string(),
  /** `task`, `ask`, or `task:<the agent's mode>` (checked against what the agent offers when reopened). */
  mode: z.string(),
  turns: z.array(z.object({ question: z.string(), answer: z.string(), at: z.string() })),
});
export type StoredSession = z.infer<typeof storedSchema>;
const savedSchema = z.object({ version: z.literal(1), sessions: z.array(storedSchema) });

export class SessionHistory {
  private sessions: Map<string, StoredSession> | undefined;
  private readonly file: string;

  constructor(env: NodeJS.ProcessEnv, private readonly logger: Logger) {
    this.file = join(stateDirectory(env), 'acp-sessions.json');
  }

  /** Newest first; those in `cwd` only, where it is given. */
  list(cwd?: string | null): SessionInfo[] {
    return [...this.all().values()]
      .filter((session) => !cwd || session.cwd === cwd)
      .reverse()
      .map(({ sessionId, cwd: where, title, updatedAt }) => ({ sessionId, cwd: where, title, updatedAt }));
  }

  get(sessionId: string): StoredSession | undefined {
    return this.all().get(sessionId);
  }

  /** A turn of the session, kept (the session made newest). */
  note(session: { id: string; cwd: string; mode: string }, question: string, answer: string): void {
    const all = this.all();
    const at = new Date().toISOString();
    const before = all.get(session.id);
    const turns = [...(before?.turns ?? []), { question, answer: answer.length > MAX_ANSWER ? `${answer.slice(0, MAX_ANSWER)}…` : answer, at }].slice(-MAX_TURNS);
    all.delete(session.id);
    all.set(session.id, { sessionId: session.id, cwd: session.cwd, title: before?.title ?? question.replace(/\s+/g, ' ').trim().slice(0, 80), updatedAt: at, mode: session.mode, turns });
    for (const oldest of all.keys()) {
      if (all.size <= MAX_SESSIONS) break;
      all.delete(oldest);
    }
    this.save();
  }

  /** The session's turns as an agent reads them, within `maxBytes`. */
  earlier(sessionId: string, maxBytes: number): string {
    const turns: Turn[] = this.get(sessionId)?.turns ?? [];
    return earlierTurns(turns, maxBytes);
  }

  private all(): Map<string, StoredSession> {
    if (this.sessions) return this.sessions;
    this.sessions = new Map();
    const text = readStateFileSync(this.file);
    if (text === undefined) return this.sessions;
    const parsed = z.safeParse(savedSchema, parseJson(text));
    if (!parsed.success) {
      this.logger.warn(`${this.file} is not what buckley-lsp wrote: its sessions are not listed (it is written anew with the next turn)`);
      return this.sessions;
    }
    for (const session of parsed.data.sessions) this.sessions.set(session.sessionId, session);
    return this.sessions;
  }

  private save(): void {
    try {
      writeFileAtomicSync(this.file, JSON.stringify({ version: 1, sessions: [...this.all().values()] }));
    } catch (error) {
      this.logger.warn(`the sessions could not be kept in ${this.file}: ${(error as Error).message}`);
    }
  }
}
