/**
 * What a request is about: the document (found by URI, or by a path as Helix's %{buffer_name}
 * gives it), the selection (a range, or the selected text located in the document), and the
 * editor context built from them within the budget. Shared by asks and tasks.
 */
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ErrorCodes, ResponseError, type Range, type TextDocuments } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { canonicalUri, languageOf, pathOfUri } from '../../uri.js';
import { readFileBounded, unreadableWhy } from '../../fileAccess.js';
import { MAX_READ_BYTES } from '../../wire/contract.js';
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

  /**
   * Resolves the input and builds its context. A file the editor has not opened (or not yet: a
   * command run as the editor starts the server) is read from disk; a URI that is neither open
   * nor a readable file is an InvalidParams error.
   */
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
    if (!input.uri) return {};
    const document = this.find(input.uri) ?? this.fromDisk(input.uri);
    if (input.range) return { document, range: normalizeRange(document, input.range) };
    if (input.text) {
      const offset = document.getText().indexOf(input.text);
      if (offset !== -1) return { document, range: { start: document.positionAt(offset), end: document.positionAt(offset + input.text.length) } };
    }
    return { document };
  }

  /** The file at a URI or path the editor has not opened, as it is on disk; what stands in the way, said. */
  private fromDisk(uriOrPath: string): TextDocument {
    const hasScheme = /^[a-z][a-z0-9+.-]*:/i.test(uriOrPath) && !isAbsolute(uriOrPath);
    const root = this.workspaceRoots()[0];
    const path = hasScheme ? pathOfUri(uriOrPath) : isAbsolute(uriOrPath) ? uriOrPath : resolve(root ? fileURLToPath(root) : process.cwd(), uriOrPath);
    if (path === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `${uriOrPath} is not open in the editor; open it first or leave out the uri`);
    let text: string;
    try {
      text = readFileBounded(path, MAX_READ_BYTES).toString('utf8');
    } catch (error) {
      throw new ResponseError(ErrorCodes.InvalidParams, `${uriOrPath} is not open in the editor and cannot be read from disk (${unreadableWhy(error)}); open it first or leave out the uri`);
    }
    return TextDocument.create(canonicalUri(pathToFileURL(path).href), languageOf(path), 0, text);
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
