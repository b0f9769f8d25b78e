/**
 * What the agent behind offers, as an ACP client shows it: its `/commands` (the panel's command
 * menu) and its models (a config option of category "model", chosen with
 * `session/set_config_option`). The coordinator says what they are (GetAgentControls).
 */
import type { AvailableCommand, SessionConfigOption } from '@agentclientprotocol/sdk';
import type { AgentControls } from '../wire/contract.js';

export const MODEL_OPTION = 'model';

export function commandsOf(controls: AgentControls): AvailableCommand[] {
  return controls.commands.map((command) => ({ name: command.name, description: command.description || command.name, ...(command.hint ? { input: { hint: command.hint } } : {}) }));
}

/** The models as a config option; none where the agent offers no choice. */
export function configOptionsOf(controls: AgentControls): SessionConfigOption[] {
  if (!controls.models.length) return [];
  return [
    {
      id: MODEL_OPTION,
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: controls.model || controls.models[0]!.id,
      options: controls.models.map((model) => ({ value: model.id, name: model.name || model.id, ...(model.description ? { description: model.description } : {}) })),
    },
  ];
}
