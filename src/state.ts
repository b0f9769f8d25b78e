/**
 * The user's state directory ($XDG_STATE_HOME/buckley-lsp, else ~/.local/state/buckley-lsp)
 * and atomic, user-only file writes: write a temporary file, then rename it over the old one,
 * so a reader never sees half a file and concurrent writers never interleave.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export function stateDirectory(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'buckley-lsp');
}

export async function writeFileAtomic(path: string, content: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { mode: 0o600 });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
