/**
 * One configuration schema for every source: initializationOptions, the `buckley` section of
 * workspace/configuration, the environment and CLI flags. Every key has a default; the
 * TypeScript type is derived from the schema.
 */
import * as z from './schema.js';
import { didYouMean, problemsOfIssue, settingKeys, type ConfigProblem, type SettingKey } from './configProblems.js';
import { configFromEnv as configValuesFromEnv, isPlainObject, NEGOTIATED_DEFAULTS, splitCommandLine, type ConfigSource } from './configSources.js';

export { OUR_ENVIRONMENT, splitCommandLine, type ConfigSource } from './configSources.js';

const logLevel = z.enum(['error', 'warn', 'info', 'debug']);
export type LogLevel = z.infer<typeof logLevel>;

const nonEmpty = () => z.string().check(z.minLength(1));
const optionalText = () => z.optional(nonEmpty());
/** Milliseconds, counts, sizes: a whole number above zero (or at least `min`), with its default. */
const wholeNumber = (fallback: number, min?: number) => z._default(z.int().check(min === undefined ? z.positive() : z.gte(min)), fallback);
const flag = (fallback: boolean) => z._default(z.boolean(), fallback);
/**
 * A settings section. Sections are strict so a misspelt key is reported, not silently ignored;
 * an absent section takes every default.
 */
const section = <Shape extends z.core.$ZodShape>(shape: Shape) => z.prefault(z.strictObject(shape), {} as z.input<z.ZodMiniObject<Shape>>);

/** An agent command: either an argv array or a string split on whitespace (quotes respected). */
const command = z.pipe(
  z.union([z.array(nonEmpty()).check(z.minLength(1)), z.string().check(z.trim(), z.minLength(1))]),
  z.transform((value) => (typeof value === 'string' ? splitCommandLine(value) : value)),
);

const envName = z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'));
/**
 * An MCP server for the agent, as Zed's `context_servers` have them: a command it starts (stdio),
 * or a URL it connects to (HTTP; `type: "sse"` for the older transport).
 */
const mcpServer = z.union([
  z.strictObject({ command: nonEmpty(), args: z._default(z.array(z.string()), []), env: z._default(z.record(envName, z.string()), {}) }),
  z.strictObject({ url: z.url({ protocol: /^https?$/ }), type: z._default(z.enum(['http', 'sse']), 'http'), headers: z._default(z.record(nonEmpty(), z.string()), {}) }),
]);
export type McpServerSetting = z.infer<typeof mcpServer>;

// Sections are strict, the top level is not: editors put other things in initializationOptions
// (`fromUser`, `clientCapabilities`). A top-level key close to a section's name is reported all
// the same (see misspeltSections).
const HOST_PORT = String.raw`(?:[^\s:,]+|\[[0-9a-fA-F:]+\]):\d{1,5}`;
const ADDRESSES = new RegExp(`^\\s*${HOST_PORT}(?:\\s*,\\s*${HOST_PORT})*\\s*$`);

export const configSchema = z.object({
  coordinator: section({
    /**
     * `host:port` of a running coordinator — or of a team's replicas, comma-separated, failed over
     * in turn; unset = start the embedded one.
     */
    address: z.optional(z.string().check(z.regex(ADDRESSES, 'expected host:port (or several, comma-separated), e.g. 127.0.0.1:50051'))),
    /**
     * Agent identity sent as `agent_id` and `x-buckley-agent-id`. Unset: the client
     * certificate's name (CN), else an id of this server's own (see bridge/identity.ts).
     */
    agentId: optionalText(),
    /** Deadline of short coordinator calls (capabilities, sessions, context updates). */
    callTimeoutMs: wholeNumber(10_000),
    /**
     * TLS to the coordinator: required for a non-loopback address. `ca` verifies the server;
     * `cert` + `key` are the client certificate for mutual TLS (Buckley requires it; its CN is
     * the agent identity). Paths to PEM files.
     */
    tls: z.optional(
      z
        .strictObject({
          ca: optionalText(),
          cert: optionalText(),
          key: optionalText(),
          /** Verify the server certificate against this name instead of the address's host. */
          serverName: optionalText(),
        })
        .check(z.refine((tls) => (tls.cert === undefined) === (tls.key === undefined), 'cert and key go together (mutual TLS needs both)')),
    ),
  }),
  agent: section({
    /** Which driver the embedded coordinator uses: `auto` detects one. */
    driver: z._default(z.enum(['auto', 'acp', 'openai']), 'auto'),
    /** The ACP agent to spawn, e.g. `["buckley", "acp"]` or `"gemini --acp"`. */
    command: z.optional(command),
    /**
     * Environment variables for the agent, over the server's own environment (from which the
     * variables buckley-lsp reads, BUCKLEY_AGENT and the others, are left out, and those that look
     * like secrets: see passEnv).
     */
    env: z.optional(z.record(z.string().check(z.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name')), z.string())),
    /**
     * Variables of the server's environment passed to the agent although their names say they hold
     * a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, …), which it otherwise does not get
     * (but for a known agent's own key variables): names, or patterns with `*` (`AWS_*`).
     */
    passEnv: z._default(z.array(z.string().check(z.regex(/^[A-Za-z_*][A-Za-z0-9_*]*$/, 'expected a variable name, or a pattern with *'))), []),
    /** Deadline of the agent's ACP setup requests (initialize, session/new): a hung agent is reported. */
    requestTimeoutMs: wholeNumber(30_000),
    /**
     * How long an agent may go on with a cancelled turn. After it, the turn ends as cancelled and
     * its ACP session is given up (closed, never reused); what the agent still sends is dropped.
     */
    cancelGraceMs: wholeNumber(5_000),
    /**
     * The agent's modes, for those who know what each does: an ask runs in `ask` (default: the
     * agent's read-only mode), a task in `task` (default: the mode where it asks before changes
     * and commands), whatever they let the agent do. By id or name.
     */
    modes: section({ ask: optionalText(), task: optionalText() }),
    /**
     * The mode the agent's turns use, by id or name, where the safety rules allow it: a task's
     * must ask before the agent acts, an ask's must be read-only (else the safe one is used and
     * `buckley/status` says why). "Buckley: choose mode" picks another, which wins over this.
     */
    mode: optionalText(),
    /**
     * The model the agent's turns use, by id or name, where it offers models (else its own
     * default). "Buckley: choose model" picks another, remembered per agent, which wins over this.
     */
    model: optionalText(),
    /** MCP servers the agent gets with each session (ACP `session/new`), by name. */
    mcpServers: z.optional(z.record(nonEmpty(), mcpServer)),
    /**
     * Our editor MCP server ("buckley-editor") offered with each session: the agent's tools for
     * the open files (which have unsaved edits), the selection, a file as its buffer has it.
     */
    editorTools: flag(true),
    /** Idle agent sessions kept for their conversations; more are closed (or the agent restarted). */
    maxIdleSessions: wholeNumber(4),
    /** No word from the agent this long during a turn (and no approval pending), and the user is told, with its last log line. */
    silenceMs: wholeNumber(30_000, 1_000),
    /**
     * The sandbox agents run in (Linux, bubblewrap): asks write nothing of yours, tasks only the
     * workspace, credentials are unreadable. `writable`: more paths the agent may write (its own
     * state, for agents buckley-lsp does not know); `show`: credential places the agent is given
     * to read all the same (`~/.config/gh`, for its `gh` commands).
     */
    sandbox: section({
      enabled: flag(true),
      writable: z._default(z.array(nonEmpty()), []),
      show: z._default(z.array(nonEmpty()), []),
      /**
       * The agent's network: confined (it reaches its model's API, its MCP servers and the hosts
       * listed, through buckley-lsp's proxy: not this machine's services) where socat is installed.
       * `allow`: more hosts (`host`, `host:port`, `*.example.com`); `allowInTasks`: more for tasks
       * (their commands: a package registry), `*` for any host on the internet.
       */
      network: section({
        confine: flag(true),
        allow: z._default(z.array(nonEmpty()), []),
        allowInTasks: z._default(z.array(nonEmpty()), []),
      }),
    }),
    openai: section({
      baseUrl: z._default(z.url({ protocol: /^https?$/ }), 'http://127.0.0.1:11434/v1'),
      model: optionalText(),
      /** Name of the environment variable holding the API key (never the key itself). */
      apiKeyEnv: z._default(nonEmpty(), 'OPENAI_API_KEY'),
    }),
  }),
  ask: section({
    /** An ask that takes longer is cancelled and reported as timed out. */
    timeoutMs: wholeNumber(180_000),
    /**
     * Refuse asks where the coordinator does not keep them read-only (it does not announce
     * `ask_read_only`: Buckley runs tools without approval), instead of warning once.
     */
    requireReadOnly: flag(false),
  }),
  task: section({
    /** A task that takes longer is cancelled and reported as timed out. */
    timeoutMs: wholeNumber(1_800_000),
  }),
  approvals: section({
    /** Tool calls up to this risk are approved without asking; `destructive` never is. */
    autoApprove: z._default(z.enum(['none', 'low', 'medium', 'high']), 'low'),
    /** An approval nobody answers is denied after this long. */
    timeoutMs: wholeNumber(300_000),
  }),
  limits: section({
    /** Asks and tasks running at once for one editor; more are refused as "busy". */
    maxConcurrent: wholeNumber(128),
  }),
  context: section({
    /** Byte budget of the editor context sent with each ask (UTF-8 bytes). */
    maxBytes: wholeNumber(250_000, 1024),
    includeOpenDocuments: flag(true),
  }),
  completions: section({
    /** Inline completions (LSP 3.18 textDocument/inlineCompletion) where the editor asks for them. */
    enabled: flag(NEGOTIATED_DEFAULTS.completions.enabled),
    /**
     * Wait this long after the last keystroke before asking the model (a keystroke meanwhile
     * cancels). None by default: the editor paces its requests, and a newer one cancels the older
     * end to end, so a wait here is only latency (about 60 ms over the model's own, measured).
     */
    debounceMs: wholeNumber(0, 0),
    /** The code around the cursor sent with a completion (UTF-8 bytes; never more than context.maxBytes). */
    maxBytes: wholeNumber(8_000, 256),
    /** A completion that takes longer is given up (the model's request is aborted). */
    timeoutMs: wholeNumber(10_000),
  }),
  answers: section({
    /** Open each answer as a markdown document (window/showDocument) where the editor can. */
    showDocument: flag(NEGOTIATED_DEFAULTS.answers.showDocument),
    /** Show the answer on hover over the asked range. */
    hover: flag(NEGOTIATED_DEFAULTS.answers.hover),
    /** A one-line summary with window/showMessage. */
    showMessage: flag(NEGOTIATED_DEFAULTS.answers.showMessage),
    /** Where answer documents are written; defaults to the user's state directory. */
    directory: optionalText(),
  }),
  log: section({ level: z._default(logLevel, 'info') }),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

export const defaultConfig: Config = configSchema.parse({});

export type { ConfigProblem } from './configProblems.js';

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: ConfigProblem[] };

let knownKeys: SettingKey[] | undefined;

/** Every setting of the schema, for `doctor`, flags and "did you mean". */
export function settings(): SettingKey[] {
  return (knownKeys ??= settingKeys(configSchema));
}

let objectKeys: { sections: Set<string>; objects: Set<string> } | undefined;

/** The schema's sections (`agent`, `agent.sandbox`), and they with its maps (`agent.env`): where settings are objects. */
function schemaObjects(): { sections: Set<string>; objects: Set<string> } {
  return (objectKeys ??= (() => {
    const sections = new Set(settings().flatMap(({ key }) => key.split('.').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('.'))));
    return { sections, objects: new Set([...sections, ...settings().filter(({ type }) => type === 'record').map(({ key }) => key)]) };
  })());
}

/**
 * An empty object as Lua encodes it is `[]`: Neovim sends `settings = {}` so, and `agent = {}`
 * within them. Where the schema has an object — the top level, a section, a map such as
 * `agent.env` — an empty list is taken for one; a list setting's `[]` stays a list. Only the
 * schema's sections are gone into: what else an editor sends is left as it is, however deep.
 */
function emptyListsAsObjects(values: unknown, path = ''): unknown {
  const { sections, objects } = schemaObjects();
  if (Array.isArray(values) && values.length === 0 && (path === '' || objects.has(path))) return {};
  if (!isPlainObject(values) || (path !== '' && !sections.has(path))) return values;
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, emptyListsAsObjects(value, path ? `${path}.${key}` : key)]));
}

/** Top-level keys that are no section but look like one (`agnet`): the rest are the editor's own. */
function misspeltSections(source: ConfigSource): ConfigProblem[] {
  if (!isPlainObject(source.values)) return [];
  const sections = new Set(settings().map((setting) => setting.key.split('.')[0]!));
  return Object.keys(source.values)
    .filter((key) => !sections.has(key))
    .flatMap((key) => {
      const meant = didYouMean([key], settings());
      return meant ? [{ source: source.name, key: `buckley.${key}`, message: `not a setting; did you mean buckley.${meant}?`, summary: `buckley.${key}: did you mean ${meant}?`, path: [key] }] : [];
    });
}

/** zod issues as problems, one per bad key (a misspelt key is named itself, not its section). */
function problemsOf(source: string, values: unknown, issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  return issues.flatMap((issue) => problemsOfIssue(source, values, issue, settings()));
}

/**
 * Merges the sources (later ones win, key by key) and validates the result. Each source is
 * also validated on its own, so a problem names the key and the source that set it.
 */
export function resolveConfig(given: ConfigSource[]): ConfigResult {
  const sources = given.map((source) => ({ ...source, values: emptyListsAsObjects(source.values) }));
  const problems: ConfigProblem[] = [];
  for (const source of sources) {
    if (source.values === undefined || source.values === null) continue;
    const parsed = configSchema.safeParse(source.values);
    if (!parsed.success) problems.push(...problemsOf(source.name, source.values, parsed.error.issues));
    problems.push(...misspeltSections(source));
  }
  if (problems.length > 0) return { ok: false, problems };
  const merged = sources.reduce<unknown>((acc, source) => deepMerge(acc, source.values), {});
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) return { ok: false, problems: problemsOf('merged settings', merged, parsed.error.issues) };
  return { ok: true, config: parsed.data };
}

/**
 * As resolveConfig, but a bad key does not take the rest with it: each bad key is left out of
 * its source (so a lower source or the default applies) and reported; everything else applies.
 */
export function resolveConfigLeniently(sources: ConfigSource[]): { config: Config; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  let current = sources;
  // A second round catches a problem only the merge shows (e.g. tls.cert from one source, no key).
  for (let round = 0; round < 3; round++) {
    const result = resolveConfig(current);
    if (result.ok) return { config: result.config, problems };
    problems.push(...result.problems);
    current = current.map((source) => {
      const bad = result.problems.filter((problem) => problem.source === source.name || problem.source === 'merged settings');
      return bad.length ? { ...source, values: withoutKeys(source.values, bad.map((problem) => problem.path)) } : source;
    });
  }
  return { config: defaultConfig, problems };
}

/** `values` without the given paths: copied only along them (the rest, however deep, is shared). */
function withoutKeys(values: unknown, paths: PropertyKey[][]): unknown {
  let copy = values;
  for (const path of paths) {
    if (path.length === 0) return undefined;
    copy = without(copy, path);
  }
  return copy;
}

function without(value: unknown, path: PropertyKey[]): unknown {
  const [key, ...rest] = path as [string, ...PropertyKey[]];
  if (!isPlainObject(value) || !Object.hasOwn(value, key)) return value;
  const copy = { ...value };
  if (rest.length === 0) delete copy[key];
  else copy[key] = without(value[key], rest);
  return copy;
}

/** "buckley.context.maxBytes (from workspace/configuration): expected number, received string" */
export function describeProblems(problems: ConfigProblem[]): string {
  return problems.map((p) => `${p.key} (from ${p.source}): ${p.message}`).join('; ');
}

/** Settings from the environment: BUCKLEY_COORDINATOR, BUCKLEY_AGENT, BUCKLEY_LOG. */
export function configFromEnv(env: NodeJS.ProcessEnv): ConfigInput {
  return configValuesFromEnv(env) as ConfigInput;
}

/** Settings objects are not deeper than this: past it, what the later source gives wins whole (an editor's own values may be any depth). */
const MERGE_DEPTH = 16;

/** Key by key, objects within objects; past MERGE_DEPTH the later source's value whole. */
function deepMerge(base: unknown, override: unknown, depth = 0): unknown {
  if (override === undefined || override === null) return base;
  if (!isPlainObject(base) || !isPlainObject(override) || depth >= MERGE_DEPTH) return override;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) result[key] = deepMerge(base[key], value, depth + 1);
  return result;
}
