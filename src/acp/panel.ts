/**
 * The ACP client's side as the face (face.ts) sees it: the panel it shows the turn in, the user
 * it asks for permission, and — where the client offers them — its files (Zed's buffers, unsaved
 * edits included; its writes go to its review). A small interface, so the face's flows are the
 * same whichever way the client is reached.
 */
import type { AgentContext, ClientCapabilities, CreateElicitationRequest, CreateElicitationResponse, RequestPermissionRequest, SessionUpdate } from '@agentclientprotocol/sdk';
import type { Logger } from '../logger.js';

export interface Panel {
  /** Shows an update of the session's turn; in the order given. */
  update(sessionId: string, update: SessionUpdate): void;
  /** Resolves once every update given so far has gone out. */
  sent(): Promise<void>;
  /** Asks the user; the option chosen, or undefined (the turn was cancelled, or the client could not ask). */
  askPermission(request: RequestPermissionRequest, signal: AbortSignal): Promise<string | undefined>;
  /** The client's text of a file (its buffer where it is open); absent where the client offers no files. */
  readFile?(sessionId: string, path: string): Promise<string>;
  /** Has the client write a file (its buffer, its review); absent where it offers no such thing. */
  writeFile?(sessionId: string, path: string, content: string): Promise<void>;
  /** Asks the user through a form (ACP elicitation); undefined when not answered; absent where the client takes no forms. */
  elicit?(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse | undefined>;
  /** The client takes elicitations in URL mode too (a web page to open). */
  elicitUrl?: boolean;
  /** An ACP terminal call made in the client's terminals (it shows them); absent where it offers none. */
  terminal?(sessionId: string, method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
}

/** The panel of the client on the other end of `client`, with what it said it can do. */
export function panelOf(client: AgentContext, capabilities: ClientCapabilities | undefined, logger: Logger): Panel {
  // Notifications go out in the order they are made: each waits for the one before it.
  let last: Promise<unknown> = Promise.resolve();
  const panel: Panel = {
    update(sessionId, update) {
      last = last.then(() => client.notify('session/update', { sessionId, update })).catch((error: unknown) => logger.debug(`an update was not delivered: ${(error as Error).message}`));
    },
    sent: () => last.then(() => undefined),
    async askPermission(request, signal) {
      await last;
      const response = await client.request('session/request_permission', request, { cancellationSignal: signal }).catch((error: unknown) => {
        if (!signal.aborted) logger.warn(`the client did not answer the permission request for ${request.toolCall.title}: ${(error as Error).message}; denied`);
        return undefined;
      });
      return response?.outcome.outcome === 'selected' ? response.outcome.optionId : undefined;
    },
  };
  if (capabilities?.fs?.readTextFile) panel.readFile = async (sessionId, path) => (await client.request('fs/read_text_file', { sessionId, path })).content;
  if (capabilities?.fs?.writeTextFile) panel.writeFile = async (sessionId, path, content) => void (await client.request('fs/write_text_file', { sessionId, path, content }));
  if (capabilities?.terminal) panel.terminal = (sessionId, method, params, signal) => client.request(method, { ...params, sessionId } as never, { cancellationSignal: signal });
  if (capabilities?.elicitation?.form) {
    panel.elicit = async (request, signal) => {
      await last;
      return client.request('elicitation/create', request, { cancellationSignal: signal }).catch((error: unknown) => {
        if (!signal.aborted) logger.warn(`the client did not answer the question "${request.message}": ${(error as Error).message}; declined`);
        return undefined;
      });
    };
    panel.elicitUrl = Boolean(capabilities.elicitation.url);
  }
  return panel;
}
