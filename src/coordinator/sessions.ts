/**
 * The callers' sessions (CreateSession): where a caller's tasks work (its `workspace_root`) and
 * which agent sessions they share. A session is its caller's only — the identity that made it;
 * another that names it is told there is none, as if it did not exist (its agent sessions hold
 * that caller's conversations). And they are bounded: a bridge makes one each time it connects, so
 * a team's coordinator that runs for weeks would otherwise keep every one it ever made. A caller
 * keeps its MAX_PER_CALLER most recently used, the coordinator MAX_SESSIONS in all; past that
 * the least recently used is forgotten, its agent sessions ended.
 */
import { randomUUID } from 'node:crypto';

export const MAX_PER_CALLER = 256;
export const MAX_SESSIONS = 8_192;
/** What a session's metadata may hold: a few names (the client, its workspace), not a store. */
export const MAX_METADATA_ENTRIES = 64;
export const MAX_METADATA_BYTES = 64 * 1024;

export interface CallerSession {
  owner: string;
  agentId: string;
  metadata: Record<string, string>;
}

export class CallerSessions {
  /** In the order of their last use, the least recent first. */
  private readonly sessions = new Map<string, CallerSession>();

  constructor(
    /** A session forgotten: its agent sessions end. */
    private readonly forgotten: (sessionId: string) => void,
    private readonly limits = { perCaller: MAX_PER_CALLER, total: MAX_SESSIONS },
  ) {}

  create(owner: string, agentId: string, metadata: Record<string, string>): string {
    const id = randomUUID();
    this.sessions.set(id, { owner, agentId, metadata: { ...metadata } });
    this.bound(owner);
    return id;
  }

  /** The caller's session of that id, now its most recently used; undefined when it is not theirs, or not known. */
  use(id: string, caller: string): CallerSession | undefined {
    const session = this.sessions.get(id);
    if (!session || session.owner !== caller) return undefined;
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  /** Forgets them all (the coordinator stops). */
  endAll(): void {
    for (const id of this.sessions.keys()) this.forgotten(id);
    this.sessions.clear();
  }

  private bound(owner: string): void {
    const own = [...this.sessions].filter(([, session]) => session.owner === owner);
    for (const [id] of own.slice(0, Math.max(0, own.length - this.limits.perCaller))) this.forget(id);
    for (const id of [...this.sessions.keys()].slice(0, Math.max(0, this.sessions.size - this.limits.total))) this.forget(id);
  }

  private forget(id: string): void {
    this.sessions.delete(id);
    this.forgotten(id);
  }
}

/** Why a session's metadata is refused; undefined when it is within bounds. */
export function metadataProblem(metadata: Record<string, string>, changes: Record<string, string> = {}): string | undefined {
  const merged = { ...metadata, ...changes };
  const entries = Object.entries(merged).filter(([, value]) => value !== '');
  if (entries.length > MAX_METADATA_ENTRIES) return `the session's metadata would hold ${entries.length} entries: at most ${MAX_METADATA_ENTRIES}`;
  const bytes = entries.reduce((sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(value), 0);
  if (bytes > MAX_METADATA_BYTES) return `the session's metadata would hold ${Math.ceil(bytes / 1024)} KB: at most ${MAX_METADATA_BYTES / 1024} KB`;
  return undefined;
}
