/**
 * One spelling per document URI. Editors and tools spell the same file differently —
 * `file:///a%3Ab.ts`, `file:///a%3ab.ts`, `file:///a:b.ts` — and a document the server knows under
 * one spelling must be found under the others. Every URI that comes in is made canonical once,
 * at the boundary; inside the server URIs are compared as strings.
 */
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The local path a file URI names; undefined for another scheme, or a file URI of another host. */
export function pathOfUri(uri: string | undefined): string | undefined {
  if (!uri || !/^file:/i.test(uri)) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/** A URI as a person reads it: the path of a local file, else the URI as it is. */
export function uriToPath(uri: string): string {
  return pathOfUri(uri) ?? uri;
}

/**
 * A file as a person reads it: relative to the workspace folder it is in (the nearest, where
 * folders nest), else its absolute path; a URI of another scheme as it is. The file and the
 * folders may be paths or file URIs.
 */
export function shownName(file: string, folders: readonly (string | undefined)[]): string {
  const path = pathOfUri(file) ?? (isAbsolute(file) ? file : undefined);
  if (path === undefined) return file;
  const within = folders
    .map((folder) => (folder ? (pathOfUri(folder) ?? folder) : undefined))
    .map((root) => (root ? relative(root, path) : ''))
    .filter((rel) => rel !== '' && rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel))
    .sort((a, b) => a.length - b.length);
  return within[0] ?? path;
}

const cache = new Map<string, string>();
const CACHE_SIZE = 10_000;
/** Characters RFC 3986 never needs escaped: their escapes are spelled as the characters. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

export function canonicalUri(uri: string): string {
  const known = cache.get(uri);
  if (known !== undefined) return known;
  const canonical = canonicalize(uri);
  if (cache.size >= CACHE_SIZE) cache.clear();
  cache.set(uri, canonical);
  return canonical;
}

function canonicalize(uri: string): string {
  if (/^file:/i.test(uri)) {
    try {
      // The path a file URI names, spelled back the one way Node spells it.
      return pathToFileURL(fileURLToPath(uri)).href;
    } catch {
      // not a local file URI (a host, an encoded slash): the generic rules below
    }
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(uri)?.[0] ?? '';
  return (
    scheme.toLowerCase() +
    uri.slice(scheme.length).replace(/%([0-9a-fA-F]{2})/g, (_escape, hex: string) => {
      const char = String.fromCharCode(Number.parseInt(hex, 16));
      return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
    })
  );
}

const LANGUAGES: Record<string, string> = {
  '.ts': 'typescript', '.tsx': 'typescriptreact', '.js': 'javascript', '.jsx': 'javascriptreact', '.mjs': 'javascript', '.cjs': 'javascript',
  '.py': 'python', '.rs': 'rust', '.go': 'go', '.java': 'java', '.kt': 'kotlin', '.c': 'c', '.h': 'c', '.cc': 'cpp', '.cpp': 'cpp', '.hpp': 'cpp',
  '.rb': 'ruby', '.lua': 'lua', '.el': 'emacs-lisp', '.sh': 'shellscript', '.md': 'markdown', '.json': 'json', '.toml': 'toml', '.yaml': 'yaml', '.yml': 'yaml',
};

/** The LSP language id of a file by its extension, for a file no editor gave one for; '' when unknown. */
export function languageOf(file: string): string {
  const dot = file.lastIndexOf('.');
  return dot > file.lastIndexOf('/') ? (LANGUAGES[file.slice(dot).toLowerCase()] ?? '') : '';
}
