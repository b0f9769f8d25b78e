/**
 * One configuration schema for every source: initializationOptions, the `buckley` section of
 * workspace/configuration, the environment and CLI flags. Every key has a default; the
 * TypeScript type is derived from the schema.
 */
import { z } from 'zod';

const logLevel = z.enum(['error', 'warn', 'info', 'debug']);
export type LogLevel = z.infer<typeof logLevel>;

/** An agent command: either an argv array or a string split on whitespace (quotes respected). */
const command = z.union([z.array(z.string().min(1)).min(1), z.string().trim().min(1)]).transform(
  (value) => (typeof value === 'string' ? splitCommandLine(value) : value),
);

// Sections are strict so a misspelt key is reported, not silently ignored; the top level is
// not, because initializationOptions also carries other things (clientCapabilities).
export const configSchema = z.object({
  coordinator: z
    .strictObject({
      /** `host:port` of a running coordinator; unset = start the embedded one. */
      address: z
        .string()
        .regex(/^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/, 'expected host:port, e.g. 127.0.0.1:50051')
        .optional(),
      /** Agent identity sent as `agent_id` and `x-buckley-agent-id`. */
      agentId: z.string().min(1).default('buckley-lsp'),
      /** Deadline of short coordinator calls (capabilities, sessions, context updates). */
      callTimeoutMs: z.number().int().positive().default(10_000),
      /**
       * TLS to the coordinator: required for a non-loopback address. `ca` verifies the server;
       * `cert` + `key` are the client certificate for mutual TLS (Buckley requires it; its CN is
       * the agent identity). Paths to PEM files.
       */
      tls: z
        .strictObject({
          ca: z.string().min(1).optional(),
          cert: z.string().min(1).optional(),
          key: z.string().min(1).optional(),
          /** Verify the server certificate against this name instead of the address's host. */
          serverName: z.string().min(1).optional(),
        })
        .refine((tls) => (tls.cert === undefined) === (tls.key === undefined), 'cert and key go together (mutual TLS needs both)')
        .optional(),
    })
    .prefault({}),
  agent: z
    .strictObject({
      /** Which driver the embedded coordinator uses: `auto` detects one. */
      driver: z.enum(['auto', 'acp', 'openai']).default('auto'),
      /** The ACP agent to spawn, e.g. `["buckley", "acp"]` or `"gemini --acp"`. */
      command: command.optional(),
      /** Deadline of the agent's ACP setup requests (initialize, session/new): a hung agent is reported. */
      requestTimeoutMs: z.number().int().positive().default(30_000),
      openai: z
        .strictObject({
          baseUrl: z.url().default('http://127.0.0.1:11434/v1'),
          model: z.string().min(1).optional(),
          /** Name of the environment variable holding the API key (never the key itself). */
          apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY'),
        })
        .prefault({}),
    })
    .prefault({}),
  ask: z
    .strictObject({
      /** An ask that takes longer is cancelled and reported as timed out. */
      timeoutMs: z.number().int().positive().default(180_000),
    })
    .prefault({}),
  task: z
    .strictObject({
      /** A task that takes longer is cancelled and reported as timed out. */
      timeoutMs: z.number().int().positive().default(1_800_000),
    })
    .prefault({}),
  approvals: z
    .strictObject({
      /** Tool calls up to this risk are approved without asking; `destructive` never is. */
      autoApprove: z.enum(['none', 'low', 'medium', 'high']).default('low'),
      /** An approval nobody answers is denied after this long. */
      timeoutMs: z.number().int().positive().default(300_000),
    })
    .prefault({}),
  limits: z
    .strictObject({
      /** Asks and tasks running at once for one editor; more are refused as "busy". */
      maxConcurrent: z.number().int().positive().default(128),
    })
    .prefault({}),
  context: z
    .strictObject({
      /** Byte budget of the editor context sent with each ask (UTF-8 bytes). */
      maxBytes: z.number().int().min(1024).default(250_000),
      includeOpenDocuments: z.boolean().default(true),
    })
    .prefault({}),
  answers: z
    .strictObject({
      /** Open each answer as a markdown document (window/showDocument) where the editor can. */
      showDocument: z.boolean().default(true),
      /** Show the answer on hover over the asked range. */
      hover: z.boolean().default(true),
      /** A one-line summary with window/showMessage. */
      showMessage: z.boolean().default(true),
      /** Where answer documents are written; defaults to the user's state directory. */
      directory: z.string().min(1).optional(),
    })
    .prefault({}),
  log: z.strictObject({ level: logLevel.default('info') }).prefault({}),
});

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;

export const defaultConfig: Config = configSchema.parse({});

/** A source of settings, named so errors can say where a bad value came from. */
export interface ConfigSource {
  name: string;
  values: unknown;
}

export interface ConfigProblem {
  source: string;
  key: string;
  message: string;
}

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: ConfigProblem[] };

/**
 * Merges the sources (later ones win, key by key) and validates the result. Each source is
 * also validated on its own, so a problem names the key and the source that set it.
 */
export function resolveConfig(sources: ConfigSource[]): ConfigResult {
  const problems: ConfigProblem[] = [];
  for (const source of sources) {
    if (source.values === undefined || source.values === null) continue;
    const parsed = configSchema.safeParse(source.values);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        problems.push({ source: source.name, key: ['buckley', ...issue.path].join('.'), message: issue.message });
      }
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const merged = sources.reduce<unknown>((acc, source) => deepMerge(acc, source.values), {});
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        source: 'merged settings',
        key: ['buckley', ...issue.path].join('.'),
        message: issue.message,
      })),
    };
  }
  return { ok: true, config: parsed.data };
}

/** "buckley.context.maxBytes (from workspace/configuration): expected number, received string" */
export function describeProblems(problems: ConfigProblem[]): string {
  return problems.map((p) => `${p.key} (from ${p.source}): ${p.message}`).join('; ');
}

/** Settings from the environment: BUCKLEY_COORDINATOR, BUCKLEY_AGENT, BUCKLEY_LOG. */
export function configFromEnv(env: NodeJS.ProcessEnv): ConfigInput {
  const values: Record<string, Record<string, unknown>> = {};
  if (env.BUCKLEY_COORDINATOR) values.coordinator = { address: env.BUCKLEY_COORDINATOR };
  if (env.BUCKLEY_AGENT) values.agent = { driver: 'acp', command: env.BUCKLEY_AGENT };
  if (env.BUCKLEY_LOG) values.log = { level: env.BUCKLEY_LOG };
  return values as ConfigInput;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepMerge(base: unknown, override: unknown): unknown {
  if (override === undefined || override === null) return base;
  if (!isPlainObject(base) || !isPlainObject(override)) return override;
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) result[key] = deepMerge(base[key], value);
  return result;
}

/** Splits `node agent.js --flag "a b"` into argv, honouring single and double quotes. */
export function splitCommandLine(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let quote: '"' | "'" | undefined;
  let started = false;
  for (const char of line) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) args.push(current);
      current = '';
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}
