/**
 * A per-connection limit on concurrent coordinator work (asks and tasks): beyond it, a request
 * is refused at once with a clear "busy" error instead of piling up.
 */
import { LSPErrorCodes, ResponseError } from 'vscode-languageserver';

export class Limiter {
  private running = 0;

  constructor(private readonly max: () => number) {}

  /** Takes a place or throws "busy"; call the returned function once the work has ended. */
  acquire(what: string): () => void {
    const max = this.max();
    if (this.running >= max) {
      throw new ResponseError(
        LSPErrorCodes.RequestFailed,
        `Buckley is busy: ${this.running} asks and tasks are running, the most this editor may have at once (setting buckley.limits.maxConcurrent); try again when one has ended (${what} was not started)`,
      );
    }
    this.running++;
    let released = false;
    return () => {
      if (!released) this.running--;
      released = true;
    };
  }

  get inUse(): number {
    return this.running;
  }
}
