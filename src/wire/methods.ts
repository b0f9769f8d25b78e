/**
 * The wire's methods, typed: what each takes and the schema its reply is validated with. The
 * client (client.ts) is called through this map — `client.call.ProvideFile(request, options)` —
 * so no call site names a method by a string, and every reply is typed by what was checked.
 */
import * as z from '../schema.js';
import {
  agentControlsSchema,
  inlineCompletionEventSchema,
  proposeEditsResponseSchema,
  sendMessageResponseSchema,
  serverCapabilitiesSchema,
  sessionSchema,
  taskEventSchema,
  taskListSchema,
  type AgentControls,
  type ContextDelta,
  type CreateSessionRequest,
  type EditorContext,
  type FileContent,
  type FileWritten,
  type InlineCompletionRequest,
  type QuestionAnswer,
  type TerminalAnswer,
  type SendMessageRequest,
  type TaskStreamRequest,
} from './contract.js';

/** A method of the wire: its request's type (carried in the type only) and its reply's schema. */
export interface Method<Request, Reply> {
  readonly reply: z.core.$ZodType<Reply>;
  /** Never set: the request's type, for the typed client. */
  readonly request?: Request;
}

const method = <Request, Reply>(reply: z.core.$ZodType<Reply>): Method<Request, Reply> => ({ reply });

const empty = z.looseObject({});

export interface ProposeEditsRequest {
  agent_id: string;
  session_id?: string;
  instruction: string;
  context: EditorContext;
  apply: boolean;
  max_suggestions: number;
}

/** Calls with one reply. */
export const UNARY = {
  GetServerCapabilities: method<Record<string, never>, z.infer<typeof serverCapabilitiesSchema>>(serverCapabilitiesSchema),
  CreateSession: method<CreateSessionRequest, z.infer<typeof sessionSchema>>(sessionSchema),
  SendMessage: method<SendMessageRequest, z.infer<typeof sendMessageResponseSchema>>(sendMessageResponseSchema),
  UpdateSessionContext: method<ContextDelta, object>(empty),
  ProvideFile: method<FileContent, object>(empty),
  ConfirmFileWrite: method<FileWritten, object>(empty),
  ProposeEdits: method<ProposeEditsRequest, z.infer<typeof proposeEditsResponseSchema>>(proposeEditsResponseSchema),
  ApproveToolExecution: method<{ execution_id: string; remember: boolean }, object>(empty),
  RejectToolExecution: method<{ execution_id: string; reason: string }, object>(empty),
  GetAgentControls: method<{ agent_id: string; discover: boolean }, AgentControls>(agentControlsSchema),
  SetAgentModel: method<{ agent_id: string; model: string }, AgentControls>(agentControlsSchema),
  SetAgentMode: method<{ agent_id: string; mode: string }, AgentControls>(agentControlsSchema),
  AnswerQuestion: method<QuestionAnswer, object>(empty),
  AnswerTerminal: method<TerminalAnswer, object>(empty),
  CancelTask: method<{ task_id: string }, object>(empty),
  ListTasks: method<{ running_only: boolean }, z.infer<typeof taskListSchema>>(taskListSchema),
};

/** Calls whose replies stream. */
export const STREAMS = {
  StreamTask: method<TaskStreamRequest, z.infer<typeof taskEventSchema>>(taskEventSchema),
  SubscribeTaskEvents: method<{ plan_id: string; task_ids: string[]; from_sequence: number }, z.infer<typeof taskEventSchema>>(taskEventSchema),
  StreamInlineCompletions: method<InlineCompletionRequest, z.infer<typeof inlineCompletionEventSchema>>(inlineCompletionEventSchema),
};

export type RequestOf<M> = M extends Method<infer Request, unknown> ? Request : never;
export type ReplyOf<M> = M extends Method<unknown, infer Reply> ? Reply : never;
