/**
 * What in an agent's state runs code later, outside any sandbox, when the user next starts the
 * agent in a terminal (known.ts `runsCode`, `runsCodeIn`): the sandbox binds what exists read-only
 * (sandbox.ts), but a bind cannot keep a file from being made in a writable folder, nor guard part
 * of a file the agent must write (Claude Code's `~/.claude.json`, its state and its MCP servers in
 * one). So around each turn: a guarded place the turn made is moved aside, and guarded keys of a
 * state file the turn changed are put back — each said in the log, with the setting that allows it.
 */
import { copyFileSync, existsSync, lstatSync, opendirSync, readdirSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../../logger.js';
import { applyEdits, modify as modifyJsonc, parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { readFileBounded } from '../../fileAccess.js';
import { writeFileAtomicSync } from '../../state.js';
import { runsLater } from '../../risk/paths.js';

/** Keys of a JSON state file that run code (`mcpServers`, `projects.*.mcpServers`: `*` is any key of an object). */
export interface GuardedKeys {
  file: string;
  keys: readonly string[];
}

/** What a turn is watched for: more may be added while it runs (an agent recognised by its agentInfo, started again); `check` once it is over. */
export interface GuardWatch {
  watch(places: readonly string[], keyed: readonly GuardedKeys[]): void;
  /** Puts back what the turn changed of what it guards — but what `approved` says the user let the turn write through the coordinator. */
  check(approved?: (path: string) => boolean): void;
}

/**
 * What a turn found of what it guards, enough to check it after the turn: the places that were
 * not there, the folders in each guarded `folder/*`, and each keyed file's guarded keys.
 */
export interface Watched {
  absent: string[];
  there: Presence[];
  folders: string[];
  keyed: { guard: GuardedKeys; was: KeyedState }[];
}

/**
 * A guarded place as it was: which file it was (a bind keeps that one from being written, not a
 * link to it from being replaced — a settings file linked from a dotfiles folder, as home-manager
 * and stow make them), and where it linked to.
 */
export interface Presence {
  path: string;
  id: string;
  link?: string;
}

/** Where what a turn watches is kept while it runs (guardJournal.ts): for a process that dies before its check. */
export interface WatchRecord {
  save(agent: string, watched: readonly Watched[]): void;
  remove(): void;
}

/** `folder/*` → the folders in it now; a path → itself, where it is there. */
export function guardedNow(places: readonly string[]): string[] {
  return places.flatMap((place) => (place.endsWith('/*') ? foldersIn(place.slice(0, -2)) : present(place) ? [place] : []));
}

/** Watches `places` (paths, `folder/*`) and `keyed` (keys of state files) through a turn, as `agent()` names the agent then. */
export function watchGuarded(places: readonly string[], keyed: readonly GuardedKeys[], agent: () => string, logger: Logger, record?: WatchRecord): GuardWatch {
  const watched: Watched[] = [];
  const watch = (morePlaces: readonly string[], moreKeyed: readonly GuardedKeys[]) => {
    const there = guardedNow(morePlaces).flatMap((path) => presenceOf(path) ?? []);
    const paths = new Set(there.map((place) => place.path));
    // A link to nothing (yet): what it links to, made in the turn, is what the agent would run.
    const dangling = there.flatMap((place) => (place.link !== undefined && !existsSync(place.path) ? [resolve(dirname(place.path), place.link)] : []));
    watched.push({
      absent: [...morePlaces.filter((place) => !place.endsWith('/*') && !paths.has(place)), ...dangling],
      there,
      folders: morePlaces.filter((place) => place.endsWith('/*')),
      keyed: moreKeyed.map((guard) => ({ guard, was: stateOf(guard) })),
    });
    record?.save(agent(), watched);
  };
  watch(places, keyed);
  return {
    watch,
    check: (approved) => {
      try {
        for (const each of watched.splice(0)) checkWatched(each, agent(), logger, approved);
      } finally {
        record?.remove();
      }
    },
  };
}

/** Moves aside what the turn made of the guarded places, and puts back the guarded keys it changed. */
export function checkWatched(watched: Watched, agent: string, logger: Logger, approved: (path: string) => boolean = () => false): void {
  const there = new Set(watched.there.map((place) => place.path));
  const made = [...watched.absent.filter(present), ...guardedNow(watched.folders).filter((path) => !there.has(path))];
  for (const path of made) if (!allApproved(path, approved)) moveAside(path, agent, logger);
  // A link only: a file or folder itself is bound read-only, and the agent cannot replace it (one
  // replaced on the host is the user's doing — and stops the turn: coverWatch.ts).
  for (const was of watched.there) if (was.link !== undefined && presenceOf(was.path)?.id !== was.id) putBackPlace(was, was.link, agent, logger);
  for (const { guard, was } of watched.keyed) putBack(guard, was, agent, logger);
}

function presenceOf(path: string): Presence | undefined {
  try {
    const stats = lstatSync(path);
    return { path, id: `${stats.dev}:${stats.ino}`, ...(stats.isSymbolicLink() ? { link: readlinkSync(path) } : {}) };
  } catch {
    return undefined;
  }
}

/** A guarded link the turn replaced or removed (what a bind cannot stop): what it left moved aside, the link put back. */
function putBackPlace(was: Presence, link: string, agent: string, logger: Logger): void {
  const replaced = present(was.path);
  const what = `${was.path} was ${replaced ? 'replaced' : 'removed'} while ${agent} worked in its sandbox (it was a link to ${link})`;
  const aside = `${was.path}.buckley-moved-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  try {
    if (replaced) renameSync(was.path, aside);
    symlinkSync(link, was.path);
    const left = replaced ? `what the turn left is at ${aside}, ` : '';
    logger.warn(`${what}; ${whoRuns(was.path, agent)}: ${left}the link is put back. If you changed it, do it again; to let ${agent} change it, set buckley.agent.sandbox.writable: ["${was.path}"]`);
  } catch (error) {
    logger.warn(`${what}, and it could not be put back (${(error as Error).message}): look at it before you start ${agent} again`);
  }
}

function foldersIn(folder: string): string[] {
  try {
    return readdirSync(folder, { withFileTypes: true })
      // A link in it is a folder as the agent reads it (an extension linked to one made elsewhere).
      .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && !entry.name.includes('.buckley-moved-'))
      .map((entry) => join(folder, entry.name));
  } catch {
    return [];
  }
}

/** Entries of a made place looked at, to tell who runs it and whether the user approved all its files. */
const MADE_FILES = 1_000;

/**
 * A place the turn made whose every file the user approved (written through the coordinator: a
 * project's `.vscode/settings.json` the task was asked to add): the user's, and not moved aside.
 */
function allApproved(path: string, approved: (path: string) => boolean): boolean {
  const files = filesUnder(path);
  return files !== undefined && files.length > 0 && files.every(approved);
}

/** The files at `path` (itself, or those under it); undefined past MADE_FILES entries (a folder the agent filled is not walked whole), or where it cannot be read. */
function filesUnder(path: string): string[] | undefined {
  const files: string[] = [];
  const folders = [path];
  let seen = 0;
  try {
    if (!lstatSync(path).isDirectory()) return [path];
    for (let folder = folders.pop(); folder !== undefined; folder = folders.pop()) {
      const listing = opendirSync(folder);
      try {
        for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
          if (++seen > MADE_FILES) return undefined;
          (entry.isDirectory() ? folders : files).push(join(folder, entry.name));
        }
      } finally {
        listing.closeSync();
      }
    }
    return files;
  } catch {
    return undefined;
  }
}

/** Who runs what the turn left there: in risk/paths.ts's words where it knows the place (a project's Zed settings, a shell's startup file), else the agent. */
function whoRuns(path: string, agent: string): string {
  const known = runsLater(path) ?? filesUnder(path)?.map(runsLater).find((words) => words !== undefined);
  return known ? `${known} — outside any sandbox` : `what it names would run outside any sandbox when you next start ${agent}`;
}

function moveAside(path: string, agent: string, logger: Logger): void {
  const aside = `${path}.buckley-moved-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const what = `${path} was made while ${agent} worked in its sandbox; ${whoRuns(path, agent)}`;
  try {
    renameSync(path, aside);
    logger.warn(`${what}: moved aside to ${aside}. If you made it, move it back; to let ${agent} make it, set buckley.agent.sandbox.writable: ["${path}"]`);
  } catch (error) {
    logger.warn(`${what}, and it could not be moved aside (${(error as Error).message}): look at it before you start ${agent} again`);
  }
}

/** Bigger than any state file an agent keeps: one the turn made bigger is not left unchecked for its size. */
const GUARDED_FILE_BYTES = 64 * 1024 * 1024;

/**
 * A keyed file as a turn found or left it: its text (undefined: no file; null: something there
 * that is not a file read whole, or — kept in the journal, which holds no text — not known), and
 * its guarded keys' values by their path (as JSON), where it reads as an object.
 */
export interface KeyedState {
  text: string | null | undefined;
  values?: Map<string, string>;
}

/**
 * The last state read of each keyed file, by the version its stat gives: concurrent turns of agents
 * sharing a state file (~/.claude.json, megabytes) hold one copy and parse it once.
 */
const lastStates = new Map<string, { version: string; state: KeyedState }>();
const LAST_STATES = 32;

function stateOf(guard: GuardedKeys): KeyedState {
  let version: string;
  try {
    if (!present(guard.file)) return { text: undefined, values: new Map() };
    const stats = statSync(guard.file);
    version = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
  } catch {
    return { text: null };
  }
  const cacheKey = `${guard.file}\0${guard.keys.join('\0')}`;
  const known = lastStates.get(cacheKey);
  if (known?.version === version) return known.state;
  const state = readState(guard);
  lastStates.delete(cacheKey);
  lastStates.set(cacheKey, { version, state });
  if (lastStates.size > LAST_STATES) lastStates.delete(lastStates.keys().next().value!);
  return state;
}

/** What stands at a guarded file's keys now, as JSON texts: the user's (a turn's change to them is put back). */
export function guardedValues(guard: GuardedKeys): string[] {
  return [...(stateOf(guard).values?.values() ?? [])];
}

function readState(guard: GuardedKeys): KeyedState {
  let text: string;
  try {
    text = readFileBounded(guard.file, GUARDED_FILE_BYTES).toString('utf8');
  } catch {
    return { text: null };
  }
  const document = parseObject(text);
  return { text, ...(document ? { values: valuesIn(document, guard.keys) } : {}) };
}

/**
 * JSON as the agents read their settings: with comments and trailing commas (Gemini CLI, Qwen
 * Code, opencode) — a comment must not hide a key from the guard that the agent then runs.
 */
function parseObject(text: string): Record<string, unknown> | undefined {
  const errors: ParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  return errors.length === 0 && isObject(value) ? value : undefined;
}

function valuesIn(document: Record<string, unknown>, keys: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (const pattern of keys) {
    for (const [path, value] of matches(document, pattern.split('.'), [])) if (!isEmpty(value)) values.set(JSON.stringify(path), JSON.stringify(value));
  }
  return values;
}

/** Nothing to run: as good as not there (Claude Code writes a new project's `mcpServers: {}`, `allowedTools: []`, `hasTrustDialogAccepted: false`). */
function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === false || (Array.isArray(value) && value.length === 0) || (isObject(value) && Object.keys(value).length === 0);
}

function putBack(guard: GuardedKeys, was: KeyedState, agent: string, logger: Logger): void {
  // What the turn found unreadable, nobody could run from: there is nothing known to keep.
  if (!was.values) return;
  const now = stateOf(guard);
  // Removed: nothing in it runs.
  if (now.text === undefined) return;
  if (!now.values) {
    // A text not known (null, from the journal) is not known to be the same.
    if (now.text !== was.text || was.text === null) restoreWhole(guard, was.text, agent, logger);
    return;
  }
  const before = was.values;
  const after = now.values;
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter((key) => before.get(key) !== after.get(key));
  if (changed.length === 0) return;
  const names = changed.flatMap((key) => namesOf(JSON.parse(key) as string[], before.get(key), after.get(key)));
  try {
    writeInPlace(guard.file, withKeysPutBack(now.text as string, guard.keys, changed, before, after));
    logger.warn(`${names.join(', ')} in ${guard.file} changed while ${agent} worked in its sandbox; what it names would run outside any sandbox when you next start ${agent}: put back as it was. If you changed it, do it again; to let ${agent} change it, set buckley.agent.sandbox.writable: ["${guard.file}"]`);
  } catch (error) {
    logger.warn(`${names.join(', ')} in ${guard.file} changed while ${agent} worked in its sandbox, and could not be put back (${(error as Error).message}): look at it before you start ${agent} again`);
  }
}

/**
 * The file's text with the changed keys as they were: edited in place, its comments and layout
 * kept — unless the edit does not give back what was there (a key given twice: the agent reads
 * the last), then written anew from the object.
 */
function withKeysPutBack(text: string, keys: readonly string[], changed: string[], before: Map<string, string>, after: Map<string, string>): string {
  let edited = text;
  for (const key of changed) {
    const value = before.get(key) ?? emptyLike(after.get(key));
    edited = applyEdits(edited, modifyJsonc(edited, JSON.parse(key) as string[], value === undefined ? undefined : JSON.parse(value), { formattingOptions: { insertSpaces: true, tabSize: 2 } }));
  }
  const check = parseObject(edited);
  if (check && sameValues(valuesIn(check, keys), before)) return edited;
  const document = parseObject(text)!;
  for (const key of changed) setAt(document, JSON.parse(key) as string[], before.get(key) ?? emptyLike(after.get(key)));
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * The file written where it is, not replaced: a running agent's sandbox binds its state file, and
 * a file renamed over a bind's place takes the bind away there — the agent could not write its
 * own state again (EROFS) for as long as it runs.
 */
function writeInPlace(file: string, text: string): void {
  writeFileSync(file, text);
}

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

function sameValues(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([key, value]) => b.get(key) === value);
}

/**
 * A keyed file the turn left unreadable — not JSON any more, too big, not a file — cannot be
 * checked key by key: what the turn left is moved aside and the file put back whole, where its
 * text is known (`null`: a turn of a process that was killed; the journal keeps no text).
 */
function restoreWhole(guard: GuardedKeys, text: string | null | undefined, agent: string, logger: Logger): void {
  const aside = `${guard.file}.buckley-moved-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const what = `${guard.file} changed while ${agent} worked in its sandbox into what buckley-lsp cannot read to check what in it would run outside any sandbox when you next start ${agent}`;
  try {
    if (isFile(guard.file) && typeof text === 'string') {
      copyFileSync(guard.file, aside);
      writeInPlace(guard.file, text);
    } else {
      if (present(guard.file)) renameSync(guard.file, aside);
      if (typeof text === 'string') writeFileAtomicSync(guard.file, text);
    }
    const restored = text === null ? `moved aside to ${aside} (buckley-lsp stopped during that turn, and kept no copy of the file as it was)` : `put back as it was; what the turn left is at ${aside}`;
    logger.warn(`${what}: ${restored}. To let ${agent} change it, set buckley.agent.sandbox.writable: ["${guard.file}"]`);
  } catch (error) {
    logger.warn(`${what}, and it could not be put back (${(error as Error).message}): look at it before you start ${agent} again`);
  }
}

/** `mcpServers.evil`: the entries of a guarded object that changed, by name (the key itself where it is no object). */
function namesOf(path: string[], before: string | undefined, after: string | undefined): string[] {
  const [was, is] = [before === undefined ? {} : JSON.parse(before), after === undefined ? {} : JSON.parse(after)] as unknown[];
  if (!isObject(was) || !isObject(is)) return [path.join('.')];
  const entries = [...new Set([...Object.keys(was), ...Object.keys(is)])].filter((key) => JSON.stringify(was[key]) !== JSON.stringify(is[key]));
  return entries.map((key) => [...path, key].join('.'));
}

/** Every value at `pattern` in `value` (`*`: each key), with its path. */
function* matches(value: unknown, pattern: string[], path: string[]): Generator<[string[], unknown]> {
  if (pattern.length === 0) {
    yield [path, value];
    return;
  }
  if (!isObject(value)) return;
  const [head, ...rest] = pattern as [string, ...string[]];
  const keys = head === '*' ? Object.keys(value) : Object.hasOwn(value, head) ? [head] : [];
  for (const key of keys) yield* matches(value[key], rest, [...path, key]);
}

/** What was not there, in the form the file gives it now (`{}` for an object, `[]` for a list, `false` for a flag), or undefined: removed. */
function emptyLike(now: string | undefined): string | undefined {
  const value = now === undefined ? undefined : (JSON.parse(now) as unknown);
  return Array.isArray(value) ? '[]' : isObject(value) ? '{}' : typeof value === 'boolean' ? 'false' : undefined;
}

/** Sets `path` in `document` to the JSON `value`, or deletes it where `value` is undefined (it was not there). */
function setAt(document: Record<string, unknown>, path: string[], value: string | undefined): void {
  let target: Record<string, unknown> = document;
  for (const key of path.slice(0, -1)) {
    if (!isObject(target[key])) {
      if (value === undefined) return;
      target[key] = {};
    }
    target = target[key] as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (value === undefined) delete target[last];
  else target[last] = JSON.parse(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** There, even as a link to nothing. */
function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
