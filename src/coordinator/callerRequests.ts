/**
 * Questions our coordinator puts to a caller during a turn — an approval, the editor's buffer of a
 * file, a write to make in it — announced on the turn's stream and answered by id with a unary
 * call (ApproveToolExecution, ProvideFile, ConfirmFileWrite). Each is answered once, only from the
 * connection that started the turn, and ends by itself when the turn ends or its time is up.
 */
import { randomBytes } from 'node:crypto';

/** Who started the turn: the identity it is known by and its connection. */
export interface TurnCaller {
  identity: string;
  peer: string;
}

/** How a question ended: answered by its caller, or without an answer. */
export type Ending<T> = { answered: T } | { timedOut: true } | { aborted: true };

export class CallerRequests<T> {
  private readonly pending = new Map<string, TurnCaller & { settle: (ending: Ending<T>) => void }>();

  /**
   * Asks: `announce` sends the question with its id; the promise holds how it ended, at the
   * latest after `timeoutMs` or when `signal` aborts.
   */
  ask(caller: TurnCaller, options: { timeoutMs: number; signal: AbortSignal }, announce: (id: string) => void): Promise<Ending<T>> {
    return new Promise((resolve) => {
      const id = randomBytes(16).toString('hex');
      const settle = (ending: Ending<T>) => {
        if (!this.pending.delete(id)) return;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        resolve(ending);
      };
      const onAbort = () => settle({ aborted: true });
      const timer = setTimeout(() => settle({ timedOut: true }), options.timeoutMs);
      timer.unref();
      options.signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { ...caller, settle });
      announce(id);
    });
  }

  /** An answer: `unknown` when no question has this id (or it has ended), `notTheCaller` from another connection. */
  answer(id: string, from: TurnCaller, answer: T): 'answered' | 'unknown' | 'notTheCaller' {
    const pending = this.pending.get(id);
    if (!pending) return 'unknown';
    if (from.identity !== pending.identity || from.peer !== pending.peer) return 'notTheCaller';
    pending.settle({ answered: answer });
    return 'answered';
  }
}
