/**
 * "Approve & trust": remembered agent + tool pairs, in a small JSON file in the user's state
 * directory. Writes are atomic (temporary file + rename) and serialised across processes by a
 * lock file, so concurrent editors neither corrupt the file nor lose each other's entries. A
 * file that cannot be used (corrupt, a directory, a named pipe, unreadable) is reported, naming
 * it and what is wrong, and left alone for the user — never silently reset, never read as
 * "trust everything", and never waited on: reading a pipe does not block.
 */
import { FailedError } from '../../errors.js';
import { basename } from 'node:path';
import { lstat, open, rm } from 'node:fs/promises';
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { kindOf, parseJson, readStateFile, StateFileError, writeFileAtomic } from '../../state.js';

const fileSchema = z.object({
  version: z.literal(1),
  trusted: z.array(z.object({ agent: z.string(), tool: z.string(), since: z.string() })),
});
type TrustFile = z.infer<typeof fileSchema>;

const LOCK_WAIT_MS = 3_000;
const LOCK_STALE_MS = 10_000;

export class TrustStore {
  private entries: TrustFile['trusted'] = [];
  /** What is wrong with the file, when it cannot be read as a trust list. */
  problem: string | undefined;
  /** The same in a few words. */
  problemSummary: string | undefined;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    const read = await this.read();
    this.entries = read.entries;
    this.problem = read.problem?.message;
    this.problemSummary = read.problem?.summary;
    if (this.problem) this.logger.error(this.problem);
  }

  isTrusted(agent: string, tool: string): boolean {
    return this.entries.some((entry) => entry.agent === agent && entry.tool === tool);
  }

  list(): readonly { agent: string; tool: string; since: string }[] {
    return this.entries;
  }

  /** Remembers agent + tool, merging with what other processes wrote meanwhile. */
  /**
   * Remembers agent + tool: trusted in this session at once (before this returns a promise), then
   * saved, merged with what other processes wrote meanwhile. A failure to save is thrown; the
   * trust stays for this session.
   */
  async trust(agent: string, tool: string): Promise<void> {
    const entry = { agent, tool, since: new Date().toISOString() };
    if (!this.isTrusted(agent, tool)) this.entries = [...this.entries, entry];
    await this.withLock(async () => {
      const current = await this.read();
      if (current.problem) {
        this.problem = current.problem.message;
        throw current.problem;
      }
      const entries = current.entries;
      if (!entries.some((known) => known.agent === agent && known.tool === tool)) entries.push(entry);
      await writeFileAtomic(this.path, `${JSON.stringify({ version: 1, trusted: entries } satisfies TrustFile, null, 2)}\n`);
      this.entries = entries;
      this.problem = undefined;
      this.logger.info(`trusted ${agent} + ${tool}: saved in ${this.path}`);
    });
  }

  private async read(): Promise<{ entries: TrustFile['trusted']; problem?: FailedError }> {
    const name = basename(this.path);
    let text: string | undefined;
    try {
      text = await readStateFile(this.path);
    } catch (error) {
      const message = `the trust file: ${(error as Error).message}; nothing is trusted until then`;
      return { entries: [], problem: new FailedError(message, error instanceof StateFileError ? `${name} ${shortProblem(error.message)}` : `cannot read ${name}`) };
    }
    if (text === undefined) return { entries: [] };
    const parsed = fileSchema.safeParse(parseJson(text));
    if (!parsed.success) {
      return {
        entries: [],
        problem: new FailedError(`the trust file ${this.path} is not a trust list (version 1), so nothing is trusted; fix or delete it (it is left as it is)`, `${name} is not a trust list`),
      };
    }
    return { entries: parsed.data.trusted };
  }

  private async withLock<T>(work: () => Promise<T>): Promise<T> {
    const lock = `${this.path}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        const handle = await open(lock, 'wx', 0o600);
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          await writeFileAtomic(`${this.path}.init`, '').catch(() => undefined); // creates the directory
          await rm(`${this.path}.init`, { force: true });
          continue;
        }
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new FailedError(`cannot create the lock file ${lock}: ${(error as Error).message}`, `cannot lock ${basename(this.path)}`);
        const stats = await lstat(lock).catch(() => undefined);
        if (stats && !stats.isFile()) {
          throw new FailedError(`the lock file ${lock} is ${kindOf(stats)}, not a file; remove it`, `${basename(lock)} ${shortProblem(`is ${kindOf(stats)}`)}`);
        }
        const age = stats ? Date.now() - stats.mtimeMs : 0;
        if (age > LOCK_STALE_MS) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) throw new FailedError(`the trust file is locked by another process (${lock}); try again`, `${basename(this.path)} is locked`);
        await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 20));
      }
    }
    try {
      return await work();
    } finally {
      await rm(lock, { force: true });
    }
  }
}

/** "is a named pipe (FIFO), not a file; remove it…" → "is a named pipe": the words for a one-line message. */
function shortProblem(message: string): string {
  const kind = /is (a directory|a named pipe|a socket|a device|a symbolic link|not a regular file)/.exec(message)?.[1];
  if (kind) return `is ${kind}`;
  const size = /is (\d+ MB), over the/.exec(message)?.[1];
  if (size) return `is ${size}, too big for a state file: remove it`;
  if (/permission denied/.test(message)) return 'is not readable';
  return 'cannot be read';
}
