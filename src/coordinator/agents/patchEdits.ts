/**
 * The changes a tool call makes, read from a patch in its input where the agent shows no ACP
 * `diff`: Cline's `apply_patch` (the apply_patch grammar Codex's tool also takes) and unified diffs
 * (`diff --git`, `--- a/x`). Each hunk becomes a snippet replaced in its file — what the review
 * turns into the change to the whole file, as it does with Claude Code's Edit.
 */
import { parsePatch } from 'diff';
import { isAbsolute, relative, resolve } from 'node:path';
import type { FileEdit } from './driver.js';

/** Patches bigger than this are not read for their review (the risk rules still read their paths). */
const MAX_PATCH_CHARS = 4 * 1024 * 1024;

/** The edits of every patch among the input's strings; paths resolved against `cwd`. */
export function patchEdits(input: unknown, cwd: string): FileEdit[] {
  return patchesIn(input, 0).flatMap((patch) => (patch.startsWith('*** Begin Patch') ? applyPatchEdits(patch, cwd) : unifiedEdits(patch, cwd)));
}

function patchesIn(value: unknown, depth: number): string[] {
  if (depth > 4) return [];
  if (typeof value === 'string') {
    const text = value.replace(/^\s+/, '');
    return text.length <= MAX_PATCH_CHARS && (/^\*\*\* Begin Patch/.test(text) || /^(diff --git |--- \S.*\n\+\+\+ \S)/.test(text)) ? [text] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item) => patchesIn(item, depth + 1));
  if (value && typeof value === 'object') return Object.values(value).flatMap((item) => patchesIn(item, depth + 1));
  return [];
}

/** `*** Add File: x` (its `+` lines), `*** Update File: x` (each `@@` hunk: context and `-` lines become context and `+` lines). */
function applyPatchEdits(patch: string, cwd: string): FileEdit[] {
  const edits: FileEdit[] = [];
  let file: { path: string; add: boolean; old: string[]; new: string[] } | undefined;
  const flush = () => {
    if (file && (file.add || file.old.length || file.new.length)) edits.push(file.add ? { path: file.path, newText: `${file.new.join('\n')}\n` } : { path: file.path, oldText: file.old.join('\n'), newText: file.new.join('\n') });
    if (file) file = { ...file, old: [], new: [] };
  };
  for (const line of patch.split('\n')) {
    const header = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line);
    if (header || /^\*\*\* (End Patch|Begin Patch)/.test(line)) {
      flush();
      file = header && header[1] !== 'Delete' ? { path: placed(header[2]!.trim(), cwd), add: header[1] === 'Add', old: [], new: [] } : undefined;
      continue;
    }
    if (!file || /^\*\*\* (Move to|End of File)/.test(line)) continue;
    if (line.startsWith('@@')) {
      if (!file.add) flush();
      continue;
    }
    const sign = line[0];
    const text = line.slice(1);
    if (sign === '+') file.new.push(text);
    else if (!file.add && sign === '-') file.old.push(text);
    else if (!file.add && (sign === ' ' || line === '')) {
      file.old.push(text);
      file.new.push(text);
    }
  }
  flush();
  return edits;
}

/** A unified diff's hunks, each its old lines replaced by its new ones. */
function unifiedEdits(patch: string, cwd: string): FileEdit[] {
  let parsed;
  try {
    parsed = parsePatch(patch);
  } catch {
    return [];
  }
  return parsed.flatMap((file) => {
    const name = [file.newFileName, file.oldFileName].find((candidate) => candidate && candidate !== '/dev/null');
    if (!name || file.newFileName === '/dev/null') return [];
    const path = placed(name.replace(/^[ab]\//, ''), cwd);
    return file.hunks.map((hunk) => {
      const lines = hunk.lines.filter((line) => !line.startsWith('\\'));
      const oldText = lines.filter((line) => line[0] !== '+').map((line) => line.slice(1)).join('\n');
      const newText = lines.filter((line) => line[0] !== '-').map((line) => line.slice(1)).join('\n');
      return file.oldFileName === '/dev/null' ? { path, newText: `${newText}\n` } : { path, oldText, newText };
    });
  });
}

/**
 * A title that shows the call's input as JSON text (Cline's `apply_patch: {"input":"*** Begin
 * Patch…`), said instead by the files its patch changes; any other title as it is.
 */
export function patchTitle(title: string, edits: readonly FileEdit[], cwd: string): string {
  const json = /^([\w.-]+): \s*[{[]/.exec(title);
  if (!json || !edits.length) return title;
  const files = [...new Set(edits.map((edit) => relative(cwd, edit.path).startsWith('..') ? edit.path : relative(cwd, edit.path)))];
  return `${json[1]}: ${files.join(', ')}`;
}

function placed(path: string, cwd: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}
