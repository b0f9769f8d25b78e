/**
 * The credential files in a workspace (`.env`, keys, certificates: what the risk rules call
 * credentials by name), found before every turn so the agent's sandbox can hide them — also the
 * ones created since the last turn. Directories whose modification time has not changed since the
 * last look are not read again, so a look at an unchanged workspace is one `stat` per directory.
 * Bounded: at most `maxDirectories` directories are looked at; dependency folders and version
 * control are skipped (SKIPPED). The calls are synchronous: a thousand `stat`s take a millisecond
 * or two that way, and a hundred awaited one by one.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { credentialByName } from '../risk/paths.js';

/**
 * Version control and the folders other people's packages are installed in — npm's, Python's
 * (a virtualenv's `site-packages`), Go's, PHP's and Ruby's `vendor`, CocoaPods', Gradle's, and, in
 * a home opened as the workspace, the caches and toolchains (`.cache`, `.npm`, `.cargo`, `.pyenv`,
 * `.rustup`, `.nvm`): their test keys and CA bundles (certifi's `cacert.pem`) are not the user's
 * secrets, hiding them breaks what the agent runs (Python's TLS without its CA bundle), and
 * walking them each turn costs more than the rest of the workspace. (The home's own credentials,
 * `~/.cargo/credentials` among them, are hidden by place: risk/paths.ts.)
 */
const SKIPPED = new Set([
  ...['.git', '.hg', '.svn', '.jj'],
  ...['node_modules', 'bower_components', 'site-packages', 'dist-packages', '__pypackages__', '.tox', '.nox', 'vendor', 'Pods', '.gradle'],
  ...['.cache', '.npm', '.pnpm-store', '.cargo', '.rustup', '.pyenv', '.nvm'],
]);

interface Seen {
  mtimeMs: number;
  credentials: string[];
  subdirectories: string[];
}

export interface CredentialFiles {
  paths: string[];
  /** False when the bound was reached: files in the directories not looked at are not known. */
  complete: boolean;
}

export class CredentialScan {
  private readonly seen = new Map<string, Seen>();

  constructor(
    readonly root: string,
    private readonly maxDirectories = 20_000,
  ) {}

  find(): CredentialFiles {
    const paths: string[] = [];
    const queue = [this.root];
    const visited = new Set<string>();
    while (queue.length > 0 && visited.size < this.maxDirectories) {
      const directory = queue.shift()!;
      visited.add(directory);
      const seen = this.look(directory);
      if (!seen) continue;
      paths.push(...seen.credentials);
      queue.push(...seen.subdirectories);
    }
    // Forget directories that are gone, so the cache stays the size of the workspace.
    for (const directory of this.seen.keys()) if (!visited.has(directory)) this.seen.delete(directory);
    return { paths: paths.sort(), complete: queue.length === 0 };
  }

  private look(directory: string): Seen | undefined {
    let mtimeMs: number;
    try {
      mtimeMs = statSync(directory).mtimeMs;
    } catch {
      return undefined;
    }
    const known = this.seen.get(directory);
    if (known && known.mtimeMs === mtimeMs) return known;
    let entries: Dirent[];
    try {
      entries = readdirSync(directory, { withFileTypes: true });
    } catch {
      return undefined;
    }
    const seen: Seen = { mtimeMs, credentials: [], subdirectories: [] };
    for (const entry of entries) {
      const path = join(directory, entry.name);
      if (credentialByName(entry.name)) seen.credentials.push(path);
      else if (entry.isDirectory() && !SKIPPED.has(entry.name)) seen.subdirectories.push(path);
    }
    this.seen.set(directory, seen);
    return seen;
  }
}
