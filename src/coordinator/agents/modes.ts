/**
 * The mode an agent's session runs in: an ask in the agent's read-only mode, a task in the mode
 * where it asks before changes and commands — never a mode that lets tools run unasked (Qwen Code
 * starts in `auto`, where its own classifier decides). ACP agents list their modes in
 * `session/new`: as `modes` (set with `session/set_mode`) or as a config option of category `mode`
 * (set with `session/set_config_option`). Known agents' modes are named in known.ts; any other
 * agent's are chosen by what they are called; `buckley.agent.modes.ask` / `.task` choose others.
 */
import * as z from '../../schema.js';
import { knownByAcpName, knownByCommand } from './recognize.js';

export interface AgentMode {
  id: string;
  name?: string;
  description?: string;
}

/** Where a session's modes come from, and how to change them. */
export interface SessionModes {
  current?: string;
  available: AgentMode[];
  /** Set with `session/set_config_option` on this option; else with `session/set_mode`. */
  configId?: string;
}

const modeSchema = z.object({ id: z.string(), name: z.optional(z.nullable(z.string())), description: z.optional(z.nullable(z.string())) });
const optionSchema = z.object({ value: z.string(), name: z.optional(z.nullable(z.string())), description: z.optional(z.nullable(z.string())) });
/** What `session/new` (or `session/load`) answers about modes and models, as far as we read it. */
const newSessionModes = z.object({
  modes: z.optional(z.nullable(z.object({ currentModeId: z.optional(z.string()), availableModes: z._default(z.array(modeSchema), []) }))),
  models: z.optional(
    z.nullable(
      z.object({
        currentModelId: z.optional(z.string()),
        availableModels: z._default(z.array(z.object({ modelId: z.string(), name: z.optional(z.nullable(z.string())), description: z.optional(z.nullable(z.string())) })), []),
      }),
    ),
  ),
  configOptions: z.optional(
    z.nullable(
      z.array(
        z.object({
          id: z.string(),
          name: z.optional(z.nullable(z.string())),
          type: z.optional(z.nullable(z.string())),
          category: z.optional(z.nullable(z.string())),
          currentValue: z.optional(z.unknown()),
          // Options may come in groups ({group, options}): flattened below.
          options: z.optional(z.array(z.union([optionSchema, z.object({ options: z.array(optionSchema) })]))),
        }),
      ),
    ),
  ),
});

/** The session's modes from the agent's answer to session/new; undefined when it has none. */
export function modesOf(response: unknown): SessionModes | undefined {
  const parsed = newSessionModes.safeParse(response);
  if (!parsed.success) return undefined;
  const fromOption = configChoices(parsed.data, 'mode');
  if (fromOption) return fromOption;
  const modes = parsed.data.modes;
  if (!modes?.availableModes.length) return undefined;
  return { current: modes.currentModeId, available: modes.availableModes.map((mode) => ({ id: mode.id, name: mode.name ?? undefined, description: mode.description ?? undefined })) };
}

/**
 * The session's models, read as its modes are: a config option of category `model` (set with
 * `session/set_config_option`), else ACP's `models` (set with `session/set_model`).
 */
export function modelsOf(response: unknown): SessionModes | undefined {
  const parsed = newSessionModes.safeParse(response);
  if (!parsed.success) return undefined;
  const fromOption = configChoices(parsed.data, 'model');
  if (fromOption) return fromOption;
  const models = parsed.data.models;
  if (!models?.availableModels.length) return undefined;
  return { current: models.currentModelId, available: models.availableModels.map((model) => ({ id: model.modelId, name: model.name ?? undefined, description: model.description ?? undefined })) };
}

/**
 * A switch (a boolean config option) that lets tools run unasked — Cline's "Auto-approve tools" —
 * read by its id or name: what is meant by turning it on, not a neighbour of it ("auto compact").
 */
const UNASKED_SWITCH = /auto[-_ ]?(approv|accept|allow|run)|yolo|bypass|skip[-_ ]?(permission|approval|confirm)|danger|allow[-_ ]?all|no[-_ ]?confirm/i;

/** The session's switches that let tools run unasked, each with whether it is on; undefined when it has none. */
export function unaskedSwitchesOf(response: unknown): Map<string, boolean> | undefined {
  const parsed = newSessionModes.safeParse(response);
  if (!parsed.success) return undefined;
  const switches = (parsed.data.configOptions ?? []).filter((option) => (option.type === 'boolean' || typeof option.currentValue === 'boolean') && UNASKED_SWITCH.test(`${option.id} ${option.name ?? ''}`));
  return switches.length ? new Map(switches.map((option) => [option.id, option.currentValue === true])) : undefined;
}

function configChoices(response: z.infer<typeof newSessionModes>, category: 'mode' | 'model'): SessionModes | undefined {
  // The option named for it before another of its category (Cline's "provider" is of category model too).
  const options = response.configOptions ?? [];
  const option = options.find((candidate) => candidate.id === category) ?? options.find((candidate) => candidate.category === category);
  if (!option?.options?.length) return undefined;
  const flat = option.options.flatMap((item) => ('value' in item ? [item] : item.options));
  return {
    configId: option.id,
    current: typeof option.currentValue === 'string' ? option.currentValue : undefined,
    available: flat.map((item) => ({ id: item.value, name: item.name ?? undefined, description: item.description ?? undefined })),
  };
}

/** Modes that let tools run unasked: never chosen by the general rules. */
const UNASKED = /yolo|bypass|full[-_ ]?access|auto|accept|dont[-_ ]?ask|never|trust|danger|skip/i;
const READ_ONLY = [/^read[-_ ]?only$/i, /^plan(ning)?$/i, /read[-_ ]?only/i, /\bplan\b/i, /^(ask|chat|question)$/i];
const ASKS_FIRST = [/^(default|normal|manual|ask|suggest|on[-_ ]?request|untrusted)$/i, /(prompt|ask|approv|confirm)/i];

export type ModeChoice = { mode: AgentMode; why: string } | { mode?: undefined; why: string };

/** A mode the user wants (chosen in the editor, or `buckley.agent.mode`), and where that comes from. */
export interface WantedMode {
  mode: string;
  source: string;
}

type AgentNames = { acpName?: string; command: readonly string[] };

/** The choice (a mode or model) with this id, else the one with this id or name in any case. */
export function findChoice(available: readonly AgentMode[], wanted: string): AgentMode | undefined {
  const lower = wanted.toLowerCase();
  return available.find((choice) => choice.id === wanted) ?? available.find((choice) => choice.id.toLowerCase() === lower || choice.name?.toLowerCase() === lower);
}

/**
 * Why `mode` may not hold a turn of this intent where the user merely prefers it (the safety
 * rules win): it runs tools unasked; for an ask, it is not read-only (the known agent's ask mode,
 * or one that reads as read-only). Undefined where it may.
 */
export function modeRefusal(mode: AgentMode, readOnly: boolean, agent: AgentNames): string | undefined {
  const known = knownByAcpName(agent.acpName) ?? knownByCommand(agent.command);
  // A known agent's own modes are known, not read by their names (Droid's "normal" is called "Auto (Off)").
  const knownSafe = known?.modes && (mode.id === known.modes.ask || mode.id === known.modes.task);
  if (!knownSafe && UNASKED.test(`${mode.id} ${mode.name ?? ''}`)) return 'runs tools unasked';
  if (!readOnly) return undefined;
  if (known?.modes) return known.modes.ask === mode.id ? undefined : 'is not its read-only mode';
  return READ_ONLY.some((pattern) => pattern.test(mode.id) || pattern.test(mode.name ?? '')) ? undefined : 'does not read as read-only';
}

/** The modes a task may be put in from the editor ("Buckley: choose mode"): those that ask first. */
export function choosableModes(modes: SessionModes, agent: AgentNames): AgentMode[] {
  return modes.available.filter((mode) => !modeRefusal(mode, false, agent));
}

/**
 * The mode for an ask (`readOnly`) or a task: the user's setting for the intent
 * (`buckley.agent.modes.ask` / `.task`, by id or name: the expert's word, taken as it is); else the
 * mode the user wants (`wanted`: chosen in the editor or `buckley.agent.mode`) where the safety
 * rules allow it for the intent; else the known agent's, else the first whose id, name or
 * description says it is read-only (ask) or asks first (task), never one that lets tools run unasked.
 */
export function chooseMode(modes: SessionModes, readOnly: boolean, agent: AgentNames, setting?: string, wanted?: WantedMode): ModeChoice {
  const intent = readOnly ? 'ask' : 'task';
  if (setting) {
    const mode = findChoice(modes.available, setting);
    if (mode) return { mode, why: `buckley.agent.modes.${intent}` };
    return { why: `buckley.agent.modes.${intent} is "${setting}", which the agent does not offer (it offers ${offered(modes)})` };
  }
  let held = '';
  if (wanted) {
    const mode = findChoice(modes.available, wanted.mode);
    const refusal = mode ? modeRefusal(mode, readOnly, agent) : 'is not one the agent offers';
    if (mode && !refusal) return { mode, why: wanted.source };
    held = `"${wanted.mode}" (${wanted.source}) ${refusal}: `;
  }
  const fallback = safeMode(modes, readOnly, agent);
  return fallback.mode ? { mode: fallback.mode, why: `${held}${fallback.why}` } : { why: `${held}${fallback.why}` };
}

/** The known agent's mode for the intent, else the first whose words say it is read-only (ask) or asks first (task). */
function safeMode(modes: SessionModes, readOnly: boolean, agent: AgentNames): ModeChoice {
  const known = knownByAcpName(agent.acpName) ?? knownByCommand(agent.command);
  const knownMode = known?.modes && findChoice(modes.available, known.modes[readOnly ? 'ask' : 'task']);
  if (knownMode) return { mode: knownMode, why: `${known!.title}'s ${readOnly ? 'read-only mode' : 'mode that asks before changes'}` };
  const safe = modes.available.filter((mode) => !UNASKED.test(`${mode.id} ${mode.name ?? ''}`));
  for (const pattern of readOnly ? [...READ_ONLY, ...ASKS_FIRST] : ASKS_FIRST) {
    const mode = safe.find((candidate) => pattern.test(candidate.id) || pattern.test(candidate.name ?? '') || (pattern.flags.includes('i') && !pattern.source.startsWith('^') && pattern.test(candidate.description ?? '')));
    if (mode) return { mode, why: readOnly ? 'the mode that reads as read-only' : 'the mode that reads as asking first' };
  }
  return { why: `none of the agent's modes (${offered(modes)}) reads as ${readOnly ? 'read-only' : 'asking before changes'}` };
}

function offered(modes: SessionModes): string {
  return modes.available.map((mode) => mode.id).join(', ');
}
