/**
 * The agent's own controls, in every editor: its models ("Buckley: choose model" — a prompt
 * where the editor has one, a code action per model where it has none, as in Helix), the mode its
 * tasks run in ("Buckley: choose mode", among those that ask first), its slash commands
 * (completed after `/` in an answer document; a question starting `/name` runs it); all of it in
 * `buckley/status`. What the agent offers is asked of the coordinator
 * (GetAgentControls) and kept: refreshed after each turn, so completions never wait on it.
 */
import { CompletionItemKind, InsertTextFormat, MessageType, ShowMessageRequest, type CancellationToken, type Command, type CompletionItem, type Position } from 'vscode-languageserver';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Logger } from '../../logger.js';
import { oneLine } from '../../text.js';
import type { AgentChoice, AgentControls } from '../../wire/contract.js';
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
    const { chosen, choices } = await this.choose(MODEL, model, token);
    return { ...(chosen ? { model: chosen } : {}), models: choices };
  }

  /** "Buckley: choose mode": as "choose model", for the mode tasks run in, among those that ask first. */
  async chooseMode(mode: string | undefined, token?: CancellationToken): Promise<{ mode?: string; modes: string[] }> {
    const { chosen, choices } = await this.choose(MODE, mode, token);
    return { ...(chosen ? { mode: chosen } : {}), modes: choices };
  }

  private async choose(kind: ChoiceKind, value: string | undefined, token?: CancellationToken): Promise<{ chosen?: string; choices: string[] }> {
    const { editor } = this.deps;
    if (value !== undefined) return this.use(kind, value);
    const outcome = await this.ask(true);
    if (outcome.status !== 'completed') {
      if (outcome.status === 'failed') this.failed(`cannot list the agent's ${kind.noun}s`, outcome.failure.summary ?? outcome.failure.message);
      return { choices: [] };
    }
    const controls = (this.latest = outcome.controls);
    const offered = kind.offered(controls);
    if (!offered.length) {
      messages.info(editor, messages.fit('', controls.agent || 'the agent', ` offers no ${kind.noun}s to choose from`));
      return { choices: [] };
    }
    const current = kind.current(controls);
    if (!this.deps.features().showMessageRequest) {
      messages.info(editor, messages.fit(`${kind.noun}: `, kind.nameOf(controls, current), ` — code action "${kind.useTitle('…').replace(/^Buckley: /, '')}" changes it`));
      return { choices: offered.map((choice) => choice.id) };
    }
    const actions = offered.map((choice) => ({ title: `${choice.name || choice.id}${choice.id === current ? ' (now)' : ''}`, id: choice.id }));
    const picked = await editor
      .request(ShowMessageRequest.type, { type: MessageType.Info, message: kind.question(controls), actions: actions.map(({ title }) => ({ title })) }, token ? { token } : { timeoutMs: CHOOSE_TIMEOUT_MS })
      .catch(() => null);
    const chosen = actions.find((action) => action.title === picked?.title);
    if (!chosen) return { choices: offered.map((choice) => choice.id) };
    return this.use(kind, chosen.id);
  }

  /** The model or mode used from now on: said in the editor, or why not. */
  private async use(kind: ChoiceKind, value: string): Promise<{ chosen?: string; choices: string[] }> {
    const { editor } = this.deps;
    const outcome = await this.call({ discover: true, [kind.noun]: value });
    if (outcome.status !== 'completed') {
      if (outcome.status === 'failed') this.failed(`cannot use the ${kind.noun} "${oneLine(value, 40)}"`, outcome.failure.summary ?? outcome.failure.message);
      return { choices: this.latest ? kind.offered(this.latest).map((choice) => choice.id) : [] };
    }
    const controls = (this.latest = outcome.controls);
    const current = kind.current(controls);
    messages.info(editor, messages.fit(kind.said, kind.nameOf(controls, current), ` from now on (${oneLine(controls.agent, 20)})`));
    return { chosen: current, choices: kind.offered(controls).map((choice) => choice.id) };
  }

  /**
   * Code actions for the models and modes: in an editor with prompts, one that opens each choice;
   * without (Helix), one per choice not in use. Only once what the agent offers is known.
   */
  commands(): Command[] {
    const controls = this.latest;
    if (!controls) return [];
    return [MODEL, MODE].flatMap((kind) => {
      const offered = kind.offered(controls);
      const current = kind.current(controls);
      // Nothing to choose: none offered, or the one in use is the only one.
      if (!offered.length || (offered.length === 1 && offered[0]!.id === current)) return [];
      if (this.deps.features().showMessageRequest) return [{ title: `Buckley: choose ${kind.noun} (now ${oneLine(kind.nameOf(controls, current), 30)})`, command: kind.command, arguments: [] }];
      return offered.filter((choice) => choice.id !== current).map((choice) => ({ title: kind.useTitle(oneLine(choice.name || choice.id, 40)), command: kind.command, arguments: [{ [kind.noun]: choice.id }] }));
    });
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

  private async call(request: { discover: boolean; model?: string; mode?: string }): Promise<Outcome<{ controls: AgentControls }>> {
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

/** What choosing a model and choosing a mode differ in. */
interface ChoiceKind {
  noun: 'model' | 'mode';
  command: string;
  /** What may be chosen. */
  offered(controls: AgentControls): AgentChoice[];
  /** The one in use. */
  current(controls: AgentControls): string;
  /** It as the user knows it: its name, else its id. */
  nameOf(controls: AgentControls, id: string): string;
  /** The prompt's words. */
  question(controls: AgentControls): string;
  /** What a choice made says first. */
  said: string;
  /** The code action for one choice, where the editor has no prompts. */
  useTitle(name: string): string;
}

const named = (choices: readonly AgentChoice[], id: string) => choices.find((choice) => choice.id === id)?.name || id;

const MODEL: ChoiceKind = {
  noun: 'model',
  command: Commands.chooseModel,
  offered: (controls) => controls.models,
  current: (controls) => controls.model,
  nameOf: (controls, id) => (id ? named(controls.models, id) : "the agent's default model"),
  question: (controls) => `Buckley: the model ${controls.agent} uses (now ${MODEL.nameOf(controls, controls.model)})`,
  said: 'model: ',
  useTitle: (name) => `Buckley: use model ${name}`,
};

/** Modes: only those a task may run in (they ask before the agent acts); asks keep the read-only one. */
const MODE: ChoiceKind = {
  noun: 'mode',
  command: Commands.chooseMode,
  offered: (controls) => controls.modes.filter((mode) => controls.task_modes.includes(mode.id)),
  current: (controls) => controls.task_mode,
  nameOf: (controls, id) => (id ? named(controls.modes, id) : "the agent's own mode"),
  question: (controls) => `Buckley: the mode ${controls.agent}'s tasks run in (now ${MODE.nameOf(controls, controls.task_mode)}; asks stay read-only)`,
  said: 'tasks in mode ',
  useTitle: (name) => `Buckley: tasks in mode ${name}`,
};
