/**
 * The bridge's current coordinator connection: made on first use after `initialize` (loading
 * gRPC only then), and made anew when the coordinator or agent settings change — the old one
 * closes once the calls in flight on it have ended.
 */
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { CoordinatorConnection } from './connection.js';

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
  /** Resolves once the editor's own settings are in (workspace/configuration after `initialized`). */
  initialSettings(): Promise<void>;
}

export class CoordinatorLink {
  current: CoordinatorConnection | undefined;
  private pending: Promise<CoordinatorConnection> | undefined;
  private madeWith: string | undefined;
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
    // Not connected yet, or still waiting for the initial settings: it will use these.
    if (!this.pending || this.madeWith === undefined || this.madeWith === settingsKey(config)) return;
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
