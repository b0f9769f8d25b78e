/**
 * What a running task asks its caller — an approval, the editor's buffer of a file, a write to
 * make there, a question — announced on the task's stream and answered through any coordinator,
 * by the caller that started the task (its identity, not its connection: a bridge that moved to
 * another replica still answers). Each request is answered once: the reply claims it in the
 * task's state (atomically, whichever coordinator takes it), then comes to the running task as a
 * record of its stream. Unanswered, it ends when its time is up or the task ends.
 */
import { randomBytes } from 'node:crypto';
import type { TaskEngine } from './store.js';

/** How a request ended: answered by its caller, or without an answer. */
export type Ending<T> = { answered: T } | { timedOut: true } | { aborted: true };

/** How long a reply that claimed a request may take to reach the running task. */
const CLAIMED_REPLY_MS = 30_000;

/** A request's id: its task's id, then its own (any coordinator finds the task from it). */
const ID = /^([A-Za-z0-9_-]{1,128})\.[0-9a-f]{32}$/;

export function taskOfRequest(id: string): string | undefined {
  return ID.exec(id)?.[1];
}

export class TaskRequests {
  private readonly pending = new Map<string, (ending: Ending<unknown>) => void>();

  constructor(
    private readonly taskId: string,
    private readonly engine: TaskEngine,
    /** The run asking (hold.ts): its requests go into the task's state only while it holds the task. */
    private readonly run?: string,
  ) {}

  /**
   * Asks: `announce` sends the request with its id; the promise holds how it ended, at the latest
   * after `timeoutMs` or when `signal` aborts — unless a reply has claimed it by then, which then
   * comes.
   */
  async ask<T>(options: { timeoutMs: number; signal: AbortSignal }, announce: (id: string) => void): Promise<Ending<T>> {
    const id = `${this.taskId}.${randomBytes(16).toString('hex')}`;
    await this.engine.states.update(this.taskId, (state) => (this.run && state.run !== this.run ? undefined : { ...state, pending: [...(state.pending ?? []), id] }));
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (ending: Ending<unknown>) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        resolve(ending as Ending<T>);
      };
      // Ends without an answer only if no reply claimed it meanwhile (its record is on its way then).
      const end = async (ending: Ending<unknown>) => {
        let claimed = true;
        await this.engine.states
          .update(this.taskId, (state) => {
            claimed = !(state.pending ?? []).includes(id);
            return claimed ? undefined : { ...state, pending: state.pending!.filter((open) => open !== id) };
          })
          .catch(() => (claimed = false));
        if (!claimed || options.signal.aborted) settle(ending);
        // Claimed by a reply whose coordinator went before writing it down: not waited on for ever.
        else setTimeout(() => settle(ending), CLAIMED_REPLY_MS).unref();
      };
      const onAbort = () => void end({ aborted: true });
      timer = setTimeout(() => void end({ timedOut: true }), options.timeoutMs);
      timer.unref();
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, settle);
      announce(id);
      if (options.signal.aborted) onAbort();
    });
  }

  /** A reply record of the task's stream: its request answered (once). */
  reply(id: string, answer: unknown): void {
    this.pending.get(id)?.({ answered: answer });
  }
}

/**
 * Claims a request for a caller's reply: `unknown` when it is not waiting (never asked, answered,
 * or ended), `notTheCaller` when `by` is not who started the task; `claimed` once it is theirs to answer.
 */
export async function claimRequest(engine: TaskEngine, id: string, by: string): Promise<'claimed' | 'unknown' | 'notTheCaller'> {
  const taskId = taskOfRequest(id);
  if (!taskId) return 'unknown';
  let outcome: 'claimed' | 'unknown' | 'notTheCaller' = 'unknown';
  await engine.states.update(taskId, (state) => {
    if (!(state.pending ?? []).includes(id)) return (outcome = 'unknown'), undefined;
    if (state.owner !== by) return (outcome = 'notTheCaller'), undefined;
    outcome = 'claimed';
    return { ...state, pending: state.pending!.filter((open) => open !== id) };
  });
  return outcome;
}
