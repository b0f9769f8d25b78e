/**
 * The configuration in force, from its sources (environment < CLI flags < initializationOptions
 * < workspace/configuration; configSources.ts). A bad value is reported in the editor naming its
 * key and left out (a lower source or the default applies to that key); the rest applies.
 */
import { describeProblems, resolveConfigLeniently, type Config, type ConfigProblem } from '../config.js';
import type { ConfigSource } from '../configSources.js';
import type { Logger } from '../logger.js';
import { projectSettings, withoutProjectKeys } from './projectSettings.js';

/** User-only settings a project's file gave, left out. */
export interface LeftOut {
  file: string;
  keys: string[];
}

/** Where the editor's own settings go among the sources. */
const WORKSPACE = 3;

export class Settings {
  current!: Config;
  /** What was wrong with the settings when they last changed (left out of `current`). */
  problems: readonly ConfigProblem[] = [];
  private readonly listeners: ((config: Config) => void)[] = [];
  private readonly problemListeners: ((problems: readonly ConfigProblem[]) => void)[] = [];

  private readonly leftListeners: ((left: LeftOut) => void)[] = [];
  /** User-only settings project files gave, left out: each said once. */
  readonly leftOut: LeftOut[] = [];
  private readonly said = new Set<string>();

  /** From the sources as `initialize` left them (configSources.ts's `serverSources`); `folders`: the workspace's, whose project files are read. */
  constructor(
    private readonly sources: ConfigSource[],
    private readonly logger: Logger,
    private readonly folders: () => readonly string[] = () => [],
    private readonly home?: string,
  ) {
    this.apply();
  }

  /** Told, once each, which user-only settings a project's file gave (left out). */
  onLeftOut(listener: (left: LeftOut) => void): void {
    this.leftListeners.push(listener);
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
    const { config, problems } = resolveConfigLeniently(this.withoutProjectSettings());
    this.problems = problems;
    if (problems.length > 0) {
      this.logger.error(`invalid settings, left out (the rest applies): ${describeProblems(problems)}`);
      for (const listener of this.problemListeners) listener(problems);
    }
    this.current = config;
    for (const listener of this.listeners) listener(this.current);
  }

  /**
   * The sources without what a project's files gave of the user-only settings (projectSettings.ts):
   * where the code goes and what an agent may do are the user's to say, not a repository's.
   */
  private withoutProjectSettings(): ConfigSource[] {
    const found = projectSettings(this.folders(), this.home);
    if (found.length === 0) return this.sources;
    return this.sources.map((source) => {
      let { values } = source;
      for (const setting of found.filter((each) => each.source === source.name)) {
        const without = withoutProjectKeys(values, setting);
        values = without.values;
        if (without.left.length) this.tellLeftOut({ file: setting.file, keys: without.left });
      }
      return { ...source, values };
    });
  }

  private tellLeftOut(left: LeftOut): void {
    const key = `${left.file}\u0000${left.keys.join(',')}`;
    if (this.said.has(key)) return;
    this.said.add(key);
    this.leftOut.push(left);
    this.logger.warn(
      `${left.file} sets buckley-lsp's ${left.keys.join(', ')}: a project's files may not choose where your code goes or what an agent may do (a repository you cloned can hold them), so these are left out. ` +
        "If you want them, set them in your own settings: Zed's ~/.config/zed/settings.json, Emacs' eglot-server-programs (:initializationOptions) in your init.",
    );
    for (const listener of this.leftListeners) listener(left);
  }
}
