/**
 * `workspace/executeCommand`: every command the server lists in
 * `executeCommandProvider.commands` (Zed drops code actions whose command is not listed).
 * Commands answer at once; the work continues in the background.
 */
import { ErrorCodes, ResponseError, type ExecuteCommandParams } from 'vscode-languageserver';
import { askCommandArgsSchema, Commands, describeIssues } from '../protocol.js';
import type { AskService } from './ask.js';

export const ALL_COMMANDS: string[] = Object.values(Commands);

const ASK_USAGE =
  'buckley.ask takes one JSON argument {"question": "…", "uri"?: "…", "range"?: {…}, "text"?: "…"}, e.g. :lsp-workspace-command buckley.ask {"question": "what does this do?", "text": "%{selection}", "uri": "%{buffer_name}"}';

export interface CommandDependencies {
  asks: AskService;
  status(): unknown;
}

export function executeCommand(params: ExecuteCommandParams, deps: CommandDependencies): unknown {
  switch (params.command) {
    case Commands.ask: {
      const [first] = params.arguments ?? [];
      // A bare string is the question (handy from a key binding).
      const args = typeof first === 'string' ? { question: first } : first;
      if (args === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `missing arguments: ${ASK_USAGE}`);
      const parsed = askCommandArgsSchema.safeParse(args);
      if (!parsed.success) throw new ResponseError(ErrorCodes.InvalidParams, `${describeIssues(parsed.error, 'arguments[0]')}. ${ASK_USAGE}`);
      deps.asks.askInBackground(parsed.data);
      return { started: true };
    }
    case Commands.status:
      return deps.status();
    default:
      throw new ResponseError(ErrorCodes.InvalidParams, `unknown command ${params.command}; known: ${ALL_COMMANDS.join(', ')}`);
  }
}
