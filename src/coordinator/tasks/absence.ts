/**
 * A detached task's caller may go and come back (a failover, a blip): its turn is cancelled only
 * when none of the caller's streams has been open on the task for the grace (runner.ts).
 */
import type { StoredRecord } from './store.js';

/** How long a detached task waits for its caller to follow it again (a failover, a blip). */
export const CALLER_GRACE_MS = 60_000;

/** Why a detached task whose caller did not come back is cancelled. */
export const callerGone = (graceMs: number) => `Task cancelled: its caller went away and did not follow it again within ${Math.round(graceMs / 1000)} s`;

export interface CallerAbsence {
  /** A record of the task's stream: a caller's stream began or ended. */
  note(record: StoredRecord): void;
  /** How long no stream of the caller's has been open (0 while one is). */
  goneFor(): number;
  stop(): void;
}

/**
 * The caller's streams open on the task (any coordinator's): when the last one ends, `turn` is
 * aborted unless one is open again within `graceMs`. A coordinator that died with one open never
 * says it ended: that stream counts as open.
 */
export function callerAbsence(turn: AbortController, graceMs: number): CallerAbsence {
  const open = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let goneAt: number | undefined;
  return {
    note: (record) => {
      const caller = record.caller;
      if (!caller) return;
      if ('attached' in caller) open.add(caller.attached);
      else open.delete(caller.detached);
      clearTimeout(timer);
      goneAt = open.size === 0 && 'detached' in caller ? record.at : undefined;
      if (goneAt === undefined) return;
      timer = setTimeout(() => turn.abort(callerGone(graceMs)), Math.max(0, goneAt + graceMs - Date.now()));
      timer.unref();
    },
    goneFor: () => (goneAt === undefined ? 0 : Date.now() - goneAt),
    stop: () => clearTimeout(timer),
  };
}
