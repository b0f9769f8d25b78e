/**
 * The ACP SDK answers a request whose params are not as ACP says with "Invalid params" and the
 * schema's problems as a tree in `data` — which a client shows as "Invalid params", nothing to act
 * on. Every error response this side writes goes through `wordedErrors`: such an answer says its
 * problems in its message ("Invalid params: prompt[0].text: missing (a string)"), the tree kept
 * in `data` for a program. And the params our own handlers check (`paramsBy`) are refused the
 * same way — a schema's failure thrown to the SDK as it is would be answered "Internal error".
 */
import type { AnyMessage } from '@agentclientprotocol/sdk';
import * as z from './schema.js';

const INVALID_PARAMS = -32602;
/** The problems said in the message; the rest are counted. */
const SAID = 3;
/** Problems looked at, however many the tree holds. */
const LOOKED_AT = 50;

/** `stream` with its outgoing error answers worded (see above). */
export function wordedErrors<T extends { readable: ReadableStream<AnyMessage>; writable: WritableStream<AnyMessage> }>(stream: T): T {
  const writer = stream.writable.getWriter();
  const writable = new WritableStream<AnyMessage>({
    write: (message) => writer.write(worded(message)),
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  return { ...stream, writable };
}

/** The message, or its error answer with the problems its `data` holds said in its message. */
export function worded(message: AnyMessage): AnyMessage {
  const error = (message as { error?: { code?: unknown; message?: unknown; data?: unknown } }).error;
  if (!error || error.code !== INVALID_PARAMS || error.message !== 'Invalid params') return message;
  const found = problemsOf(error.data, []);
  if (found.length === 0) return message;
  return { ...message, error: { ...error, message: `Invalid params: ${z.inOneLine(found, SAID)}` } } as AnyMessage;
}

/** The SDK's params parser for `schema`: what is not as it says is refused as invalid params, in words. */
export function paramsBy<T>(schema: z.ZodMiniType<T>, refuse: (words: string) => Error): (params: unknown) => T {
  return (params) => {
    const parsed = z.safeParse(schema, params);
    if (parsed.success) return parsed.data;
    throw refuse(z.problems(parsed.error, SAID));
  };
}

/** A zod error's formatted tree (`{ _errors: [...], field: { _errors: [...] } }`) as "where: what" lines. */
function problemsOf(tree: unknown, path: string[], found: string[] = []): string[] {
  if (typeof tree !== 'object' || tree === null || found.length >= LOOKED_AT) return found;
  const own = (tree as { _errors?: unknown })._errors;
  if (Array.isArray(own)) for (const problem of own) if (typeof problem === 'string' && found.length < LOOKED_AT) found.push(`${z.placeOf(path)}${z.plainProblem(problem)}`);
  for (const [key, branch] of Object.entries(tree)) if (key !== '_errors') problemsOf(branch, [...path, key], found);
  return found;
}
