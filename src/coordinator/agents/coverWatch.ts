/**
 * A file the sandbox covers alone — hidden (a credential, a socket), or read-only where its folder
 * is writable (`.git/config` in a task, an agent's guarded settings) — that is replaced on the host
 * while a turn runs loses its cover in that sandbox at once: Linux takes a mount away with the file
 * it was on (an editor saving `.env` by renaming a new file over it, git rewriting its config).
 * The next turn gets a new sandbox (sandbox.ts `sandboxCover`); the turn under way is stopped as soon
 * as it happens, in words — it could read or write what it must not until it ended.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Logger } from '../../logger.js';
import { fileId, type CoveredFile } from './sandbox.js';

/** Folders watched in one turn at most: each is an inotify watch of the user's (a few hundred by default per process on some systems). */
const MAX_FOLDERS = 64;
/** That more are not watched is said once. */
let saidTooMany = false;

/** Watches the folders of `files` through a turn: `replaced` is called once, with the first found replaced. Returns what stops watching. */
export function watchCovers(files: readonly CoveredFile[], replaced: (file: CoveredFile) => void, logger: Logger): () => void {
  const byFolder = new Map<string, CoveredFile[]>();
  for (const file of files) if (file.covers !== 'state') byFolder.set(dirname(file.path), [...(byFolder.get(dirname(file.path)) ?? []), file]);
  if (byFolder.size > MAX_FOLDERS && !saidTooMany) {
    saidTooMany = true;
    logger.info(`${byFolder.size} folders hold files the sandbox covers alone; ${MAX_FOLDERS} are watched during a turn for a file replaced (each is looked at again before the next turn)`);
  }
  const watchers: FSWatcher[] = [];
  let done = false;
  const look = (inFolder: CoveredFile[], name: string | null) => {
    if (done) return;
    for (const file of inFolder) {
      if (name !== null && name !== basename(file.path)) continue;
      const now = fileId(file.path);
      // Gone is not shown: a file made again in its place is, and says so then.
      if (now === undefined || now === file.id) continue;
      done = true;
      replaced(file);
      return;
    }
  };
  for (const [folder, inFolder] of [...byFolder].slice(0, MAX_FOLDERS)) {
    try {
      const watcher = watch(folder, { persistent: false }, (_event, name) => look(inFolder, typeof name === 'string' ? name : null));
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    } catch {
      // A folder gone, or no watch left: the next turn's new sandbox still covers it.
    }
  }
  return () => {
    done = true;
    for (const watcher of watchers) watcher.close();
  };
}
