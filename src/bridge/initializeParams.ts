/**
 * `initialize`'s params, checked where the server reads them, before anything does: a field of
 * the wrong type is an InvalidParams naming it — not a JavaScript error as the answer, nor a server
 * that answers and then fails every request ("could not start its server") for a `rootUri` that is
 * a number. Written by hand, not with zod: this is on the path to `initialize`'s answer, which
 * loads nothing it can do without (`npm run bench`: startup).
 */

type Rule = (value: unknown) => string | undefined;

const kind = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'an object' : `a ${typeof value}`);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A rule that `test` passes: else "must be <what>, not <kind>", or "is missing (<what>)". */
const expecting = (what: string, test: (value: unknown) => boolean): Rule => (value) => (test(value) ? undefined : value === undefined ? `is missing (${what})` : `must be ${what}, not ${kind(value)}`);
const string = expecting('a string', (value) => typeof value === 'string');
const object = expecting('an object', isObject);
const integer = expecting('an integer', Number.isInteger);
/** "params" + ".uri must be…" / "[0]…" / " must be…" */
const joined = (path: string, problem: string): string => `${path}${problem.startsWith('.') || problem.startsWith('[') ? '' : ' '}${problem}`;
const optional = (rule: Rule): Rule => (value) => (value === undefined ? undefined : rule(value));
const nullable = (rule: Rule): Rule => (value) => (value === undefined || value === null ? undefined : rule(value));
const list = expecting('a list', Array.isArray);
const listOf = (rule: Rule): Rule => (value) => {
  if (!Array.isArray(value)) return list(value);
  const index = value.findIndex((item) => rule(item) !== undefined);
  return index === -1 ? undefined : joined(`[${index}]`, rule(value[index])!);
};
const shape = (fields: Record<string, Rule>): Rule => (value) => {
  if (!isObject(value)) return object(value);
  for (const [name, rule] of Object.entries(fields)) {
    const problem = rule(value[name]);
    if (problem) return joined(`.${name}`, problem);
  }
  return undefined;
};

/** The fields the server reads, each as LSP 3.17 says it is. */
const FIELDS: Record<string, Rule> = {
  processId: nullable(integer),
  clientInfo: optional(shape({ name: string, version: optional(string) })),
  rootUri: nullable(string),
  rootPath: nullable(string),
  // A folder's name is not read: an editor that leaves it out is not refused for it.
  workspaceFolders: nullable(listOf(shape({ uri: string, name: optional(string) }))),
  initializationOptions: nullable(object),
  capabilities: shape({
    textDocument: nullable(shape({ hover: nullable(shape({ contentFormat: nullable(listOf(string)) })) })),
  }),
};

/** What is wrong with `initialize`'s params, one phrase per field ("params.rootUri must be a string, not a number"). */
export function initializeParamsProblems(params: unknown): string[] {
  if (!isObject(params)) return [`params ${object(params)}`];
  return Object.entries(FIELDS).flatMap(([name, rule]) => {
    const problem = rule(params[name]);
    return problem ? [joined(`params.${name}`, problem)] : [];
  });
}
