/**
 * What is wrong with a setting, in words a user acts on: the key first, then what it should be —
 * "did you mean buckley.agent.command?" for a misspelt key, "expected a number" for a wrong type
 * (not zod's "Invalid input"), the allowed values of an enum. Each problem has a full message for
 * the log and `doctor`, and a short one for a one-line editor message.
 */
import type * as z from './schema.js';

export interface ConfigProblem {
  source: string;
  /** The full key, e.g. `buckley.context.maxBytes`. */
  key: string;
  /** What is wrong and what it should be. */
  message: string;
  /** The same in a few words, key first: "buckley.agent.comand: did you mean command?". */
  summary: string;
  /** Where the bad value is in the source's values (the key without `buckley.`). */
  path: PropertyKey[];
}

export interface SettingKey {
  /** Without `buckley.`: `context.maxBytes`. */
  key: string;
  type: string;
  /** The allowed values of an enum. */
  values?: string[];
}

type Def = { type: string; innerType?: { _zod: { def: Def } }; in?: { _zod: { def: Def } }; shape?: Record<string, { _zod: { def: Def } }>; entries?: Record<string, string>; options?: { _zod: { def: Def } }[] };

/** Every setting of a schema, by walking its definition (defaults, optionals and pipes are looked through). */
export function settingKeys(schema: z.core.$ZodType): SettingKey[] {
  const keys: SettingKey[] = [];
  const walk = (def: Def, prefix: string) => {
    while (def.innerType || (def.type === 'pipe' && def.in)) def = (def.innerType ?? def.in)!._zod.def;
    if (def.type === 'object' && def.shape) {
      for (const [name, child] of Object.entries(def.shape)) walk(child._zod.def, prefix ? `${prefix}.${name}` : name);
    } else {
      keys.push({ key: prefix, type: def.type, ...(def.entries ? { values: Object.values(def.entries) } : {}) });
    }
  };
  walk(schema._zod.def as unknown as Def, '');
  return keys;
}

/** The known key (or section) a misspelt one most likely meant, among those beside it. */
export function didYouMean(path: string[], known: readonly SettingKey[]): string | undefined {
  const parent = path.slice(0, -1).join('.');
  const wrong = normal(path.at(-1) ?? '');
  // The names one level below the parent: settings, or sections (`agent.openai`).
  const names = new Set<string>();
  for (const { key } of known) {
    if (parent && !key.startsWith(`${parent}.`)) continue;
    names.add((parent ? key.slice(parent.length + 1) : key).split('.')[0]!);
  }
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(normal(name), wrong);
    if (distance <= Math.max(1, Math.floor(wrong.length / 4)) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best && (parent ? `${parent}.${best.name}` : best.name);
}

/** Lower case without `_` and `-`: `call_timeout_ms` and `callTimeoutMs` are near each other. */
function normal(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

/** Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: `agnet` is one from `agent`. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object with settings',
  null: 'null',
  undefined: 'nothing',
};

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : 'a number';
  return KINDS[typeof value] ?? typeof value;
}

function valueAt(values: unknown, path: PropertyKey[]): unknown {
  let value = values;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** A bad value, in at most 40 characters; one too deep to write out (an editor's, or a hostile one) by its kind. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = kindOf(value);
  }
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

/** One problem per bad key of a zod issue, in words (see the module comment). */
export function problemsOfIssue(source: string, values: unknown, issue: z.core.$ZodIssue, known: SettingKey[]): ConfigProblem[] {
  const problem = (path: PropertyKey[], message: string, short: string): ConfigProblem => {
    const key = ['buckley', ...path].join('.');
    return { source, key, message, summary: `${key}: ${short}`, path };
  };
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((name) => {
        const path = [...issue.path, name];
        const meant = didYouMean(path.map(String), known);
        return meant
          ? problem(path, `not a setting; did you mean buckley.${meant}?`, `did you mean ${meant.split('.').at(-1)}?`)
          : problem(path, 'not a setting (docs/configuration.md lists the settings)', 'not a setting');
      });
    case 'invalid_type': {
      const expected = issue.expected === 'number' && /int/.test(issue.message) ? 'a whole number' : (KINDS[issue.expected] ?? issue.expected);
      const value = valueAt(values, issue.path);
      const got = value === undefined ? '' : `, not ${kindOf(value)} (${shown(value)})`;
      return [problem(issue.path, `expected ${expected}${got}`, `expected ${expected}`)];
    }
    case 'invalid_value': {
      const allowed = issue.values.map(String);
      const list = allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed.join('');
      return [problem(issue.path, `expected ${list}, not ${shown(valueAt(values, issue.path))}`, `expected ${list}`)];
    }
    case 'too_small': {
      const what = issue.origin === 'string' || issue.origin === 'array' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`;
      return [problem(issue.path, `${what}, not ${shown(valueAt(values, issue.path))}`, what)];
    }
    case 'invalid_format': {
      const what = issue.format === 'url' ? 'expected a URL such as http://127.0.0.1:11434/v1' : issue.message;
      return [problem(issue.path, `${what}, not ${shown(valueAt(values, issue.path))}`, what)];
    }
    case 'invalid_union':
      // The agent command: an argv list or one string.
      return [problem(issue.path, `expected a command line ("gemini --acp") or a list (["gemini", "--acp"]), not ${shown(valueAt(values, issue.path))}`, 'expected a command line or a list')];
    default:
      return [problem(issue.path, issue.message, issue.message)];
  }
}
