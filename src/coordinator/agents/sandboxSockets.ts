/**
 * The Unix sockets bound on this machine at a path, as the kernel lists them (/proc/net/unix: the
 * network namespace's, which is the user's). A read-only mount does not stop a connect(): a
 * Docker daemon's socket in the home (`~/.docker/desktop/docker.sock`), an SSH or password
 * manager's agent (`~/.1password/agent.sock`), an editor's server or a database's socket in the
 * workspace would take whatever the agent sends them — writing through them what the sandbox
 * forbids it to write, or reading the user's keys. The sandbox hides those it would show as it
 * hides credentials (sandbox.ts); the agent's own sockets, in its private `/tmp` and `/run` and
 * its own network namespace, are not listed here and work as ever.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';

const UNIX_TABLE = '/proc/net/unix';
/** A desktop lists a few thousand sockets (~150 bytes each): far more is not read. */
const TABLE_MAX_BYTES = 16 * 1024 * 1024;

/** The paths of the sockets bound on this machine (none where the table cannot be read: not Linux); sandbox.ts keeps those on disk. */
export function boundSockets(): string[] {
  let text: string;
  try {
    text = readTable(UNIX_TABLE);
  } catch {
    return [];
  }
  const paths = new Set<string>();
  // "Num RefCount Protocol Flags Type St Inode Path": the path is what follows the seventh field;
  // an abstract socket's starts with "@", an unbound one has none.
  for (const line of text.split('\n').slice(1)) {
    const path = /^\s*(?:\S+\s+){7}(.+)$/.exec(line)?.[1];
    if (path && isAbsolute(path)) paths.add(path);
  }
  return [...paths].sort();
}

/** A /proc table (its size is not known before it is read), read to its end or to the bound. */
function readTable(path: string): string {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(256 * 1024);
      const read = readSync(fd, chunk, 0, chunk.length, null);
      if (read === 0 || total >= TABLE_MAX_BYTES) break;
      chunks.push(chunk.subarray(0, read));
      total += read;
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
