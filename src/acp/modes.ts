/**
 * The panel's modes: Task (the agent works, asking first, in its own mode that does), the agent's
 * other modes that ask first (its plan mode…) as "Task: <its name>", and Ask (read-only). Never a
 * mode of the agent's that runs tools unasked: the coordinator offers only those it can keep to
 * asking (`task_modes`). A task mode's turn names that mode with its task (`agent_mode`): the
 * agent's session is put in it for that turn alone — two panel sessions in two modes at once
 * each get theirs, and the mode every other task runs in stays as it was.
 */
import type { SessionMode } from '@agentclientprotocol/sdk';
import type { AgentControls } from '../wire/contract.js';

export type FaceMode = 'task' | 'ask' | `task:${string}`;

const TASK: SessionMode = { id: 'task', name: 'Task', description: 'The agent works in the workspace, asking before each change or command (approvals.autoApprove aside)' };
const ASK: SessionMode = { id: 'ask', name: 'Ask (read-only)', description: 'The agent reads and answers: it changes nothing and runs nothing' };

/** The modes a session offers, with what the agent offers (undefined: not known yet). */
export function modesOf(controls: AgentControls | undefined): SessionMode[] {
  const others = (controls?.task_modes ?? []).filter((id) => id !== controls?.task_mode);
  const named = (id: string) => controls?.modes.find((mode) => mode.id === id);
  return [TASK, ...others.map((id) => ({ id: `task:${id}`, name: `Task: ${named(id)?.name || id}`, description: named(id)?.description || `The agent works in its ${id} mode, asking first` })), ASK];
}

/** `modeId` as a mode of ours, where the panel offers it; undefined for any other. */
export function faceModeOf(modeId: string, controls: AgentControls | undefined): FaceMode | undefined {
  return modesOf(controls).some((mode) => mode.id === modeId) ? (modeId as FaceMode) : undefined;
}

/** The agent's mode a turn in `mode` names: its own for task:<id>; none for Task (the mode tasks run in) and Ask. */
export function agentModeOf(mode: FaceMode): string | undefined {
  return mode.startsWith('task:') ? mode.slice('task:'.length) : undefined;
}
