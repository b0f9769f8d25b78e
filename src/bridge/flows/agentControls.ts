/**
 * The agent's own controls, in every editor: its models ("Buckley: choose model" — a prompt
 * where the editor has one, a code action per model where it has none, as in Helix), its slash
 * commands (completed after `/` in an answer document; a question starting `/name` runs it), its
 * modes; all of it in `buckley/status`. What the agent offers is asked of the coordinator
 * (GetAgentControls) and kept: refreshed after each turn, so completions never wait on it.
 */
import { CompletionItemKind, InsertTextFormat, MessageType, ShowMessageRequest, type CancellationToken, type Command, type CompletionItem, type Position } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Logger } from '../../logger.js';
import { oneLine } from '../../text.js';
import type { AgentControls } from '../../wire/contract.js';
import type { Features } from '../capabilities.js';
import type { EditorClient } from '../editor/client.js';
import * as messages from '../editor/messages.js';
import type { CoordinatorSession, Outcome } from '../link/calls.js';
import { Commands } from '../names.js';

/** How long asking what the agent offers may take: starting it included (the coordinator's own deadline is 60 s). */
const CONTROLS_TIMEOUT_MS = 70_000;
/** How long a status or a completion waits for what the agent offers to be asked again. */
const STATUS_WAIT_MS = 2_000;
const COMPLETION_WAIT_MS = 1_000;
/** How long the user may take to choose a model in the editor's prompt. */
const CHOOSE_TIMEOUT_MS = 10 * 60_000;

export interface ControlsDependencies {
  editor: EditorClient;
  features(): Features;
  coordinator(): Promise<CoordinatorSession>;
  logger: Logger;
}

export class AgentControlsService {
  private latest: AgentControls | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly deps: ControlsDependencies) {}

  /** What the agent was last known to offer (nothing is asked). */
  known(): AgentControls | undefined {
    return this.latest;
  }

  /** Asks again what the agent offers, in the background (after a turn: its commands may have come). */
  refresh(): Promise<void> {
    this.refreshing ??= this.ask(false)
      .then((outcome) => {
        if (outcome.status === 'completed') this.latest = outcome.controls;
        else if (outcome.status === 'failed') this.deps.logger.debug(`what the agent offers: ${outcome.failure.message}`);
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * "Buckley: choose model": `model` (an id or name) is used at once; without it the user chooses
   * from what the agent offers (the agent is started to find out), in a prompt where the editor
   * has one. Says what happened in the editor either way.
   */
  async chooseModel(model: string | undefined, token?: CancellationToken): Promise<{ model?: string; models: string[] }> {
    const { editor } = this.deps;
    if (model !== undefined) return this.useModel(model);
    const outcome = await this.ask(true);
    if (outcome.status !== 'completed') {
      if (outcome.status === 'failed') this.failed("cannot list the agent's models", outcome.failure.summary ?? outcome.failure.message);
      return { models: [] };
    }
    const controls = (this.latest = outcome.controls);
    const models = controls.models;
    if (!models.length) {
      messages.info(editor, messages.fit('', controls.agent || 'the agent', ' offers no models to choose from'));
      return { models: [] };
    }
    if (!this.deps.features().showMessageRequest) {
      messages.info(editor, messages.fit('model: ', nameOf(controls, controls.model), ' — code action "use model …" changes it'));
      return { models: models.map((choice) => choice.id) };
    }
    const actions = models.map((choice) => ({ title: `${choice.name || choice.id}${choice.id === controls.model ? ' (now)' : ''}`, id: choice.id }));
    const picked = await editor
      .request(ShowMessageRequest.type, { type: MessageType.Info, message: `Buckley: the model ${controls.agent} uses (now ${nameOf(controls, controls.model)})`, actions: actions.map(({ title }) => ({ title })) }, token ? { token } : { timeoutMs: CHOOSE_TIMEOUT_MS })
      .catch(() => null);
    const chosen = actions.find((action) => action.title === picked?.title);
    if (!chosen) return { models: models.map((choice) => choice.id) };
    return this.useModel(chosen.id);
  }

  /** The model's turns use from now on: said in the editor, or why not. */
  private async useModel(model: string): Promise<{ model?: string; models: string[] }> {
    const { editor } = this.deps;
    const outcome = await this.call({ discover: true, model });
    if (outcome.status !== 'completed') {
      if (outcome.status === 'failed') this.failed(`cannot use the model "${oneLine(model, 40)}"`, outcome.failure.summary ?? outcome.failure.message);
      return { models: this.latest?.models.map((choice) => choice.id) ?? [] };
    }
    const controls = (this.latest = outcome.controls);
    messages.info(editor, messages.fit('model: ', nameOf(controls, controls.model), ` from now on (${oneLine(controls.agent, 20)})`));
    return { model: controls.model, models: controls.models.map((choice) => choice.id) };
  }

  /**
   * Code actions for the models: in an editor with prompts, one that opens the choice; without
   * (Helix), one per model not in use. Only once the agent's models are known.
   */
  commands(): Command[] {
    const controls = this.latest;
    if (!controls?.models.length) return [];
    if (this.deps.features().showMessageRequest) return [{ title: `Buckley: choose model (now ${oneLine(nameOf(controls, controls.model), 30)})`, command: Commands.chooseModel, arguments: [] }];
    return controls.models
      .filter((choice) => choice.id !== controls.model)
      .map((choice) => ({ title: `Buckley: use model ${oneLine(choice.name || choice.id, 40)}`, command: Commands.chooseModel, arguments: [{ model: choice.id }] }));
  }

  /**
   * Completions of the agent's commands after `/` at the start of a line of an answer document
   * (where a follow-up is written): name, what it does, what to type after it.
   */
  async completions(document: TextDocument, position: Position): Promise<CompletionItem[]> {
    const before = document.getText({ start: { line: position.line, character: 0 }, end: position });
    const typed = /^\s*(\/[\w:.-]*)$/.exec(before)?.[1];
    if (!typed) return [];
    // What the last turn brought may be on its way (asked as it ended): worth a moment's wait.
    if (this.refreshing) await within(this.refreshing, COMPLETION_WAIT_MS);
    const commands = this.latest?.commands ?? [];
    if (!commands.length) return [];
    const range = { start: { line: position.line, character: position.character - typed.length }, end: position };
    return commands.map((command) => ({
      label: `/${command.name}`,
      kind: CompletionItemKind.Function,
      detail: command.hint ? `/${command.name} ${command.hint}` : undefined,
      documentation: command.description || undefined,
      filterText: `/${command.name}`,
      // The agent's words, never a snippet.
      insertTextFormat: InsertTextFormat.PlainText,
      textEdit: { range, newText: `/${command.name}${command.hint ? ' ' : ''}` },
    }));
  }

  /** `buckley/status`'s view of the agent: refreshed first when the coordinator is up, within a moment. */
  async forStatus(ready: boolean): Promise<AgentControls | undefined> {
    // Asked afresh (one in flight may have left before what the status should show came).
    const asked = this.ask(false).then((outcome) => {
      if (outcome.status === 'completed') this.latest = outcome.controls;
    });
    if (ready) await within(asked, STATUS_WAIT_MS);
    return this.latest;
  }

  /** A failure: its gist in the message (one line), all of it in the log. */
  private failed(what: string, why: string): void {
    this.deps.logger.warn(`${what}: ${why}`);
    messages.error(this.deps.editor, messages.fit(`${what}: `, why));
  }

  private ask(discover: boolean): Promise<Outcome<{ controls: AgentControls }>> {
    return this.call({ discover });
  }

  private async call(request: { discover: boolean; model?: string }): Promise<Outcome<{ controls: AgentControls }>> {
    try {
      const coordinator = await this.deps.coordinator();
      return await coordinator.agentControls({ ...request, signal: AbortSignal.timeout(CONTROLS_TIMEOUT_MS), timeoutMs: CONTROLS_TIMEOUT_MS });
    } catch (error) {
      return { status: 'failed', failure: { message: (error as Error).message } };
    }
  }
}

/** Waits for `work`, at most `ms`; never rejects. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** A model as the user knows it: its name, else its id. */
function nameOf(controls: AgentControls, id: string): string {
  if (!id) return "the agent's default model";
  return controls.models.find((choice) => choice.id === id)?.name || id;
}
