/**
 * A terminal editor in tmux, as a user sees it: keys sent with send-keys, the screen read back
 * with capture-pane; with BUCKLEY_PICTURES_DIR (`npm run pictures`) a test also keeps the screen
 * it checked, colours and all, for the docs' pictures (scripts/pictures.mjs).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * tmux, with a server of its own per session: when the last session of a shared server is killed,
 * the server exits in the background, and a new session started meanwhile fails ("server exited
 * unexpectedly").
 */
export const tmux = (session: string, ...args: string[]) => execFileSync('tmux', ['-L', session, ...args], { encoding: 'utf8' });
export const screen = (session: string) => tmux(session, 'capture-pane', '-p', '-t', session);
export const keys = (session: string, ...sent: string[]) => void tmux(session, 'send-keys', '-t', session, ...sent);

/** Sessions started, to end after each test. */
const sessions: string[] = [];

/** Starts `command` (a shell line) in a session of its own, `columns` × `rows`. */
export function startSession(name: string, command: string, columns = 160, rows = 45, cwd?: string): string {
  const session = `buckley-${name}-${process.pid}`;
  sessions.push(session);
  tmux(session, 'new-session', '-d', '-s', session, '-x', String(columns), '-y', String(rows), ...(cwd ? ['-c', cwd] : []), command);
  return session;
}

export function endSessions(): void {
  for (const session of sessions.splice(0)) spawnSync('tmux', ['-L', session, 'kill-server']);
}

/** Waits until the screen shows `text` (editors draw asynchronously); fails with the screen. */
export async function waitForScreen(session: string, text: string | RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const shows = (captured: string) => (typeof text === 'string' ? captured.includes(text) : text.test(captured));
  let last = '';
  let before = '';
  let shown = 0;
  while (Date.now() < deadline) {
    last = screen(session);
    shown = shows(last) ? shown + 1 : 0;
    // Shown, and drawn: the same in two captures in a row (or shown in three, where a spinner moves).
    // A screen caught mid-redraw shows only part of what is there, and the test reads the rest of it.
    if (shown > 0 && (last === before || shown >= 3)) return last;
    before = last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the screen never showed ${text}; it shows:\n${last}`);
}

/** With BUCKLEY_PICTURES_DIR: the screen as it is, for the docs' picture `name`. */
export function picture(session: string, name: string, title: string): void {
  const dir = process.env.BUCKLEY_PICTURES_DIR;
  if (!dir) return;
  writeFileSync(join(dir, `${name}.ansi`), tmux(session, 'capture-pane', '-e', '-p', '-t', session));
  writeFileSync(join(dir, `${name}.title`), title);
}
