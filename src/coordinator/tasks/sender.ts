/**
 * How a run records its task's events on the task's stream. A record not stored ends the turn:
 * where the store would not take it (every retry spent, a permission missing) the task's story has
 * a hole, and it fails — also when the refusal comes after the turn ended (its last piece, sent in
 * the background): the end waits for what was sent before it. Where another run holds the task
 * now, nothing more is recorded here.
 */
import type { Logger } from '../../logger.js';
import type { Hold } from './hold.js';
import { Superseded, type TaskLog } from './store.js';

export type FinalStatus = 'completed' | 'failed' | 'cancelled';

/** Why a turn is aborted that ends the task failed, not cancelled: this coordinator stops, or cannot record it. */
export class Failure extends Error {}

export interface Send {
  /** Records an event (the task's end, with `final`): whether it was stored. */
  (event: Record<string, unknown>, final?: FinalStatus): Promise<boolean>;
  /** Once every event sent so far was stored or refused: the failure a refused one made of the task, if any. */
  settled(): Promise<Failure | undefined>;
}

export function taskSender(log: TaskLog, logger: Logger, taskId: string, hold: Hold | undefined, controller: AbortController, lose: (why: Superseded) => void): Send {
  const run = hold ? { run: hold.run } : {};
  const inFlight = new Set<Promise<boolean>>();
  const send = (event: Record<string, unknown>, final?: FinalStatus) => {
    const sent = log.append(taskId, final ? { ...run, event, final } : { ...run, event }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof Superseded) lose(error);
        else logger.warn(`task ${taskId}: ${final ? `its end (${final})` : 'an event'} was not stored: ${(error as Error).message}`);
        if (!final && !controller.signal.aborted) controller.abort(new Failure(progressLost((error as Error).message)));
        return false;
      },
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
    return sent;
  };
  const settled = async () => {
    await Promise.all(inFlight);
    return controller.signal.reason instanceof Failure ? controller.signal.reason : undefined;
  };
  return Object.assign(send, { settled });
}

/** Why a task whose progress the store refused was stopped: what the store said, once. */
function progressLost(said: string): string {
  const why = said.replace(/^the task's record could not be stored: /, '');
  return why.startsWith("the team's store") ? `${why}; so this task was stopped: run it again` : `the team's store did not take this task's progress (${why}), so it was stopped: run it again`;
}
