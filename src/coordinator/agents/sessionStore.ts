/**
 * Which ACP session holds which conversation, kept on disk (the state directory's
 * `agent-sessions.json`), so a conversation outlives the coordinator: an agent that offers
 * `loadSession` gets the session back after a restart (ACP `session/load`). Keyed by the agent's
 * command and the conversation (the caller's identity and its id): never another agent's session,
 * never another caller's.
 */
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { parseJson, readStateFileSync, writeFileAtomicSync } from '../../state.js';

const savedSchema = z.object({ version: z.literal(1), sessions: z.record(z.string(), z.string()) });
/** Conversations remembered; the oldest is forgotten first (it is replayed instead, if followed up). */
const KEPT = 200;

export class SessionStore {
  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  private read(): Map<string, string> {
    try {
      const text = readStateFileSync(this.file);
      if (text === undefined) return new Map();
      const parsed = savedSchema.safeParse(parseJson(text));
      if (parsed.success) return new Map(Object.entries(parsed.data.sessions));
      this.logger.warn(`ignoring ${this.file}: it is not a list of agent sessions`);
    } catch (error) {
      this.logger.warn(`ignoring ${this.file}: ${(error as Error).message}`);
    }
    return new Map();
  }

  get(agent: string, conversation: string): string | undefined {
    return this.read().get(keyOf(agent, conversation));
  }

  /** Read, changed and written at once: other coordinators sharing the file keep their entries. */
  set(agent: string, conversation: string, sessionId: string): void {
    const sessions = this.read();
    const key = keyOf(agent, conversation);
    sessions.delete(key);
    sessions.set(key, sessionId);
    const kept = [...sessions].slice(-KEPT);
    try {
      writeFileAtomicSync(this.file, JSON.stringify({ version: 1, sessions: Object.fromEntries(kept) }));
    } catch (error) {
      this.logger.warn(`could not remember the agent session of a conversation in ${this.file}: ${(error as Error).message}`);
    }
  }
}

function keyOf(agent: string, conversation: string): string {
  return `${agent} ${conversation}`;
}
