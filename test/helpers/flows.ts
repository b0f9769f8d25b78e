/**
 * The bridge's features assembled in-process (services.ts, as the server assembles them) with a
 * fake editor and a fake coordinator session: the flows tested without a process, in milliseconds.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ClientCapabilities } from 'vscode-languageserver';
import { afterAll } from 'vitest';
import { negotiate } from '../../src/bridge/capabilities.js';
import { createServices, type Services } from '../../src/bridge/services.js';
import { configSchema, type Config } from '../../src/config.js';
import { RootLogger } from '../../src/logger.js';
import { FakeEditor } from './fakeEditor.js';
import { FakeSession } from './fakeSession.js';

/** What the editor can do, as its `initialize` says. */
export const EDITORS = {
  /** Opted in to buckley/approveTool and $/buckley/taskProgress (the Neovim module). */
  optedIn: { window: { showMessage: {}, showDocument: { support: true }, workDoneProgress: true }, workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } }, experimental: { buckley: { approveTool: true, taskProgress: true } } },
  /** Prompts (window/showMessageRequest), no opt-in. */
  prompts: { window: { showMessage: {}, showDocument: { support: true } }, workspace: { applyEdit: true, workspaceEdit: { documentChanges: true } } },
  /** No prompts: approvals through diagnostics and code actions (as eglot 1.9). */
  codeActions: { textDocument: { codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: [''] } } } }, workspace: { applyEdit: true } },
} satisfies Record<string, ClientCapabilities>;

export interface Flows {
  editor: FakeEditor;
  session: FakeSession;
  services: Services;
  config: Config;
  /** The workspace folder, and a file in it. */
  root: string;
  file(name: string): { path: string; uri: string };
}

/** The flows' folders, removed once the file's tests are done. */
const bases: string[] = [];
afterAll(() => {
  for (const base of bases.splice(0)) rmSync(base, { recursive: true, force: true });
});

export function startFlows(options: { capabilities?: ClientCapabilities; settings?: Record<string, unknown> } = {}): Flows {
  const editor = new FakeEditor();
  const session = new FakeSession();
  const base = mkdtempSync(join(tmpdir(), 'buckley-flows-'));
  bases.push(base);
  const root = join(base, 'workspace');
  mkdirSync(root);
  const config = configSchema.parse(options.settings ?? {});
  const features = negotiate({ initialize: { capabilities: options.capabilities ?? EDITORS.optedIn }, config, coordinator: session.features });
  const logger = new RootLogger('debug', () => undefined);
  const services = createServices({
    editor,
    logger,
    stateDir: join(base, 'state'),
    documentEvents: editor.events,
    flushDocuments: () => undefined,
    config: () => config,
    features: () => features,
    workspaceRoots: () => [pathToFileURL(root).href],
    coordinator: async () => session,
  });
  // A waiter looking at the calls the coordinator got is checked when one arrives.
  session.onCall = () => editor.wake();
  // As Neovim does: a document the server shows is opened in a buffer.
  editor.respond('window/showDocument', (params) => {
    const { uri } = params as { uri: string };
    if (editor.text(uri) === undefined) editor.open(uri, readFileSync(new URL(uri), 'utf8'), 'markdown');
    return { success: true };
  });
  return {
    editor,
    session,
    services,
    config,
    root,
    file: (name) => ({ path: join(root, name), uri: pathToFileURL(join(root, name)).href }),
  };
}
