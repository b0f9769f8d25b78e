/**
 * What an agent offers beyond its turns — its slash commands (`available_commands_update`), its
 * models and modes (`session/new`: `models`, or config options of category `model` / `mode`) —
 * and the model and mode its turns use: the ones chosen in the editor (SetAgentModel,
 * SetAgentMode; remembered per agent in the state directory's `agent-models.json`), else
 * `buckley.agent.model` / `buckley.agent.mode`, else the agent's own default model and the safety
 * rules' mode (modes.ts: a wanted mode holds a turn only where those rules allow it). Shared by
 * every process of one agent (pool.ts), so a choice holds for all of them.
 */
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { parseJson, readStateFileSync, writeFileAtomicSync } from '../../state.js';
import type { AgentControls } from '../../wire/contract.js';
import { choosableModes, chooseMode, findChoice, modeRefusal, type AgentMode, type ModeChoice, type SessionModes, type WantedMode } from './modes.js';
import { delay } from './acpProcess.js';
import type { AgentTurn } from './driver.js';

export interface AgentCommandInfo {
  name: string;
  description: string;
  hint: string;
}

/** The models a session offers, and how to change its model. */
export type SessionModels = SessionModes;

export interface ChoicesOptions {
  /** The agent as its remembered choice is keyed: its command line. */
  agent: string;
  /** `buckley.agent.model`. */
  setting?: string;
  /** `buckley.agent.mode`: the mode wanted, where the safety rules allow it. */
  modeSetting?: string;
  /** `buckley.agent.modes`: the modes asks and tasks run in, whatever they are. */
  modeSettings?: { ask?: string; task?: string };
  /** Where choices made in the editor are remembered; none: for this run only. */
  file?: string;
  logger: Logger;
}

/** How long a question that may be a command waits for the agent to list its commands. */
const COMMANDS_WAIT_MS = 1_000;

const savedSchema = z.object({ version: z.literal(1), models: z.record(z.string(), z.string()), modes: z.optional(z.record(z.string(), z.string())) });
type Saved = z.infer<typeof savedSchema>;

export class AgentChoices {
  /** The models and modes the latest session was offered. */
  private models: SessionModels | undefined;
  private modes: SessionModes | undefined;
  readonly commands = new Map<string, AgentCommandInfo>();
  /** The modes asks and tasks were last put in, and why (a change is logged once). */
  private readonly modesUsed: { ask?: ModeChoice; task?: ModeChoice } = {};
  private chosen: string | undefined;
  private chosenMode: string | undefined;
  /** The agent's ACP name, once it has said it (known agents' modes: modes.ts). */
  acpName: string | undefined;
  /** Settings already said to name a model the agent does not offer. */
  private readonly saidMissing = new Set<string>();

  constructor(private readonly options: ChoicesOptions) {
    const saved = this.remembered();
    this.chosen = saved?.models[options.agent];
    this.chosenMode = saved?.modes?.[options.agent];
  }

  /** The model wanted (an id or name, as given), and where it comes from. */
  wanted(): { model: string; source: string } | undefined {
    if (this.chosen) return { model: this.chosen, source: 'chosen in the editor' };
    if (this.options.setting) return { model: this.options.setting, source: 'buckley.agent.model' };
    return undefined;
  }

  /**
   * The prompt: the question with its context; a command the agent lists (`/review …`) alone, as
   * ACP has commands sent. A fresh session's commands come just after it is made: a question that
   * looks like one waits for them a moment.
   */
  async promptOf(turn: Pick<AgentTurn, 'prompt' | 'command'>): Promise<string> {
    const name = /^\/([\w:.-]+)/.exec(turn.command ?? '')?.[1];
    if (!name) return turn.prompt;
    for (let waited = 0; !this.commands.has(name) && waited < COMMANDS_WAIT_MS; waited += 100) await delay(100);
    return this.commands.has(name) ? turn.command! : turn.prompt;
  }

  /** The commands the agent lists now (`available_commands_update`); true when they changed. */
  setCommands(listed: readonly AgentCommandInfo[]): boolean {
    const before = JSON.stringify([...this.commands.values()]);
    this.commands.clear();
    for (const command of listed) this.commands.set(command.name, command);
    return JSON.stringify([...this.commands.values()]) !== before;
  }

  /** What a new session was offered. */
  offered(models: SessionModels | undefined, modes: SessionModes | undefined): void {
    if (models) this.models = models;
    if (modes) this.modes = modes;
  }

  /**
   * The offered model the turns should use: the wanted one, found by id or name; undefined (and
   * said once in the log) where the agent does not offer it, or where none is wanted.
   */
  modelFor(models: SessionModels): AgentMode | undefined {
    const wanted = this.wanted();
    if (!wanted) return undefined;
    const found = findChoice(models.available, wanted.model);
    if (!found && !this.saidMissing.has(wanted.model)) {
      this.saidMissing.add(wanted.model);
      this.options.logger.warn(`the model "${wanted.model}" (${wanted.source}) is not one the agent offers (it offers ${listed(models.available)}): it uses ${models.current ?? 'its default'}`);
    }
    return found;
  }

  /** Chooses the model for the turns from now on (and remembers it); an error in words where the agent does not offer it. */
  choose(value: string): { model: AgentMode } | { error: string } {
    const models = this.models;
    if (!models) return { error: 'the agent has not said which models it offers (it has not started, or offers none)' };
    const model = findChoice(models.available, value);
    if (!model) return { error: `the agent offers no model "${value}": it offers ${listed(models.available)}` };
    this.chosen = model.id;
    this.remember('models', model.id);
    return { model };
  }

  /**
   * Whether `buckley.agent.modes.<intent>` is set: the expert's word, which also leaves the
   * agent's switches that let tools run unasked as they are.
   */
  modeIsSet(readOnly: boolean): boolean {
    return Boolean(this.options.modeSettings?.[readOnly ? 'ask' : 'task']);
  }

  /** The mode wanted for the turns (an id or name, as given), and where it comes from. */
  wantedMode(): WantedMode | undefined {
    if (this.chosenMode) return { mode: this.chosenMode, source: 'chosen in the editor' };
    if (this.options.modeSetting) return { mode: this.options.modeSetting, source: 'buckley.agent.mode' };
    return undefined;
  }

  /**
   * The mode a turn of this intent runs in (modes.ts) — the turn's own choice where it has one —
   * noted as the one used; `changed` when it is not the one the intent used last (to be said
   * once, not with every turn).
   */
  modeFor(modes: SessionModes, readOnly: boolean, forTurn?: string): { choice: ModeChoice; changed: boolean } {
    const intent = readOnly ? 'ask' : 'task';
    // A turn's own choice (a panel session's mode) is held to the same rules, for that turn alone.
    const wanted = forTurn && !readOnly ? { mode: forTurn, source: 'chosen for this task' } : this.wantedMode();
    const choice = chooseMode(modes, readOnly, this.names(), this.options.modeSettings?.[intent], wanted);
    const before = this.modesUsed[intent];
    this.modesUsed[intent] = choice;
    return { choice, changed: before?.mode?.id !== choice.mode?.id || before?.why !== choice.why };
  }

  /**
   * Chooses the mode tasks run in from now on (and remembers it): one that asks before it acts
   * (asks stay in the read-only mode); an error in words for one the agent does not offer or the
   * safety rules do not allow.
   */
  chooseMode(value: string): { mode: AgentMode } | { error: string } {
    const modes = this.modes;
    if (!modes) return { error: 'the agent has not said which modes it offers (it has not started, or offers none)' };
    const mode = findChoice(modes.available, value);
    if (!mode) return { error: `the agent offers no mode "${value}": it offers ${listed(modes.available)}` };
    const fixed = this.options.modeSettings?.task;
    if (fixed) return { error: `buckley.agent.modes.task puts tasks in "${fixed}": change it there` };
    const refusal = modeRefusal(mode, false, this.names());
    if (refusal) return { error: `the mode "${mode.id}" ${refusal}: tasks run in one that asks first (${listed(choosableModes(modes, this.names()))}); buckley.agent.modes.task sets any` };
    this.chosenMode = mode.id;
    this.remember('modes', mode.id);
    return { mode };
  }

  private names(): { acpName?: string; command: readonly string[] } {
    return { acpName: this.acpName, command: this.options.agent.split(' ') };
  }

  /** The current model's id, as the sessions know it. */
  currentModel(): string | undefined {
    const models = this.models;
    if (!models) return this.wanted()?.model;
    return (this.wanted() && findChoice(models.available, this.wanted()!.model)?.id) ?? models.current;
  }

  snapshot(agent: string): AgentControls {
    const wanted = this.wanted();
    const current = this.currentModel();
    const honoured = wanted && this.models && findChoice(this.models.available, wanted.model);
    const modes = this.modes;
    // The modes the next turns run in, as they are chosen now (a mode chosen since the last turn included).
    const ask = modes && chooseMode(modes, true, this.names(), this.options.modeSettings?.ask, this.wantedMode());
    const task = modes && chooseMode(modes, false, this.names(), this.options.modeSettings?.task, this.wantedMode());
    return {
      agent,
      known: this.models !== undefined || modes !== undefined || this.commands.size > 0,
      commands: [...this.commands.values()],
      models: (this.models?.available ?? []).map(asChoice),
      model: current ?? '',
      model_source: honoured || (wanted && !this.models) ? wanted.source : current ? "the agent's default" : '',
      modes: (modes?.available ?? []).map(asChoice),
      ask_mode: ask?.mode?.id ?? '',
      task_mode: task?.mode?.id ?? '',
      // None to choose from where buckley.agent.modes.task fixes the mode.
      task_modes: modes && !this.options.modeSettings?.task ? choosableModes(modes, this.names()).map((mode) => mode.id) : [],
      mode_source: task?.why ?? '',
    };
  }

  private remembered(): Saved | undefined {
    const { file, logger } = this.options;
    if (!file) return undefined;
    try {
      const text = readStateFileSync(file);
      if (text === undefined) return undefined;
      const parsed = savedSchema.safeParse(parseJson(text));
      if (parsed.success) return parsed.data;
      logger.warn(`ignoring ${file}: it is not a list of chosen models and modes`);
    } catch (error) {
      logger.warn(`ignoring ${file}: ${(error as Error).message}`);
    }
    return undefined;
  }

  private remember(kind: 'models' | 'modes', id: string): void {
    const { file, agent, logger } = this.options;
    if (!file) return;
    try {
      const text = readStateFileSync(file);
      const parsed = text === undefined ? undefined : savedSchema.safeParse(parseJson(text));
      const saved: Saved = parsed?.success ? parsed.data : { version: 1, models: {} };
      writeFileAtomicSync(file, JSON.stringify({ ...saved, [kind]: { ...saved[kind], [agent]: id } }));
    } catch (error) {
      logger.warn(`could not remember the chosen ${kind === 'models' ? 'model' : 'mode'} in ${file}: ${(error as Error).message}`);
    }
  }
}

export { findChoice };

function asChoice(choice: AgentMode): { id: string; name: string; description: string } {
  return { id: choice.id, name: choice.name ?? '', description: choice.description ?? '' };
}

function listed(available: readonly AgentMode[]): string {
  return available.length ? available.map((choice) => choice.id).join(', ') : 'none';
}
