/**
 * Where settings come from, read without the schema (config.ts, which costs zod's load and its
 * schema's construction): the sources themselves, and the few settings `initialize`'s answer
 * depends on — so the server answers it before loading the schema (bridge/start.ts). config.ts
 * validates and merges the same sources; a unit test holds the two readings equal.
 */

/** A source of settings, named so errors can say where a bad value came from. */
export interface ConfigSource {
  name: string;
  values: unknown;
}

/**
 * The environment variables buckley-lsp reads: its own, never passed on to agents (`buckley acp`
 * reads a BUCKLEY_AGENT of its own, the path of an agent profile).
 */
export const OUR_ENVIRONMENT = ['BUCKLEY_AGENT', 'BUCKLEY_COORDINATOR', 'BUCKLEY_LOG', 'BUCKLEY_LOG_FILE'] as const;

/** Settings from the environment: BUCKLEY_COORDINATOR, BUCKLEY_AGENT, BUCKLEY_LOG. */
export function configFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const values: Record<string, Record<string, unknown>> = {};
  if (env.BUCKLEY_COORDINATOR) values.coordinator = { address: env.BUCKLEY_COORDINATOR };
  if (env.BUCKLEY_AGENT) values.agent = { driver: 'acp', command: env.BUCKLEY_AGENT };
  if (env.BUCKLEY_LOG) values.log = { level: env.BUCKLEY_LOG };
  return values;
}

/** What the editor is offered in `initialize` depends on these settings (bridge/capabilities.ts). */
export interface NegotiatedSettings {
  answers: { showDocument: boolean; hover: boolean; showMessage: boolean };
  completions: { enabled: boolean };
}

/** Their defaults: the schema's too. */
export const NEGOTIATED_DEFAULTS: NegotiatedSettings = {
  answers: { showDocument: true, hover: true, showMessage: true },
  completions: { enabled: true },
};

/**
 * The negotiated settings as the sources give them, as the schema resolves them leniently: the
 * last source (of environment, flags, initializationOptions, workspace) holding a boolean at the
 * key wins; a value of another type is left out, so a lower source or the default applies.
 */
export function negotiatedSettings(sources: readonly ConfigSource[]): NegotiatedSettings {
  const flag = (section: 'answers' | 'completions', key: string, fallback: boolean): boolean => {
    let value = fallback;
    for (const { values } of sources) {
      const inSection = isPlainObject(values) ? values[section] : undefined;
      const given = isPlainObject(inSection) ? inSection[key] : undefined;
      if (typeof given === 'boolean') value = given;
    }
    return value;
  };
  const { answers, completions } = NEGOTIATED_DEFAULTS;
  return {
    answers: { showDocument: flag('answers', 'showDocument', answers.showDocument), hover: flag('answers', 'hover', answers.hover), showMessage: flag('answers', 'showMessage', answers.showMessage) },
    completions: { enabled: flag('completions', 'enabled', completions.enabled) },
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

/** The sources of the server's settings, in order (later ones win): the last two come from the editor. */
export function serverSources(env: NodeJS.ProcessEnv, cli: unknown): ConfigSource[] {
  return [
    { name: 'environment', values: configFromEnv(env) },
    { name: 'command line', values: cli },
    { name: 'initializationOptions', values: undefined },
    { name: 'workspace/configuration', values: undefined },
  ];
}
