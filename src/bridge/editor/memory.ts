/**
 * Memory back after a big document closes. V8 frees a closed document only at its next full
 * collection, which an idle server may not run for a long while: after a 50 MB document closed,
 * the server kept ~240 MB it no longer used. One full collection, shortly after a big document
 * closed (once for several closed together), gives it back.
 */

/** A document at least this long (UTF-16 units) is worth a full collection once it closes. */
export const BIG_DOCUMENT = 4 * 1024 * 1024;
/** Documents closed within this while share one collection. */
const SETTLE_MS = 200;

let collect: (() => void) | null | undefined;
let timer: NodeJS.Timeout | undefined;

/**
 * V8's `gc`, exposed for this call's new context: the server is not started with --expose-gc.
 * node:v8 and node:vm load here, at the first big document, not before `initialize`.
 */
async function collector(): Promise<(() => void) | null> {
  if (collect === undefined) {
    try {
      const [{ setFlagsFromString }, { runInNewContext }] = await Promise.all([import('node:v8'), import('node:vm')]);
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as () => void;
    } catch {
      collect = null;
    }
  }
  return collect;
}

export function documentClosed(length: number): void {
  if (length < BIG_DOCUMENT) return;
  clearTimeout(timer);
  timer = setTimeout(() => void collector().then((gc) => gc?.()), SETTLE_MS).unref();
}
