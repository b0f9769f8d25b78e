/**
 * The bridge's features, assembled: the stores (answers, conversations, trust), the editor's
 * documents, and the flows (asks, tasks, approvals, edits, completions), each given the editor
 * as an `EditorClient` and the coordinator as a `CoordinatorSession`. The server binds LSP
 * methods to them; the in-process flow tests assemble the same with a fake editor and session.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TextDocuments } from 'vscode-languageserver';
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { Features } from './capabilities.js';
import type { Config } from '../config.js';
import type { RootLogger } from '../logger.js';
import { canonicalUri, pathOfUri } from '../uri.js';
import type { EditorClient } from './editor/client.js';
import { Limiter } from './editor/limits.js';
import { ProgressFactory } from './editor/progress.js';
import type { CoordinatorSession, EditorFiles } from './link/calls.js';
import { AgentEdits } from './flows/agentEdits.js';
import { ApprovalService } from './flows/approvals.js';
import { AgentControlsService } from './flows/agentControls.js';
import { AgentQuestions } from './flows/questions.js';
import { HunkReview } from './flows/hunkReview.js';
import { DiagnosticsBoard } from './editor/diagnostics.js';
import { AskService } from './flows/ask.js';
import { InlineCompletions } from './flows/completions.js';
import { EditRoute } from './flows/editRoute.js';
import { Proposals } from './flows/proposals.js';
import { Targets } from './flows/target.js';
import { TaskEdits } from './flows/taskEdits.js';
import { TaskService } from './flows/tasks.js';
import { UsageTally } from './flows/usage.js';
import { WatchService } from './flows/watch.js';
import { Answers } from './stores/answers.js';
import { Conversations } from './stores/conversations.js';
import { TrustStore } from './stores/trust.js';

export interface ServicesInput {
  editor: EditorClient;
  logger: RootLogger;
  /** Where answers, conversations, trust and changes under review are kept. */
  stateDir: string;
  /** The editor's document notifications, as TextDocuments listens to them (documentSync.ts). */
  documentEvents: Parameters<TextDocuments<TextDocument>['listen']>[0];
  /** Applies changes held for their turn (documentSync.ts): called before a document is read. */
  flushDocuments(): void;
  config(): Config;
  features(): Features;
  /** The workspace folders, as URIs. */
  workspaceRoots(): string[];
  coordinator(): Promise<CoordinatorSession>;
}

export type Services = ReturnType<typeof createServices>;

export function createServices(input: ServicesInput) {
  const { editor, logger, stateDir, config, features, coordinator } = input;
  const workspaceRoot = () => pathOfUri(input.workspaceRoots()[0]);
  let answers!: Answers;
  let review!: HunkReview;
  const documents = new TextDocuments({
    create: TextDocument.create,
    update(document, changes, version) {
      answers.documentChanged(document.uri, changes);
      review.documentChanged(pathOfUri(document.uri));
      return TextDocument.update(document, changes, version);
    },
  });
  /** The open document at a URI, with every change the editor sent applied. */
  const openDocument = (uri: string): TextDocument | undefined => {
    input.flushDocuments();
    return documents.get(canonicalUri(uri));
  };
  const documentAt = (path: string) => openDocument(pathToFileURL(path).href);
  answers = new Answers(editor, stateDir, logger.child('answers'), join(stateDir, 'answers'), input.workspaceRoots, openDocument);
  const conversations = new Conversations(stateDir, logger.child('conversations'));
  const trust = new TrustStore(join(stateDir, 'trust.json'), logger.child('trust'));
  const progress = new ProgressFactory(editor, logger.child('progress'));
  const diagnostics = new DiagnosticsBoard(editor);
  const agentEdits = new AgentEdits(editor, documentAt, features, logger.child('edits'), join(stateDir, 'changes'));
  const targets = new Targets(documents, input.workspaceRoots, logger.child('context'), savedVersions(documents));
  const limiter = new Limiter(() => config().limits.maxConcurrent);
  const files: EditorFiles = {
    buffer: (path) => {
      const document = documentAt(path);
      return document && { text: document.getText(), version: document.version };
    },
    write: (write) => agentEdits.apply(write),
  };
  const usage = new UsageTally();
  const controls = new AgentControlsService({ editor, features, coordinator, logger: logger.child('agent') });
  // After each turn: the agent's commands may have come with its session.
  const turnEnded = () => void controls.refresh();
  const questions = new AgentQuestions({ editor, features, logger: logger.child('agent') });
  const common = { editor, config, features, targets, answers, progress, limiter, coordinator, files, questions, usage, turnEnded };
  // A task's conversation is followed up as a task (in its agent session, which may change files).
  let tasks!: TaskService;
  const asks = new AskService({ ...common, logger: logger.child('ask'), conversations, openText: (uri) => documents.get(canonicalUri(uri))?.getText(), continueTask: (input) => tasks.start(input) });
  const approvals = new ApprovalService({
    editor,
    documents,
    trust,
    logger: logger.child('approvals'),
    config,
    features,
    workspaceRoot,
    showChange: (executionId, diff) => agentEdits.showChange(executionId, diff),
    diagnostics,
  });
  const taskEdits = new TaskEdits(agentEdits, workspaceRoot, logger.child('edits'), (conversation, lines) => conversations.noteUndone(conversation, lines));
  review = new HunkReview({ edits: taskEdits, agentEdits, diagnostics, documentAt, workspaceRoot, logger: logger.child('review') });
  tasks = new TaskService({ ...common, edits: taskEdits, review, approvals, conversations, logger: logger.child('task') });
  const proposals = new Proposals({ editor, approvals, agentEdits, targets, logger: logger.child('edit'), config, documentAt: openDocument });
  const edits = new EditRoute({ editor, coordinator, tasks, proposals });
  const completions = new InlineCompletions({ documents, config, features, coordinator, logger: logger.child('completions') });
  const watch = new WatchService({ editor, progress, answers, config, features, coordinator, logger: logger.child('watch'), ownTasks: () => new Set(tasks.running().map((task) => task.id)) });
  documents.listen(input.documentEvents);
  return { documents, openDocument, documentAt, answers, conversations, trust, progress, agentEdits, asks, approvals, taskEdits, review, tasks, edits, completions, usage, controls, questions, watch, logger };
}

/** Whether a buffer has edits its editor has not saved: its version moved since it was opened or last saved. */
function savedVersions(documents: TextDocuments<TextDocument>): (document: TextDocument) => boolean {
  const saved = new Map<string, number>();
  documents.onDidOpen(({ document }) => saved.set(document.uri, document.version));
  documents.onDidSave(({ document }) => saved.set(document.uri, document.version));
  documents.onDidClose(({ document }) => saved.delete(document.uri));
  return (document) => saved.has(document.uri) && saved.get(document.uri) !== document.version;
}

/** Ends the work in flight (asks, tasks, completions) and saves what must outlive the process. */
export function endWork(services: Services): void {
  services.asks.cancelAll();
  services.tasks.cancelAll();
  services.completions.cancelAll();
  services.watch.cancelAll();
  saveState(services);
}

/** Answers and conversations saved, whatever ends the process (`exit` exits at once). */
export function saveState(services: Pick<Services, 'answers' | 'conversations' | 'logger'>): void {
  try {
    services.answers.saveSync();
    services.conversations.saveSync();
  } catch (error) {
    services.logger.warn(`could not save the answers: ${(error as Error).message}`);
  }
}
