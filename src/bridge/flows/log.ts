/**
 * `buckley.showLog`: opens the server's log file (see logFile.ts) in the editor, where it can
 * (`window/showDocument`), else says where it is. The one way to the log that works the same in
 * every editor, Helix included (it shows a server's log only when started with `hx -v`).
 */
import { pathToFileURL } from 'node:url';
import { showDocument, type EditorClient } from '../editor/client.js';
import type { Features } from '../capabilities.js';
import * as messages from '../editor/messages.js';

/** How long the editor may take to open the log. */
const SHOW_LOG_TIMEOUT_MS = 5_000;

export interface ShowLogResult {
  /** The log file, or null when the server writes none. */
  log: string | null;
  /** Whether the editor opened it. */
  opened: boolean;
}

export async function showLog(editor: EditorClient, features: Features, logFile: string | undefined): Promise<ShowLogResult> {
  if (!logFile) {
    messages.warn(editor, 'no log file: --log-file or BUCKLEY_LOG_FILE is off');
    return { log: null, opened: false };
  }
  if (features.opensDocuments) {
    if (await showDocument(editor, { uri: pathToFileURL(logFile).href, takeFocus: false }, SHOW_LOG_TIMEOUT_MS)) return { log: logFile, opened: true };
  }
  // The path is the message: it is not shortened (an editor without showDocument has no 60-cell stall).
  messages.info(editor, `log file: ${logFile}`, Number.MAX_SAFE_INTEGER);
  return { log: logFile, opened: false };
}
