/**
 * The guard's journal: what each turn under way found of what it guards (guardedState.ts), kept on
 * disk until the turn is checked. A coordinator killed in the middle of a turn (SIGKILL, the OOM
 * killer, a power cut) takes its agent with it (bubblewrap's --die-with-parent) but never checks
 * the turn: what the agent had changed would run outside any sandbox when the user next starts it.
 * The next buckley-lsp to start on the machine checks, for each journal whose process is gone,
 * what that turn guarded.
 *
 * The journal holds no file's text (a state file can be megabytes): only the guarded keys' values.
 * It lives in buckley-lsp's state folder, which no sandbox writes (sandboxPlans.ts).
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { parseJson, readStateFileSync, stateDirectory, writeFileAtomicSync } from '../../state.js';
import { checkWatched, type Watched, type WatchRecord } from './guardedState.js';

const RecordSchema = z.object({
  agent: z.string(),
  watched: z.array(
    z.object({
      absent: z.array(z.string()),
      there: z.array(z.object({ path: z.string(), id: z.string(), link: z.optional(z.string()) })),
      folders: z.array(z.string()),
      keyed: z.array(z.object({ file: z.string(), keys: z.array(z.string()), existed: z.boolean(), values: z.nullable(z.array(z.tuple([z.string(), z.string()]))) })),
    }),
  ),
});
type JournalRecord = z.infer<typeof RecordSchema>;

/** `<pid>-<its start time>-<n>.json`, and `….checking-<pid>-<start>` while a process checks it. */
const RECORD_NAME = /^(\d+)-(\d+)-\d+\.json(?:\.checking-(\d+)-(\d+))?$/;
/** A record being written (state.ts's atomic write), by the process writing it. */
const PARTIAL_NAME = /^\d+-\d+-\d+\.json\.(\d+)\..*\.tmp$/;

/** The user's journal, in buckley-lsp's state folder. */
export function guardJournalOf(env: NodeJS.ProcessEnv, logger: Logger): GuardJournal {
  return new GuardJournal(join(stateDirectory(env), 'guards'), logger);
}

/** What the guarded places held before the turns under way began (GuardJournal.beforeTurns). */
export interface BeforeTurns {
  /** Places then absent (a file made since is a turn's). */
  absent: Set<string>;
  /** A keyed file's values at its guarded keys then (JSON texts). */
  values: Map<string, string[]>;
}

export class GuardJournal {
  private next = 0;
  private saidUnwritable = false;
  private readonly self = `${process.pid}-${startTimeOf(process.pid) ?? 0}`;

  constructor(
    private readonly folder: string,
    private readonly logger: Logger,
  ) {}

  /** Makes the folder: before any sandbox is made, so that each binds it read-only where it must. */
  prepare(): void {
    try {
      mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    } catch (error) {
      this.unwritable(error);
    }
  }

  /** Where one turn's watch is kept while it runs. */
  record(): WatchRecord {
    const path = join(this.folder, `${this.self}-${this.next++}.json`);
    let saved = false;
    return {
      save: (agent, watched) => {
        try {
          writeFileAtomicSync(path, JSON.stringify({ agent, watched: watched.map(serialized) } satisfies JournalRecord));
          saved = true;
        } catch (error) {
          this.unwritable(error);
        }
      },
      remove: () => {
        if (saved) rmSync(path, { force: true });
      },
    };
  }

  /**
   * What the turns under way here (of any buckley-lsp, or of one killed and not yet checked) found
   * before they began: the guarded places then absent, and the keyed files' values then — the
   * user's, where the files now may hold a turn's change not yet put back.
   */
  beforeTurns(): BeforeTurns {
    const before: BeforeTurns = { absent: new Set(), values: new Map() };
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return before;
    }
    for (const name of names.filter((candidate) => RECORD_NAME.test(candidate))) {
      const parsed = RecordSchema.safeParse(parseOrUndefined(join(this.folder, name)));
      if (!parsed.success) continue;
      for (const each of parsed.data.watched) {
        for (const path of each.absent) before.absent.add(path);
        for (const { file, existed, values } of each.keyed) {
          if (!existed) before.absent.add(file);
          else if (!before.values.has(file)) before.values.set(file, (values ?? []).map(([, value]) => value));
        }
      }
    }
    return before;
  }

  /** Checks the turns of buckley-lsp processes that stopped before they could. */
  recover(): void {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch {
      return;
    }
    for (const name of names) {
      const partial = PARTIAL_NAME.exec(name);
      // Killed as it wrote the record: the one before it, if any, is there whole.
      if (partial && !alive(partial[1]!, '0')) rmSync(join(this.folder, name), { force: true });
      const match = RECORD_NAME.exec(name);
      if (!match || alive(match[1]!, match[2]!) || (match[3] && alive(match[3], match[4]!))) continue;
      const claimed = join(this.folder, `${name.replace(/\.checking-.*$/, '')}.checking-${this.self}`);
      try {
        // Another buckley-lsp starting at the same time takes it, or this one does.
        renameSync(join(this.folder, name), claimed);
      } catch {
        continue;
      }
      this.check(claimed, match[1]!);
      rmSync(claimed, { force: true });
    }
  }

  private check(path: string, pid: string): void {
    const parsed = RecordSchema.safeParse(parseOrUndefined(path));
    if (!parsed.success) {
      this.logger.warn(`${path}, what a turn of buckley-lsp (process ${pid}) guarded, cannot be read: what its agent changed that runs code later was not checked. Look at its settings before you start it again`);
      return;
    }
    const { agent, watched } = parsed.data;
    this.logger.warn(`buckley-lsp (process ${pid}) stopped while ${agent} worked in its sandbox: what that turn could have changed that runs code later is checked now`);
    for (const each of watched) checkWatched(restored(each), agent, this.logger);
  }

  private unwritable(error: unknown): void {
    if (this.saidUnwritable) return;
    this.saidUnwritable = true;
    this.logger.warn(`the guard's journal cannot be written in ${this.folder} (${(error as Error).message}): if buckley-lsp is killed during a turn, what the agent changed that runs code later is not checked when it next starts`);
  }
}

function serialized(watched: Watched): JournalRecord['watched'][number] {
  return {
    absent: watched.absent,
    there: watched.there,
    folders: watched.folders,
    keyed: watched.keyed.map(({ guard, was }) => ({ file: guard.file, keys: [...guard.keys], existed: was.text !== undefined, values: was.values ? [...was.values] : null })),
  };
}

function restored(record: JournalRecord['watched'][number]): Watched {
  return {
    ...record,
    keyed: record.keyed.map(({ file, keys, existed, values }) => ({
      guard: { file, keys },
      // Its text is not kept: null says so (a file left unreadable is moved aside, not put back whole).
      was: values ? { text: existed ? null : undefined, values: new Map(values) } : { text: null },
    })),
  };
}

function parseOrUndefined(path: string): unknown {
  try {
    return parseJson(readStateFileSync(path) ?? '');
  } catch {
    return undefined;
  }
}

/** The process `pid`, started at `start` (a pid is used again), is running. */
function alive(pid: string, start: string): boolean {
  try {
    process.kill(Number(pid), 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = startTimeOf(Number(pid));
  return now === undefined || start === '0' || String(now) === start;
}

/** When the process started, in clock ticks since boot (Linux: /proc/PID/stat's 22nd field); undefined elsewhere. */
function startTimeOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command's name, field 2, is in parentheses and may hold anything: count after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}
