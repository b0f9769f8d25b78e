/**
 * "Approve & trust": remembered agent + tool pairs, in a small JSON file in the user's state
 * directory. Writes are atomic (temporary file + rename) and serialised across processes by a
 * lock file, so concurrent editors neither corrupt the file nor lose each other's entries. A
 * corrupt file is reported and left alone for the user to inspect — never silently reset, and
 * never read as "trust everything".
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import * as z from '../schema.js';
import type { Logger } from '../logger.js';
import { writeFileAtomic } from '../state.js';

const fileSchema = z.object({
  version: z.literal(1),
  trusted: z.array(z.object({ agent: z.string(), tool: z.string(), since: z.string() })),
});
type TrustFile = z.infer<typeof fileSchema>;

const LOCK_WAIT_MS = 3_000;
const LOCK_STALE_MS = 10_000;

export class TrustStoreError extends Error {
  override readonly name = 'TrustStoreError';
}

export class TrustStore {
  private entries: TrustFile['trusted'] = [];
  /** What is wrong with the file, when it cannot be read as a trust list. */
  problem: string | undefined;

  constructor(
    readonly path: string,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    const read = await this.read();
    this.entries = read.entries;
    this.problem = read.problem;
    if (this.problem) this.logger.error(this.problem);
  }

  isTrusted(agent: string, tool: string): boolean {
    return this.entries.some((entry) => entry.agent === agent && entry.tool === tool);
  }

  list(): readonly { agent: string; tool: string; since: string }[] {
    return this.entries;
  }

  /** Remembers agent + tool, merging with what other processes wrote meanwhile. */
  async trust(agent: string, tool: string): Promise<void> {
    await this.withLock(async () => {
      const current = await this.read();
      if (current.problem) {
        this.problem = current.problem;
        throw new TrustStoreError(current.problem);
      }
      const entries = current.entries;
      if (!entries.some((entry) => entry.agent === agent && entry.tool === tool)) {
        entries.push({ agent, tool, since: new Date().toISOString() });
      }
      await writeFileAtomic(this.path, `${JSON.stringify({ version: 1, trusted: entries } satisfies TrustFile, null, 2)}\n`);
      this.entries = entries;
      this.problem = undefined;
    });
  }

  private async read(): Promise<{ entries: TrustFile['trusted']; problem?: string }> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [] };
      return { entries: [], problem: `cannot read the trust file ${this.path}: ${(error as Error).message}` };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) {
      return {
        entries: [],
        problem: `the trust file ${this.path} is corrupt, so nothing is trusted; fix or delete it (it is left as it is)`,
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
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age > LOCK_STALE_MS) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) throw new TrustStoreError(`the trust file is locked by another process (${lock}); try again`);
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
