/**
 * What the fuzz tests of the server look for: words a person can act on never read like a
 * JavaScript failure, and a server that met hostile input has shown or logged none and answers.
 */
import { expect } from 'vitest';
import type { TestClient } from './lspClient.js';

/** What a message a person can act on never reads like. */
export const CRASH = /Internal error|Request \S+ failed with message|TypeError|ReferenceError|RangeError|Cannot read prop|is not a function|is not iterable|\[object Object\]|(?<!received )undefined/;

/** Nothing the server showed, reported or logged reads like a crash, no handler failed, and it still answers. */
export async function expectNoCrash(client: TestClient): Promise<void> {
  const failed = client.all('window/logMessage').map((params) => params.message as string).filter((message) => /handler '.*' failed|TypeError|Cannot read prop/.test(message));
  expect(failed).toEqual([]);
  const shown = [...client.all('window/showMessage'), ...client.all('window/showMessageRequest')].map((params) => params.message as string);
  expect(shown.filter((message) => CRASH.test(message))).toEqual([]);
  const progress = client.all('$/progress').map((params) => JSON.stringify(params.value));
  expect(progress.filter((value) => CRASH.test(value))).toEqual([]);
  expect(client.stderr).not.toMatch(/TypeError|ReferenceError|RangeError/);
  expect((await client.request('buckley/status', {})).server.name).toBe('buckley-lsp');
}
