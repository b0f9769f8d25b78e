/**
 * The configuration in force, from its sources (environment < CLI flags < initializationOptions
 * < workspace/configuration). A bad value is reported naming its key; the last good
 * configuration stays, or — at startup — the configuration of the sources that are valid.
 */
import { configFromEnv, defaultConfig, describeProblems, resolveConfig, type Config, type ConfigInput, type ConfigProblem, type ConfigSource } from './config.js';
import type { Logger } from './logger.js';

export class Settings {
  current: Config = defaultConfig;
  private readonly sources: ConfigSource[];
  private haveGood = false;
  private readonly listeners: ((config: Config) => void)[] = [];

  constructor(
    env: NodeJS.ProcessEnv,
    cli: ConfigInput,
    private readonly logger: Logger,
    /** Tells the user, in the editor, which keys are wrong. */
    private readonly report: (problems: ConfigProblem[]) => void,
  ) {
    this.sources = [
      { name: 'environment', values: configFromEnv(env) },
      { name: 'command line', values: cli },
      { name: 'initializationOptions', values: undefined },
      { name: 'workspace/configuration', values: undefined },
    ];
  }

  onChange(listener: (config: Config) => void): void {
    this.listeners.push(listener);
  }

  setInitializationOptions(values: unknown): void {
    this.sources[2]!.values = values;
    this.apply();
  }

  setWorkspace(values: unknown): void {
    this.sources[3]!.values = values;
    this.apply();
  }

  private apply(): void {
    let result = resolveConfig(this.sources);
    if (!result.ok) {
      this.logger.error(`invalid settings, ${this.haveGood ? 'keeping the last good ones' : 'ignoring them'}: ${describeProblems(result.problems)}`);
      this.report(result.problems);
      if (this.haveGood) return;
      const bad = new Set(result.problems.map((problem) => problem.source));
      result = resolveConfig(this.sources.filter((source) => !bad.has(source.name)));
      if (!result.ok) return;
    }
    this.haveGood = true;
    this.current = result.config;
    for (const listener of this.listeners) listener(this.current);
  }
}
