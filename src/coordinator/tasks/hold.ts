/**
 * A coordinator's hold on a task it runs — its run. At most one run holds a task: it is taken in
 * the task's state atomically (any coordinator's change comes before or after, never between),
 * kept by heartbeats, and lost when another coordinator takes the task up because this one
 * stopped beating for longer than the lease (it was cut off from NATS, paused, or killed).
 *
 * A run's records are stored only while it holds the task (the log's fence, store.ts), and its
 * changes of the task's state likewise: a coordinator back from such an absence records nothing
 * more of the task, and stops its turn (runner.ts). Whether another run is alive is judged by
 * watching its heartbeats come, not by comparing its clock with this one's.
 */
import { randomBytes } from 'node:crypto';
import { FINAL_STATUSES } from '../../wire/contract.js';
import type { TaskState, TaskStates } from './store.js';

/** How often a running task's state says its coordinator is still at it (a fifth of the queue's lease, 10 s on NATS). */
export const HEARTBEAT_MS = 2_000;
/** How long another run's heartbeat must be seen not to move before its task is taken from it. */
const SILENT_MS = HEARTBEAT_MS * 2 + 1_000;
/** How often a task without a state is asked for again (3 s in all) before it is given up as unknown. */
const UNKNOWN_TRIES = 5;

/** What was seen of another run: it is alive while its heartbeat moves. */
interface Seen {
  replica?: string;
  run: string;
  updatedAt: number;
  since: number;
}

export class Hold {
  /** What this run's records carry: the log stores them only while it holds the task. */
  readonly run: string;
  private lostTo: string | undefined;

  constructor(
    private readonly states: TaskStates,
    readonly taskId: string,
    run: string,
  ) {
    this.run = run;
  }

  /** The coordinator that took the task up from this run, once it is known to have. */
  get lost(): string | undefined {
    return this.lostTo;
  }

  /**
   * Changes the task's state as this run (its heartbeat: no change but the time): false, and
   * nothing changed, once another run holds it or it ended.
   */
  async update(change: Partial<TaskState>): Promise<boolean> {
    let held = true;
    await this.states.update(this.taskId, (state) => {
      if (state.run !== this.run) {
        held = false;
        this.lostTo = state.replica ?? 'another coordinator';
        return undefined;
      }
      return { ...state, ...change, updatedAt: Date.now() };
    });
    return held;
  }
}

/** Sets a task's final state, unless it has one: once its final record is stored, whoever holds it (that record is the truth). */
export async function settleState(states: TaskStates, taskId: string, status: TaskState['status']): Promise<void> {
  await states.update(taskId, (state) => (FINAL_STATUSES.has(state.status) ? undefined : { ...state, status, pending: [], updatedAt: Date.now() }));
}

/**
 * Takes the task for a run of this coordinator's: at once where no other run holds it; where one
 * does, once its heartbeat has been seen not to move for a while (it is waited for meanwhile, the
 * job kept: if that coordinator dies, this one takes the task up). 'unknown' where the task has no
 * state (a cluster's copy a moment behind is asked again for a few seconds first); undefined
 * where it ended, or `signal` aborts first.
 */
export async function takeHold(states: TaskStates, taskId: string, replica: string, signal: AbortSignal, waiting: (holder: string) => void = () => undefined): Promise<Hold | 'unknown' | undefined> {
  const run = randomBytes(6).toString('base64url');
  let seen: Seen | undefined;
  let said = false;
  for (let unknown = 0; !signal.aborted; ) {
    let outcome = 'unknown' as 'taken' | 'ended' | 'held' | 'unknown';
    await states.update(taskId, (state) => {
      // Taken already by this very call (a write NATS stored, its answer lost, made again).
      if (state.run === run) return (outcome = 'taken'), undefined;
      if (FINAL_STATUSES.has(state.status)) return (outcome = 'ended'), undefined;
      if (state.run && alive(state, replica, seen)) {
        outcome = 'held';
        if (seen?.run !== state.run || seen.updatedAt !== state.updatedAt) seen = { ...(state.replica ? { replica: state.replica } : {}), run: state.run, updatedAt: state.updatedAt, since: Date.now() };
        return undefined;
      }
      outcome = 'taken';
      return { ...state, status: 'running', replica, run, updatedAt: Date.now() };
    });
    if (outcome === 'taken') return new Hold(states, taskId, run);
    if (outcome === 'ended') return undefined;
    if (outcome === 'unknown') {
      if (unknown === UNKNOWN_TRIES) return 'unknown';
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** unknown++));
      continue;
    }
    if (!said) waiting(holderOf(seen));
    said = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HEARTBEAT_MS);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  }
  return undefined;
}

const holderOf = (seen: Seen | undefined) => (seen?.replica ? `replica ${seen.replica}` : 'another coordinator');

/**
 * Whether the run holding the task is alive: its heartbeat moved within SILENT_MS of this
 * coordinator's watching it. A run of this coordinator's own name that is not running here (it
 * was restarted) is not.
 */
function alive(state: TaskState, replica: string, seen: Seen | undefined): boolean {
  if (state.replica === replica) return false;
  if (!seen || seen.run !== state.run || seen.updatedAt !== state.updatedAt) return true;
  return Date.now() - seen.since < SILENT_MS;
}
