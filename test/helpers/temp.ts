/**
 * Temporary directories for tests, all inside one directory per run (made and removed by
 * test/globalSetup.ts), so a run leaves nothing behind in the system's temporary directory —
 * whatever a test, a server or an editor wrote there, and whichever test forgot to clean up.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(process.env.BUCKLEY_TEST_TMP ?? tmpdir(), `${prefix}-`));
}
