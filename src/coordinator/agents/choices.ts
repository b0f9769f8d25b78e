/**
 * What an agent offers beyond its turns — its slash commands (`available_commands_update`), its
 * models and modes (`session/new`: `models`, or config options of category `model` / `mode`) —
 * and the model its turns use: the one chosen in the editor (SetAgentModel, remembered per agent
 * in the state directory's `agent-models.json`), else `buckley.agent.model`, else the agent's own
 * default. Shared by every process of one agent (pool.ts), so a choice holds for all of them.
 */
import * as z from '../../schema.js';
import type { Logger } from '../../logger.js';
import { parseJson, readStateFileSync, writeFileAtomicSync } from '../../state.js';
import type { AgentControls } from '../../wire/contract.js';
import type { AgentMode, SessionModes } from './modes.js';
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
  /** Where choices made in the editor are remembered; none: for this run only. */
  file?: string;
  logger: Logger;
}

/** How long a question that may be a command waits for the agent to list its commands. */
const COMMANDS_WAIT_MS = 1_000;

const savedSchema = z.object({ version: z.literal(1), models: z.record(z.string(), z.string()) });

export class AgentChoices {
  /** The models and modes the latest session was offered. */
  private models: SessionModels | undefined;
  private modes: SessionModes | undefined;
  readonly commands = new Map<string, AgentCommandInfo>();
  /** The modes asks and tasks were last put in. */
  readonly modesUsed: { ask?: string; task?: string } = {};
  private chosen: string | undefined;
  /** Settings already said to name a model the agent does not offer. */
  private readonly saidMissing = new Set<string>();

  constructor(private readonly options: ChoicesOptions) {
    this.chosen = this.remembered();
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
    this.remember(model.id);
    return { model };
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
    return {
      agent,
      known: this.models !== undefined || this.modes !== undefined || this.commands.size > 0,
      commands: [...this.commands.values()],
      models: (this.models?.available ?? []).map(asChoice),
      model: current ?? '',
      model_source: honoured || (wanted && !this.models) ? wanted.source : current ? "the agent's default" : '',
      modes: (this.modes?.available ?? []).map(asChoice),
      ask_mode: this.modesUsed.ask ?? '',
      task_mode: this.modesUsed.task ?? '',
    };
  }

  private remembered(): string | undefined {
    const { file, agent, logger } = this.options;
    if (!file) return undefined;
    try {
      const text = readStateFileSync(file);
      if (text === undefined) return undefined;
      const parsed = savedSchema.safeParse(parseJson(text));
      if (parsed.success) return parsed.data.models[agent];
      logger.warn(`ignoring ${file}: it is not a list of chosen models`);
    } catch (error) {
      logger.warn(`ignoring ${file}: ${(error as Error).message}`);
    }
    return undefined;
  }

  private remember(model: string): void {
    const { file, agent, logger } = this.options;
    if (!file) return;
    try {
      const text = readStateFileSync(file);
      const parsed = text === undefined ? undefined : savedSchema.safeParse(parseJson(text));
      const models = parsed?.success ? parsed.data.models : {};
      writeFileAtomicSync(file, JSON.stringify({ version: 1, models: { ...models, [agent]: model } }));
    } catch (error) {
      logger.warn(`could not remember the chosen model in ${file}: ${(error as Error).message}`);
    }
  }
}

/** The choice with this id, else the one with this id or name in any case. */
export function findChoice(available: readonly AgentMode[], wanted: string): AgentMode | undefined {
  const lower = wanted.toLowerCase();
  return available.find((choice) => choice.id === wanted) ?? available.find((choice) => choice.id.toLowerCase() === lower || choice.name?.toLowerCase() === lower);
}

function asChoice(choice: AgentMode): { id: string; name: string; description: string } {
  return { id: choice.id, name: choice.name ?? '', description: choice.description ?? '' };
}

function listed(available: readonly AgentMode[]): string {
  return available.length ? available.map((choice) => choice.id).join(', ') : 'none';
}
