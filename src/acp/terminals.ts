/**
 * The agent's commands in the ACP client's terminals (Zed shows them live in the panel). Our
 * coordinator sends each terminal call of its agent here (`client_terminals`) once it has judged
 * and approved the command and wrapped it in the agent's sandbox: the client runs bubblewrap, with
 * the agent's environment alone, and the panel shows a tool call holding the terminal. Only with
 * the embedded coordinator — a team's runs elsewhere, where the sandbox's paths are not the
 * client's. Every terminal still open when the turn ends is killed and released.
 */
import type { EditorTerminals } from '../bridge/link/calls.js';
import { TERMINAL_COMMAND_META } from '../wire/contract.js';
import type { Panel } from './panel.js';

export interface PanelTerminals extends EditorTerminals {
  /** Kills and releases what the turn left open. */
  close(): Promise<void>;
}

/** How long the client has to answer a terminal call but waiting for a command's exit (which may take the turn). */
const TERMINAL_CALL_MS = 30_000;

/** The session's terminals in the client; `turn` ends when the turn does (a call still waiting is withdrawn). */
export function panelTerminals(panel: Panel & Required<Pick<Panel, 'terminal'>>, sessionId: string, turn: AbortSignal): PanelTerminals {
  const open = new Set<string>();
  const shown = (terminalId: string) => `terminal-${terminalId}`;
  return {
    async call(method, params) {
      const deadline = method === 'terminal/wait_for_exit' ? turn : AbortSignal.any([turn, AbortSignal.timeout(TERMINAL_CALL_MS)]);
      const result = await panel.terminal(sessionId, method, params, deadline);
      const terminalId = method === 'terminal/create' ? (result as { terminalId?: string }).terminalId : (params.terminalId as string | undefined);
      if (!terminalId) return result;
      if (method === 'terminal/create') {
        open.add(terminalId);
        const line = (params._meta as Record<string, unknown> | undefined)?.[TERMINAL_COMMAND_META];
        panel.update(sessionId, { sessionUpdate: 'tool_call', toolCallId: shown(terminalId), title: typeof line === 'string' ? line : String(params.command), kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId }] });
      } else if (method === 'terminal/wait_for_exit') {
        const exit = result as { exitCode?: number | null };
        panel.update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId: shown(terminalId), status: exit.exitCode === 0 ? 'completed' : 'failed' });
      } else if (method === 'terminal/release') open.delete(terminalId);
      return result;
    },
    async close() {
      for (const terminalId of open) {
        await panel.terminal(sessionId, 'terminal/kill', { terminalId }, AbortSignal.timeout(TERMINAL_CALL_MS)).catch(() => undefined);
        await panel.terminal(sessionId, 'terminal/release', { terminalId }, AbortSignal.timeout(TERMINAL_CALL_MS)).catch(() => undefined);
      }
      open.clear();
    },
  };
}
