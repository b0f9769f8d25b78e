/**
 * A task whose stream broke — its coordinator went away, the connection failed — followed again,
 * on a team's coordinator, whose replicas share its tasks (`shared_tasks`): SubscribeTaskEvents from
 * the event after the last one read, on whichever coordinator the session reconnects to (the same
 * one back, or the next of a team's: session.ts), until its final event. Each break is given
 * FOLLOW_AGAIN_MS to mend, within the task's own deadline; then the break is the task's failure.
 */
import { FailedError } from '../../errors.js';
import type { CoordinatorClient } from '../../wire/client.js';
import type { TaskEvent } from '../../wire/contract.js';
import { CoordinatorError, Status } from '../../wire/errors.js';
import { plainDetails } from './failures.js';
import type { StreamRunner } from './streams.js';

/** How long a broken task's stream is looked for again (a failover takes a moment; a restart, seconds). */
export const FOLLOW_AGAIN_MS = 60_000;
/** The shortest wait between two tries. */
const PAUSE_MS = 250;

export interface Broken {
  runner: StreamRunner;
  taskId: string;
  signal: AbortSignal;
  /** When the task's own time runs out (ms since the epoch). */
  deadline: number;
  /** The sequence number of the last event read. */
  after(): number;
  /** What broke it. */
  broke: unknown;
  /** Said to the user while the task is looked for again. */
  notice(message: string): void;
}

/** The stream broke off (its coordinator went away, the connection failed): not an answer of the coordinator's. */
export function brokeOff(error: unknown): boolean {
  return error instanceof CoordinatorError && (error.unavailable || (error.code === Status.INTERNAL && /RST_STREAM|connection|stream removed/i.test(error.details)));
}

/** Follows the task again until its final event; throws what ended the trying (the signal, a failure in words). */
export async function followAgain(broken: Broken, read: (client: CoordinatorClient, event: TaskEvent) => void): Promise<void> {
  const { runner, taskId, signal } = broken;
  let brokeAt = Date.now();
  let broke = broken.broke;
  for (;;) {
    runner.logger.info(`task ${taskId}: its stream broke after event ${broken.after()} (${detailsOf(broke)}); following it again`);
    broken.notice(broke instanceof CoordinatorError && broke.behind === 'store' ? "The coordinator cannot reach the team's store: following the task again…" : 'The connection to the coordinator broke: following the task again…');
    let progressed = false;
    try {
      await runner.keeper.calling(signal, async (client) => {
        const request = { plan_id: '', task_ids: [taskId], from_sequence: broken.after() + 1 };
        const options = { timeoutMs: Math.max(1, broken.deadline - Date.now()), signal, metadata: runner.metadata('task') };
        for await (const event of client.open.SubscribeTaskEvents(request, options)) {
          if (!progressed) runner.logger.info(`task ${taskId}: followed again on ${runner.keeper.address}, ${Date.now() - brokeAt} ms after its stream broke`);
          progressed = true;
          read(client, event);
        }
      });
      return;
    } catch (error) {
      if (signal.aborted) throw error;
      if (error instanceof CoordinatorError && error.code === Status.NOT_FOUND) {
        const address = runner.keeper.address;
        throw new FailedError(
          `the coordinator at ${address} does not know the task: it does not share the store the task was kept in (is every address of buckley.coordinator.address a replica of the same team, on the same NATS?): run it again`,
          `${address} does not know the task: see buckley.coordinator.address`,
        );
      }
      // Not reachable now (every coordinator tried, the next try later), or broken again.
      const mendable = brokeOff(error) || (error instanceof FailedError && !error.final);
      if (progressed) brokeAt = Date.now();
      if (!mendable || Date.now() - brokeAt >= FOLLOW_AGAIN_MS || Date.now() >= broken.deadline) throw error;
      broke = error;
      await pause(runner, signal, Math.min(brokeAt + FOLLOW_AGAIN_MS, broken.deadline));
    }
  }
}

/** Until the session's next try (at least PAUSE_MS, at most `until`), or the signal. */
async function pause(runner: StreamRunner, signal: AbortSignal, until: number): Promise<void> {
  const { state } = runner.keeper;
  const next = state.kind === 'backoff' ? state.retryAt : 0;
  const ms = Math.max(PAUSE_MS, Math.min(next, until) - Date.now());
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function detailsOf(error: unknown): string {
  return error instanceof CoordinatorError ? plainDetails(error.details) : error instanceof Error ? error.message : String(error);
}
