/**
 * What a team's coordinator reads from NATS, checked before it is used: anyone the team's NATS
 * admits can write its subjects and buckets (a colleague's script, another program, a version of
 * buckley-lsp that writes more), and a store can be damaged. What is not in the form buckley-lsp
 * writes is Unreadable — said in words, never asked for again as if NATS were away, and never
 * the end of what else a call reads (a listing skips it; a task's stream goes on past it).
 */
import * as z from '../../schema.js';
import { Unreadable, type TaskRecord, type TaskState } from './store.js';

const TASK_ID = /^[A-Za-z0-9_-]{1,128}$/;
const text = z.string();
const maybe = <T extends z.ZodMiniType>(schema: T) => z.optional(schema);

// Loose where a later version may add to them: what this one does not know is kept, not dropped on a rewrite.
const stateSchema = z.looseObject({
  owner: text,
  status: z.enum(['queued', 'running', 'awaiting_approval', 'completed', 'failed', 'cancelled']),
  title: text,
  replica: maybe(text),
  seq: z.number(),
  updatedAt: z.number(),
  run: maybe(text),
  pending: maybe(z.array(text)),
});

const specSchema = z.looseObject({
  agentId: text,
  query: text,
  intent: z.enum(['ask', 'task', 'edit']),
  sessionKey: text,
  servesBuffers: z.boolean(),
  conversationKey: maybe(text),
  earlier: maybe(text),
  cwd: maybe(text),
  mode: maybe(text),
  traceparent: maybe(text),
});

/** The parts of a record that steer a coordinator (its request, its runs, the replies, its end), each with its form. */
const PARTS: [keyof TaskRecord, z.ZodMiniType][] = [
  ['created', z.looseObject({ owner: text, spec: specSchema })],
  ['queued', z.looseObject({ ticket: z.number() })],
  ['started', z.looseObject({ replica: text, agent: maybe(text), agentSession: maybe(text), resumable: maybe(z.boolean()) })],
  ['caller', z.union([z.looseObject({ attached: text }), z.looseObject({ detached: text })])],
  ['reply', z.looseObject({ id: text, by: text, answer: z.unknown() })],
];
const FINALS = new Set(['completed', 'failed', 'cancelled']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const typeName = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * A message's records, checked where they stand (not copied): a task's events are most of what a
 * replica reads — thousands a second, for each watcher — and a schema's parse of each copies it
 * (it took more than half of what a replica follows a second, `npm run bench`). So an event is
 * checked to be an object, and the parts that steer a coordinator are checked whole.
 */
function checkRecords(value: unknown[], where: string): Dated[] {
  const expected = (at: string, what: string, got: unknown) => notInForm(where, `${at}: invalid input: expected ${what}, received ${typeName(got)}`);
  value.forEach((record, i) => {
    if (!isObject(record)) throw expected(`${i}`, 'a record', record);
    if (typeof record.at !== 'number') throw expected(`${i}.at`, 'number', record.at);
    if (record.event !== undefined && !isObject(record.event)) throw expected(`${i}.event`, 'an object', record.event);
    if (record.run !== undefined && typeof record.run !== 'string') throw expected(`${i}.run`, 'string', record.run);
    if (record.final !== undefined && !FINALS.has(record.final as string)) throw notInForm(where, `${i}.final: invalid option: expected one of "completed"|"failed"|"cancelled"`);
    for (const [part, schema] of PARTS) {
      if (record[part] === undefined) continue;
      const parsed = z.safeParse(schema, record[part]);
      if (!parsed.success) throw notInForm(where, wrongIn(parsed.error.issues.map((issue) => ({ ...issue, path: [i, part, ...issue.path] }))));
    }
  });
  return value as Dated[];
}

const notInForm = (what: string, wrong: string) => new Unreadable(`${what} in NATS is not in the form buckley-lsp writes (${wrong})`);

const blobSchema = z.looseObject({ blob: text });
export type Dated = TaskRecord & { at: number };
export type Body = Dated[] | { blob: string };

const jobSchema = z.looseObject({ taskId: z.string().check(z.regex(TASK_ID)) });

/** `bytes` as JSON, or Unreadable naming `what`. */
function jsonOf(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Unreadable(`${what} in NATS is not JSON (${bytes.length.toLocaleString('en')} bytes): it was not written by buckley-lsp, or is damaged`);
  }
}

/** `value` as `schema` has it, or Unreadable naming `what` and why. */
function readAs<T>(schema: z.ZodMiniType<T>, value: unknown, what: string): T {
  const parsed = z.safeParse(schema, value);
  if (!parsed.success) throw notInForm(what, wrongIn(parsed.error.issues));
  return parsed.data;
}

/** Where the value is wrong, in a few words: its first three issues. */
function wrongIn(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const said = issues.slice(0, 3).map((issue) => `${issue.path.map(String).join('.') || 'the whole'}: ${issue.message.toLowerCase()}`);
  return issues.length > 3 ? `${said.join('; ')}; …` : said.join('; ');
}

export const readState = (bytes: Uint8Array, taskId: string): TaskState => {
  const what = `the state of task ${taskId}`;
  return readAs(stateSchema, jsonOf(bytes, what), what) as TaskState;
};

/** A stream message's body: its records, or the name of the blob that holds them. */
export function readBody(bytes: Uint8Array, where: string): Body {
  const value = jsonOf(bytes, where);
  return Array.isArray(value) ? checkRecords(value, where) : readAs(blobSchema, value, where);
}

export function readRecords(bytes: Uint8Array, where: string): Dated[] {
  const value = jsonOf(bytes, where);
  if (!Array.isArray(value)) throw notInForm(where, `the whole: invalid input: expected an array of records, received ${typeName(value)}`);
  return checkRecords(value, where);
}

export const readJob = (bytes: Uint8Array): { taskId: string } => {
  const what = 'a job of the work queue (BUCKLEY_WORK)';
  return readAs(jobSchema, jsonOf(bytes, what), what);
};
