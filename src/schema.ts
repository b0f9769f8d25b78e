/**
 * zod for every boundary, as zod/mini: the same checks in functional form, tree-shaken to a few
 * kilobytes. Classic zod costs ~25 ms of startup and ~6 MB of memory before `initialize` can be
 * answered (`npm run bench`); the ACP SDK still brings it along once an agent starts.
 * Import it as `import * as z from './schema.js'`; mini ships no messages, so English is set here.
 */
import { config, type core } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';

/** The problems a check found, in one line a peer can act on: "sessionId: expected string, received number; line: missing (a number)". */
export function problems(error: { issues: readonly core.$ZodIssue[] }, said = 3): string {
  return inOneLine(error.issues.map((issue) => `${placeOf(issue.path.map(String))}${plainProblem(issue.message)}`), said);
}

/** Problems ("where: what"), each once, the first `said` of them in one line and the rest counted. */
export function inOneLine(found: readonly string[], said = 3): string {
  const each = [...new Set(found)];
  return `${each.slice(0, said).join('; ')}${each.length > said ? ` (and ${each.length - said} more)` : ''}`;
}

/** `prompt[0].text: ` for ['prompt', '0', 'text']; "the params: " for none. */
export function placeOf(path: readonly string[]): string {
  if (path.length === 0) return 'the params: ';
  return `${path.map((key, i) => (/^\d+$/.test(key) ? `[${key}]` : i === 0 ? key : `.${key}`)).join('')}: `;
}

/** zod's words, shorter: "Invalid input: expected string, received undefined" → "missing (a string)"; a string too short to hold anything → "empty". */
export function plainProblem(problem: string): string {
  const text = problem.replace(/^Invalid input: /, '');
  if (text === 'Too small: expected string to have >=1 characters') return 'empty';
  const missing = /^expected (\w+), received undefined$/.exec(text);
  return missing ? `missing (${/^[aeiou]/.test(missing[1]!) ? 'an' : 'a'} ${missing[1]})` : text;
}
