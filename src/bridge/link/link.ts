/**
 * The bridge's current coordinator connection, made anew when the coordinator or agent settings
 * change (the old one closes once the calls in flight on it have ended). A remote coordinator is
 * connected to at startup: only a call tells whether it takes our certificate and agent id, and
 * the user hears that at once. The embedded one — a worker thread and gRPC — starts when it is
 * first needed; until then startup's cheap checks (preflight.ts) say what is wrong with its agent.
 */
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { CoordinatorConnection } from './connection.js';
import { preflight, type PreflightProblem } from './preflight.js';

export interface LinkOptions {
  logger: Logger;
  env: NodeJS.ProcessEnv;
  serverVersion: string;
  config(): Config;
  clientName(): string;
  workspaceRoot(): string | undefined;
  /** Documents already open when a connection is made. */
  openDocuments(): string[];
  /** The current connection became ready or unavailable. */
  onStateChange(connection: CoordinatorConnection): void;
  /** What startup's checks found (no connection is made yet): a problem, or none. */
  onPreflight(problem: PreflightProblem | undefined): void;
  /** Resolves once the editor's own settings are in (workspace/configuration after `initialized`). */
  initialSettings(): Promise<void>;
}

export class CoordinatorLink {
  current: CoordinatorConnection | undefined;
  private pending: Promise<CoordinatorConnection> | undefined;
  private madeWith: string | undefined;
  /** The settings startup last ran with. */
  private startedWith: string | undefined;
  private closed = false;

  constructor(private readonly options: LinkOptions) {}

  /**
   * The current connection, made now if there is none — with the editor's settings, so an ask
   * that comes right after `initialized` does not connect with the defaults and then again.
   */
  get(): Promise<CoordinatorConnection> {
    this.pending ??= this.connect();
    return this.pending;
  }

  /**
   * At startup, and after a settings change before any connection: with the editor's settings, a
   * remote coordinator is connected to; for the embedded one the cheap checks run (once per
   * settings) and say what is wrong, while nothing is connected — a connection says so itself.
   */
  async start(): Promise<void> {
    const { options } = this;
    await options.initialSettings();
    const config = options.config();
    const key = settingsKey(config);
    if (this.pending || this.closed || key === this.startedWith) return;
    this.startedWith = key;
    if (config.coordinator.address) {
      this.get().catch(() => undefined);
      return;
    }
    // What a killed buckley-lsp's agent changed in its last turn is checked now, not when an agent
    // next starts (off the startup path: loaded after it).
    void import('../../coordinator/agents/guardJournal.js').then(({ guardJournalOf }) => guardJournalOf(options.env, options.logger.child('sandbox')).recover());
    const problem = await preflight(config, options.env);
    // A connection made meanwhile, or newer settings, say what is so now.
    if (this.pending || this.closed || this.startedWith !== key) return;
    options.onPreflight(problem);
    if (!problem) options.logger.info('the embedded coordinator starts when first needed (an ask, a task, a completion, the status)');
  }

  /** A connection is made or being made. */
  get connecting(): boolean {
    return this.pending !== undefined;
  }

  private async connect(): Promise<CoordinatorConnection> {
    const { options } = this;
    await options.initialSettings();
    const config = options.config();
    // Recorded before loading the connection module: a change while it loads is a change.
    this.madeWith = settingsKey(config);
    const { CoordinatorConnection } = await import('./connection.js');
    if (this.closed) throw new Error('the server is shutting down');
    const created = new CoordinatorConnection({
      config,
      logger: options.logger,
      env: options.env,
      clientName: options.clientName(),
      serverVersion: options.serverVersion,
      workspaceRoot: options.workspaceRoot(),
    });
    this.current = created;
    for (const uri of options.openDocuments()) created.documentOpened(uri);
    created.onStateChange(() => {
      if (this.current === created) options.onStateChange(created);
    });
    return created;
  }

  /** After a settings change: a new connection if the coordinator or agent settings differ. */
  settingsChanged(config: Config): void {
    // Not connected yet: startup runs again with these (once it has run); a connection will use them.
    if (!this.pending) {
      if (this.startedWith !== undefined) void this.start();
      return;
    }
    // Still waiting for the initial settings: it will use these.
    if (this.madeWith === undefined || this.madeWith === settingsKey(config)) return;
    this.options.logger.info('coordinator or agent settings changed: connecting anew (calls in flight finish on the old connection)');
    const old = this.pending;
    this.current = undefined;
    this.pending = undefined;
    this.madeWith = undefined;
    void old.then((connection) => connection.closeWhenIdle());
    void this.get();
  }

  /** Closes the connection, and one still being made; nothing is connected afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const pending = this.pending;
    this.pending = Promise.reject(new Error('the server is shutting down'));
    this.pending.catch(() => undefined);
    await pending?.then((connection) => connection.close(), () => undefined);
  }
}

function settingsKey(config: Config): string {
  return JSON.stringify([config.coordinator, config.agent]);
}
