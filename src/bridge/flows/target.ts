/**
 * What a request is about: the document (found by URI, or by a path as Helix's %{buffer_name}
 * gives it), the selection (a range, or the selected text located in the document), and the
 * editor context built from them within the budget. Shared by asks and tasks.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ErrorCodes, ResponseError, type Range, type TextDocuments } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { canonicalUri } from '../../uri.js';
import { buildContext, normalizeRange, type BuiltContext } from './context.js';
import { utf8Length } from '../../text.js';
import { OPEN_FILES_KEY, type OpenFile } from '../../wire/openFiles.js';

/** What the prompt says besides the question and the context (see wire/prompt.ts), counted generously. */
const PROMPT_INSTRUCTIONS_BYTES = 256;
/** Open files named for the agent's editor tools; beyond them they are left out. */
const MAX_OPEN_FILES = 200;

export interface TargetInput {
  /** A URI, or a path (absolute or relative to the workspace). */
  uri?: string;
  range?: Range;
  /** The selected text, when the client sends text rather than a range. */
  text?: string;
  /** The related documents to send; all open documents when absent. */
  openFiles?: string[];
}

export interface Target {
  document?: TextDocument;
  range?: Range;
  built: BuiltContext;
}

export class Targets {
  constructor(
    private readonly documents: TextDocuments<TextDocument>,
    private readonly workspaceRoots: () => string[],
    private readonly logger: Logger,
    /** Whether the editor's buffer has edits it has not saved. */
    private readonly unsaved: (document: TextDocument) => boolean = () => false,
  ) {}

  /** Resolves the input and builds its context; a URI that is not open is an InvalidParams error. */
  resolve(input: TargetInput, config: Config, what: string, otherBytes = 0): Target {
    const { document, range } = this.locate(input);
    const built = buildContext({
      // The question, the instructions around it (and a follow-up's earlier turns) are part of what the agent receives.
      reservedBytes: utf8Length(what) + PROMPT_INSTRUCTIONS_BYTES + otherBytes,
      active: document,
      selection: range,
      selectedText: document ? undefined : input.text,
      related: config.context.includeOpenDocuments ? this.related(input.openFiles) : [],
      workspaceRoots: this.workspaceRoots(),
      maxBytes: config.context.maxBytes,
    });
    if (built.leftOut.length) this.logger.info(`context for "${what}": ${built.leftOut.join('; ')}`);
    // Not the prompt's: what the agent's editor tools (our MCP server) say is open.
    built.context.metadata[OPEN_FILES_KEY] = JSON.stringify(this.openFiles());
    return { document, range, built };
  }

  /** The open document at a URI or path, if the editor has it open. */
  isOpen(uriOrPath: string): boolean {
    return this.find(uriOrPath) !== undefined;
  }

  private locate(input: TargetInput): { document?: TextDocument; range?: Range } {
    const document = input.uri ? this.find(input.uri) : undefined;
    if (input.uri && !document) {
      throw new ResponseError(ErrorCodes.InvalidParams, `${input.uri} is not open in the editor; open it first or leave out the uri`);
    }
    if (!document) return {};
    if (input.range) return { document, range: normalizeRange(document, input.range) };
    if (input.text) {
      const offset = document.getText().indexOf(input.text);
      if (offset !== -1) return { document, range: { start: document.positionAt(offset), end: document.positionAt(offset + input.text.length) } };
    }
    return { document };
  }

  private find(uriOrPath: string): TextDocument | undefined {
    const direct = this.documents.get(canonicalUri(uriOrPath));
    if (direct) return direct;
    if (/^[a-z][a-z0-9+.-]*:/i.test(uriOrPath) && !isAbsolute(uriOrPath)) return undefined;
    for (const root of [...this.workspaceRoots(), undefined]) {
      const base = root ? fileURLToPath(root) : process.cwd();
      const found = this.documents.get(pathToFileURL(isAbsolute(uriOrPath) ? uriOrPath : resolve(base, uriOrPath)).href);
      if (found) return found;
    }
    return undefined;
  }

  /** The workspace's files open in the editor, with whether their buffer has unsaved edits. */
  private openFiles(): OpenFile[] {
    return this.related(undefined)
      .filter((doc) => doc.uri.startsWith('file:'))
      .slice(0, MAX_OPEN_FILES)
      .map((doc) => ({ path: fileURLToPath(doc.uri), language: doc.languageId, unsaved: this.unsaved(doc) }));
  }

  /**
   * Related documents: open in the editor (never read from disk) and inside the workspace, so a
   * file opened from elsewhere (~/.ssh/config, another project) is not sent along unasked.
   */
  private related(openFiles: string[] | undefined): TextDocument[] {
    const open = openFiles
      ? openFiles.map((uri) => this.documents.get(canonicalUri(uri))).filter((doc): doc is TextDocument => doc !== undefined)
      : this.documents.all();
    const roots = this.workspaceRoots().map((root) => (root.endsWith('/') ? root : `${root}/`));
    if (roots.length === 0) return open;
    return open.filter((doc) => roots.some((root) => doc.uri.startsWith(root)));
  }
}
