/**
 * buckley-lsp's settings that a project's own files give it — files a repository you cloned can
 * hold: Zed's `.zed/settings.json` (`lsp."buckley-lsp"`, applied once Zed trusts the folder, and
 * as it changes), Emacs' `.dir-locals.el` (`eglot-workspace-configuration` is a safe local
 * variable: applied unasked). The editor sends them among your own, as if you had set them. Those
 * that choose where your code goes or what an agent may do are the user's alone, as VS Code keeps
 * its machine settings out of a workspace's: left out (settings.ts), and said.
 */
import { statSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { readFileBounded } from '../fileAccess.js';
import { isPlainObject } from '../configSources.js';

/** Where the code and the editor's context go, and what an agent may do: never from a project's files. */
export const USER_ONLY_SETTINGS = [
  'coordinator',
  'agent.driver',
  'agent.command',
  'agent.env',
  'agent.passEnv',
  'agent.modes',
  'agent.mcpServers',
  'agent.sandbox',
  'agent.openai',
  'approvals.autoApprove',
  'ask.requireReadOnly',
] as const;

/** Which source the editor sends a project file's settings in, and which of ours it sets. */
export interface ProjectSetting {
  file: string;
  source: 'initializationOptions' | 'workspace/configuration';
  /** The user-only keys it sets (dotted); `*`: it cannot be read key by key, so every user-only key of that source counts as its. */
  keys: string[];
}

/** The server's id in Zed's `lsp` settings (the extension's SERVER_ID). */
const ZED_SERVER_ID = 'buckley-lsp';
/** Settings files are small; a bigger one is not read (and cannot be judged key by key). */
const MAX_SETTINGS_BYTES = 1024 * 1024;

/** A project's settings file as a person names it in one line: `.zed/settings.json`, `.dir-locals.el`. */
export function projectFileName(file: string): string {
  return file.endsWith(`${sep}.zed${sep}settings.json`) ? join('.zed', 'settings.json') : basename(file);
}

/** What the project files of `folders` set of the user-only settings (`home`'s own and those above it are the user's). */
export function projectSettings(folders: readonly string[], home?: string): ProjectSetting[] {
  return folders.flatMap((folder) => [...zedSettings(folder), ...emacsSettings(folder, home)]).filter((setting) => setting.keys.length > 0);
}

function zedSettings(folder: string): ProjectSetting[] {
  const file = join(folder, '.zed', 'settings.json');
  const text = readText(file);
  if (text === undefined) return [];
  // Not read (too big): whatever it gives the server may be its.
  if (text === null) return [{ file, source: 'initializationOptions', keys: ['*'] }, { file, source: 'workspace/configuration', keys: ['*'] }];
  const document: unknown = parseJsonc(text, [], { allowTrailingComma: true, disallowComments: false });
  const lsp = isPlainObject(document) && isPlainObject(document.lsp) ? document.lsp[ZED_SERVER_ID] : undefined;
  if (!isPlainObject(lsp)) return [];
  return [
    { file, source: 'initializationOptions', keys: userOnlyKeysIn(lsp.initialization_options) },
    { file, source: 'workspace/configuration', keys: userOnlyKeysIn(lsp.settings) },
  ];
}

/**
 * Emacs reads the nearest `.dir-locals.el` (and `-2`) up from a file: one of the folder's or its
 * parents' that gives eglot a `:buckley` section — up to the home, whose own is the user's. Lisp is
 * not read key by key here: all of it counts.
 */
function emacsSettings(folder: string, home: string | undefined): ProjectSetting[] {
  const found: ProjectSetting[] = [];
  for (let at = folder; !(home !== undefined && holds(at, home)); at = dirname(at)) {
    for (const name of ['.dir-locals.el', '.dir-locals-2.el']) {
      const file = join(at, name);
      const text = readText(file);
      if (text === null || (text !== undefined && /eglot-workspace-configuration/.test(text) && /:buckley\b/i.test(text))) found.push({ file, source: 'workspace/configuration', keys: ['*'] });
    }
    if (dirname(at) === at) break;
  }
  return found;
}

/** Whether `folder` is `path` or above it. */
function holds(folder: string, path: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

/** The user-only keys set in `values` (the `buckley` section's shape), dotted. */
export function userOnlyKeysIn(values: unknown): string[] {
  return USER_ONLY_SETTINGS.filter((key) => valueAt(values, key) !== undefined);
}

/** `values` without what `setting` sets of the user-only keys: a copy, `values` untouched; and the keys it left out. */
export function withoutProjectKeys(values: unknown, setting: ProjectSetting): { values: unknown; left: string[] } {
  const keys = setting.keys.includes('*') ? userOnlyKeysIn(values) : setting.keys.filter((key) => valueAt(values, key) !== undefined);
  if (keys.length === 0 || !isPlainObject(values)) return { values, left: [] };
  const copy = structuredClone(values);
  for (const key of keys) {
    const path = key.split('.');
    const parent = valueAt(copy, path.slice(0, -1).join('.'));
    if (isPlainObject(parent)) delete parent[path.at(-1)!];
  }
  return { values: copy, left: keys };
}

function valueAt(values: unknown, key: string): unknown {
  if (key === '') return values;
  let at = values;
  for (const part of key.split('.')) {
    if (!isPlainObject(at) || !Object.hasOwn(at, part)) return undefined;
    at = at[part];
  }
  return at;
}

/**
 * A settings file's text; undefined where there is none (or none the editor could read either);
 * null where it is too big to read here, which the editor may read all the same.
 */
function readText(file: string): string | null | undefined {
  try {
    if (statSync(file).size > MAX_SETTINGS_BYTES) return null;
    return readFileBounded(file, MAX_SETTINGS_BYTES).toString('utf8');
  } catch {
    return undefined;
  }
}
