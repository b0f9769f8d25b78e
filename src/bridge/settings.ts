/**
 * The configuration in force, from its sources (environment < CLI flags < initializationOptions
 * < workspace/configuration; configSources.ts). A bad value is reported in the editor naming its
 * key and left out (a lower source or the default applies to that key); the rest applies.
 */
import { describeProblems, resolveConfigLeniently, type Config, type ConfigProblem } from '../config.js';
import type { ConfigSource } from '../configSources.js';
import type { Logger } from '../logger.js';

/** Where the editor's own settings go among the sources. */
const WORKSPACE = 3;

export class Settings {
  current!: Config;
  /** What was wrong with the settings when they last changed (left out of `current`). */
  problems: readonly ConfigProblem[] = [];
  private readonly listeners: ((config: Config) => void)[] = [];
  private readonly problemListeners: ((problems: readonly ConfigProblem[]) => void)[] = [];

  /** From the sources as `initialize` left them (configSources.ts's `serverSources`). */
  constructor(
    private readonly sources: ConfigSource[],
    private readonly logger: Logger,
  ) {
    this.apply();
  }

  onChange(listener: (config: Config) => void): void {
    this.listeners.push(listener);
  }

  /** Told which keys are wrong whenever a change has some (to say so in the editor). */
  onProblems(listener: (problems: readonly ConfigProblem[]) => void): void {
    this.problemListeners.push(listener);
  }

  setWorkspace(values: unknown): void {
    this.sources[WORKSPACE]!.values = values;
    this.apply();
  }

  private apply(): void {
    const { config, problems } = resolveConfigLeniently(this.sources);
    this.problems = problems;
    if (problems.length > 0) {
      this.logger.error(`invalid settings, left out (the rest applies): ${describeProblems(problems)}`);
      for (const listener of this.problemListeners) listener(problems);
    }
    this.current = config;
    for (const listener of this.listeners) listener(this.current);
  }
}
