/**
 * What a model server's HTTP answer may hold, read within a bound: a server (or whatever answers
 * at its address) can send a body of any size, and `response.text()` would hold all of it.
 */

/** Error pages and model lists are small; a completion's JSON is a few kilobytes. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The body as text, up to `maxBytes`; `undefined` where it is longer (the rest is not read). */
export async function boundedText(response: Response, maxBytes = MAX_BODY_BYTES): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The start of an error's body, for its words (what is past the bound is not read). */
export async function errorBody(response: Response, maxBytes = 64 * 1024): Promise<string> {
  const text = await boundedText(response, maxBytes).catch(() => '');
  return text ?? `(a body over ${Math.round(maxBytes / 1024)} KB, not read)`;
}

/**
 * A `fetch` signal that gives up on a server that has not answered within `ms` — until it has
 * (its status and headers): a streamed answer then takes as long as it takes, the caller's signal
 * alone ending it. `answered()` once the response is in; `timedOut` says which ended it.
 */
export function untilAnswered(signal: AbortSignal, ms: number): { signal: AbortSignal; answered(): void; readonly timedOut: boolean } {
  const waiting = new AbortController();
  const timer = setTimeout(() => waiting.abort(new DOMException(`no answer in ${ms / 1000} s`, 'TimeoutError')), ms);
  return {
    signal: AbortSignal.any([signal, waiting.signal]),
    answered: () => clearTimeout(timer),
    get timedOut() {
      return waiting.signal.aborted;
    },
  };
}
