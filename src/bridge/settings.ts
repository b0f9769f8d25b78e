/**
 * The configuration in force, from its sources (environment < CLI flags < initializationOptions
 * < workspace/configuration). A bad value is reported in the editor naming its key and left out
 * (a lower source or the default applies to that key); the rest of the settings apply.
 */
import { configFromEnv, defaultConfig, describeProblems, resolveConfigLeniently, type Config, type ConfigInput, type ConfigProblem, type ConfigSource } from '../config.js';
import type { Logger } from '../logger.js';

export class Settings {
  current: Config = defaultConfig;
  private readonly sources: ConfigSource[];
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
    const { config, problems } = resolveConfigLeniently(this.sources);
    if (problems.length > 0) {
      this.logger.error(`invalid settings, left out (the rest applies): ${describeProblems(problems)}`);
      this.report(problems);
    }
    this.current = config;
    for (const listener of this.listeners) listener(this.current);
  }

}
