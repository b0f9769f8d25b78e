/**
 * One `session/prompt` of the ACP face: the prompt's words and attached files as an ask or a task
 * on the coordinator (by the session's mode), what it does streamed to the panel as it goes, each
 * approval it waits for put to the user with our risk in words — or decided by
 * `approvals.autoApprove`, never past it — and its end as the prompt's stop reason, or its failure
 * in words.
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { RequestError, type ContentBlock, type PromptResponse } from '@agentclientprotocol/sdk';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { allowedByPolicy, judgeApproval } from '../risk/approvalRisk.js';
import { AGENT_MODE_KEY, BUDGET_KEY, WORKSPACE_KEY, type DocumentSnapshot, type EditorContext, type TaskEvent } from '../wire/contract.js';
import type { CoordinatorSession, EditorFiles } from '../bridge/link/calls.js';
import type { Panel } from './panel.js';
import { permissionOf, ShownTools, statusLineOf, updatesOf } from './updates.js';
import { questionsOf } from './questions.js';
import { panelTerminals } from './terminals.js';
import { agentModeOf, type FaceMode } from './modes.js';
import { imageDocument, imageName, imagesOf, MAX_PROMPT_IMAGE_BYTES, withinImageBound, type PromptImage } from '../wire/images.js';
import { FEATURE } from '../wire/features.js';
import { languageOf } from '../uri.js';

export interface FaceSession {
  id: string;
  /** Its workspace (absolute): what a task may write. */
  cwd: string;
  /** `task` (or `task:<the agent's mode>`): the agent works, asking before each change; `ask`: it only reads. */
  mode: FaceMode;
  /** The turn running, to cancel. */
  turn?: AbortController;
  /** Opened again (session/load, session/resume): the agent behind may no longer hold it. */
  reopened?: boolean;
  /** The commands and options the panel was last told of (JSON). */
  told?: string;
}

export interface TurnDeps {
  coordinator: CoordinatorSession;
  panel: Panel;
  config: Config;
  logger: Logger;
}

/** JSON-RPC's code for a request that failed on our side: its message says why, in words. */
const FAILED = -32603;

/** The prompt's stop reason; once it completed, the question and its answer (for the session's history). */
export interface TurnEnd {
  response: PromptResponse;
  answered?: { question: string; answer: string };
}

/** How long a line about a turn not yet under way waits to be shown: one that something follows sooner was no wait (the agent started at once). */
const WAIT_SHOWN_MS = 800;

/**
 * The coordinator's lines about a turn not yet under way, shown only while it waits on them —
 * queued, an agent slow to start: in the panel they are lines of thinking (ACP has no status
 * line), and one on every turn ("Starting Claude Code…") is noise.
 */
class WaitingLine {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly show: (line: string) => void) {}

  say(line: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.show(line), WAIT_SHOWN_MS);
    this.timer.unref();
  }

  /** Something else came: the line was no wait. */
  overtaken(): void {
    clearTimeout(this.timer);
  }
}

export async function runTurn(deps: TurnDeps, session: FaceSession, prompt: ContentBlock[], signal: AbortSignal, earlier?: string): Promise<TurnEnd> {
  const { coordinator, panel, config } = deps;
  const request = requestOf(prompt, session.cwd, coordinator.features.includes(FEATURE.promptImages));
  const { context, leftOut } = request;
  if (!request.query.trim() && !imagesOf(context).length) throw RequestError.invalidParams(undefined, 'the prompt has no words to act on');
  // A picture pasted alone is the question (a task's query is never empty on the wire).
  const query = request.query.trim() ? request.query : '(the prompt is the image attached)';
  // The files it carries, within the user's budget (as the editor's context is).
  context.metadata[BUDGET_KEY] = String(config.context.maxBytes);
  const mode = agentModeOf(session.mode);
  if (mode) context.metadata[AGENT_MODE_KEY] = mode;
  const tools = new ShownTools();
  for (const words of leftOut) for (const update of tools.statusLine(words)) panel.update(session.id, update);
  const waiting = new WaitingLine((line) => {
    for (const update of tools.statusLine(line)) panel.update(session.id, update);
  });
  const ask = session.mode === 'ask';
  // A permission still put to the user when the turn ends (a timeout, a failure) is withdrawn.
  const over = new AbortController();
  const asking = AbortSignal.any([signal, over.signal]);
  // The agent's commands in the client's terminals, where it has them and the coordinator is ours, here.
  const terminals = panel.terminal && !config.coordinator.address ? panelTerminals({ ...panel, terminal: panel.terminal }, session.id, asking) : undefined;
  const outcome = await coordinator.runTask({
    taskId: randomUUID(),
    query,
    context,
    signal,
    intent: ask ? 'ask' : 'task',
    timeoutMs: ask ? config.ask.timeoutMs : config.task.timeoutMs,
    timeoutSetting: ask ? 'ask.timeoutMs' : 'task.timeoutMs',
    // The ACP session is the conversation: the agent behind keeps one session for it.
    conversation: session.id,
    // A session loaded after a restart: its earlier turns, for an agent that no longer holds it.
    ...(earlier ? { earlier } : {}),
    ...(panel.readFile || panel.writeFile ? { files: filesOf(panel, session.id) } : {}),
    questions: questionsOf(panel, session.id, deps.logger),
    ...(terminals ? { terminals } : {}),
    onDelta: (delta) => {
      waiting.overtaken();
      panel.update(session.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: delta } });
    },
    onEvent: (event) => {
      const updates = updatesOf(event, tools);
      const line = statusLineOf(event);
      // A line of a task not yet under way (starting, queued) is a wait; one of a task under way is news (an agent's notice, a failover).
      if (line && event.status === 'pending') waiting.say(line);
      else if (line || updates.length || event.answer_delta) waiting.overtaken();
      if (line && event.status !== 'pending') for (const update of tools.statusLine(line)) panel.update(session.id, update);
      for (const update of updates) panel.update(session.id, update);
      if (event.status === 'awaiting_approval' && event.approval) void decide(deps, session, event.approval, asking);
    },
  }).finally(() => {
    waiting.overtaken();
    over.abort();
    void terminals?.close();
  });
  if (outcome.status === 'cancelled') return { response: { stopReason: 'cancelled' } };
  if (outcome.status === 'failed') throw new RequestError(FAILED, outcome.failure.message);
  // A coordinator that sends no answer, only what it did (Buckley's status lines): shown as its report.
  const report = !outcome.answer && outcome.report?.length ? outcome.report.join('\n') : '';
  if (report) panel.update(session.id, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: report } });
  return { response: { stopReason: 'end_turn' }, answered: { question: keptQuestion(request.query, prompt), answer: outcome.answer || report } };
}

/** The prompt as the session's history keeps it: its words, and what it carried by name (a replay has no bytes). */
function keptQuestion(words: string, prompt: ContentBlock[]): string {
  const carried = prompt.flatMap((block) => {
    if (block.type === 'image') return [imageName({ mimeType: block.mimeType, data: '', ...(block.uri ? { uri: block.uri } : {}) })];
    if (block.type === 'resource') return [block.resource.uri.split('/').pop() || block.resource.uri];
    return [];
  });
  return [words.trim() ? words : '', carried.length ? `(attached: ${carried.join(', ')})` : ''].filter(Boolean).join('\n');
}

/** An approval the coordinator waits for: by the policy where it allows it, else the user's choice; denied when nobody chose. */
async function decide(deps: TurnDeps, session: FaceSession, approval: NonNullable<TaskEvent['approval']>, signal: AbortSignal): Promise<void> {
  const judged = judgeApproval(approval, session.cwd);
  const byPolicy = allowedByPolicy(judged, deps.config.approvals.autoApprove);
  const chosen = byPolicy ? 'allow' : await deps.panel.askPermission(permissionOf(session.id, { ...approval, risk: judged.risk, reason: judged.reason }), signal);
  const approved = chosen === 'allow';
  // The call asked about keeps its own title once decided (the question put its risk there).
  if (approval.tool_call_id) deps.panel.update(session.id, { sessionUpdate: 'tool_call_update', toolCallId: approval.tool_call_id, title: approval.title || approval.tool });
  deps.logger.info(`${approval.tool} (${judged.risk}): ${approved ? 'approved' : 'denied'} ${byPolicy ? `by approvals.autoApprove = ${deps.config.approvals.autoApprove}` : chosen ? 'by the user' : '(not answered)'}`);
  await deps.coordinator.decideApproval(approval.execution_id, { approved, ...(chosen ? {} : { reason: 'the user did not answer' }) }).catch((error: unknown) => {
    // The turn ended meanwhile: the coordinator dropped the approval.
    if (!signal.aborted) deps.logger.warn(`the decision on ${approval.tool} did not reach the coordinator: ${(error as Error).message}`);
  });
}

/** The client's files, as the coordinator's requests for the editor's buffers and writes reach them. */
function filesOf(panel: Panel, sessionId: string): EditorFiles {
  return {
    buffer: async (path) => {
      if (!panel.readFile) return undefined;
      // A file the client cannot give (not there): the coordinator reads the disk, and says why not.
      const text = await panel.readFile(sessionId, path).catch(() => undefined);
      return text === undefined ? undefined : { text, version: 0 };
    },
    write: async (write) => {
      if (!panel.writeFile) return { open: false, applied: false, message: '' };
      await panel.writeFile(sessionId, write.path, write.content);
      return { open: true, applied: true, message: `written by the client` };
    },
  };
}

/** What a prompt asks: its words, the files it carries (embedded resources) as the editor context, and what of it the agent is not given (in words). */
export interface PromptRequest {
  query: string;
  context: EditorContext;
  leftOut: string[];
}

/**
 * The prompt's words, its files as the editor context, and its images — where the coordinator
 * takes them (`takesImages`), within the prompt's bound. What cannot be given (audio, a binary
 * file, an image past the bound or to a coordinator that takes none) is said in `leftOut`.
 */
export function requestOf(prompt: ContentBlock[], cwd: string, takesImages = false): PromptRequest {
  const words: string[] = [];
  const documents: DocumentSnapshot[] = [];
  const images: PromptImage[] = [];
  const leftOut: string[] = [];
  const workspace = pathToFileURL(cwd).href;
  for (const block of prompt) {
    if (block.type === 'text') words.push(block.text);
    else if (block.type === 'resource_link') words.push(`(attached: ${block.uri})`);
    else if (block.type === 'image') images.push({ mimeType: block.mimeType, data: block.data, ...(block.uri ? { uri: block.uri } : {}) });
    else if (block.type === 'resource' && 'text' in block.resource) {
      const { uri, text } = block.resource;
      documents.push({ uri, language_id: languageOf(uri), content: text, version: 0, workspace_root: workspace, metadata: {} });
    } else if (block.type === 'resource' && 'blob' in block.resource && block.resource.mimeType?.startsWith('image/')) {
      images.push({ mimeType: block.resource.mimeType, data: block.resource.blob, uri: block.resource.uri });
    } else if (block.type === 'resource') leftOut.push(`${block.resource.uri} left out: the agent is given text files and images, not this one's bytes`);
    else leftOut.push('the audio left out: the agent is given text and images');
  }
  const kept = takesImages ? withinImageBound(images) : { kept: [], leftOut: 0 };
  if (!takesImages && images.length) leftOut.push(`${images.map(imageName).join(', ')} left out: the coordinator behind takes no images`);
  if (kept.leftOut) leftOut.push(`${kept.leftOut} image(s) left out: a prompt carries at most ${MAX_PROMPT_IMAGE_BYTES / 1024 / 1024} MB of images`);
  const [document, ...related] = documents;
  return {
    query: words.join('\n'),
    context: { ...(document ? { document } : {}), related_documents: [...related, ...kept.kept.map((image) => imageDocument(image, workspace))], symbols: [], metadata: { [WORKSPACE_KEY]: workspace } },
    leftOut,
  };
}

