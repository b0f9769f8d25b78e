/** `buckley/status`: where the coordinator is and how it is doing, what was negotiated, what runs. */
import type { Features } from '../capabilities.js';
import type { Config } from '../../config.js';
import type { CoordinatorConnection } from '../link/connection.js';
import type { ClientIdentity } from '../capabilities.js';
import type { StatusResult, TaskProgress, ToolApprovalRequest } from '../protocol.js';
import type { UsageTally } from './usage.js';
import type { AgentControls } from '../../wire/contract.js';

export function buildStatus(input: {
  version: string;
  logFile: string | undefined;
  client: ClientIdentity;
  config: Config;
  features: Features;
  coordinator: CoordinatorConnection | undefined;
  tasks: TaskProgress[];
  approvals: ToolApprovalRequest[];
  conversations: StatusResult['conversations'];
  /** Why there are no inline completions; undefined: there are. */
  completions: string | undefined;
  usage: UsageTally;
  /** What the agent offers, once known. */
  agent?: AgentControls;
  /** A team's running tasks, where the coordinator is a team's. */
  team?: StatusResult['team'];
}): StatusResult {
  const { coordinator, config, features } = input;
  const { coordinator: coordinatorFeatures, ...clientFeatures } = features;
  const { unused, ...coordinatorFlags } = coordinatorFeatures;
  return {
    server: { name: 'buckley-lsp', version: input.version, ...(input.logFile ? { log: input.logFile } : {}) },
    client: input.client,
    coordinator: {
      mode: coordinator?.mode ?? (config.coordinator.address ? 'remote' : 'embedded'),
      ...(coordinator?.address ? { address: coordinator.address } : {}),
      ...(coordinator && coordinator.addresses.length > 1 ? { addresses: coordinator.addresses } : {}),
      ...(coordinator ? { agentId: coordinator.identity.agentId, agentIdSource: coordinator.identity.source } : {}),
      state: coordinator?.state ?? 'starting',
      ...(coordinator?.error ? { error: coordinator.error } : {}),
      ...(coordinator?.sessionId ? { sessionId: coordinator.sessionId } : {}),
      ...(coordinator?.capabilities ? { protocolVersion: coordinator.capabilities.protocol_version } : {}),
      features: coordinator?.features ?? [],
      // What it offers that the bridge does not use (yet).
      unusedFeatures: unused,
      ...(coordinator?.agentDescription ? { agent: coordinator.agentDescription } : {}),
      ...(coordinatorFeatures.known ? { files: filesOf(coordinatorFeatures.editorBuffers) } : {}),
    },
    features: {
      ...clientFeatures,
      ...Object.fromEntries(Object.entries(coordinatorFlags).map(([key, value]) => [`coordinator.${key}`, value])),
    },
    tasks: input.tasks,
    ...(input.team ? { team: input.team } : {}),
    approvals: input.approvals,
    conversations: input.conversations.map((conversation) => {
      const usage = input.usage.ofConversation(conversation.id);
      return usage ? { ...conversation, usage } : conversation;
    }),
    ...(input.usage.ofSession() ? { usage: input.usage.ofSession() } : {}),
    completions: input.completions ? { available: false, why: input.completions } : { available: true },
    ...(input.agent?.known ? { agent: agentOf(input.agent) } : {}),
  };
}

function agentOf(controls: AgentControls): NonNullable<StatusResult['agent']> {
  const choice = ({ id, name }: { id: string; name: string }) => (name && name !== id ? { id, name } : { id });
  return {
    name: controls.agent,
    commands: controls.commands.map(({ name, description, hint }) => ({ name, description, ...(hint ? { hint } : {}) })),
    models: controls.models.map(choice),
    ...(controls.model ? { model: controls.model, modelSource: controls.model_source } : {}),
    modes: controls.modes.map(choice),
    ...(controls.ask_mode ? { askMode: controls.ask_mode } : {}),
    ...(controls.task_mode ? { taskMode: controls.task_mode } : {}),
    ...(controls.mode_source ? { modeSource: controls.mode_source } : {}),
    ...(controls.task_modes.length ? { taskModes: controls.task_modes } : {}),
  };
}

/** What the agent reads and writes, as this coordinator lets it. */
function filesOf(editorBuffers: boolean): { read: string; write: string } {
  return editorBuffers
    ? {
        read: "the editor's buffer of a file open here (unsaved edits included), else the disk; outside the workspace or of credentials only with leave (never in an ask)",
        write: "in a task, after you approve the change with its diff in view: the editor's buffer of a file open here (undoable; on disk when you save it), else the disk; never in an ask",
      }
    : { read: 'the disk, as the coordinator reads it (not your unsaved edits)', write: 'the disk, as the coordinator decides' };
}
