/**
 * TypeScript shapes of the buckley.acp.v1 messages the bridge and our coordinator exchange, as
 * proto-loader presents them (snake_case field names, `defaults: true`), and zod schemas for
 * what comes back from a coordinator: a reply is validated before the bridge trusts it.
 */
import { z } from 'zod';

/** Request metadata: the caller's agent identity (Buckley reads it from loopback plaintext peers). */
export const AGENT_HEADER = 'x-buckley-agent-id';
/** Our extension: the coordinator session a call belongs to. */
export const SESSION_HEADER = 'x-buckley-session-id';
/** Our extension: `ask` marks a StreamTask that must stay read-only. */
export const INTENT_HEADER = 'x-buckley-intent';

export interface WirePosition {
  line: number;
  character: number;
}
export interface WireRange {
  start: WirePosition;
  end: WirePosition;
}

export interface DocumentSnapshot {
  uri: string;
  language_id: string;
  content: string;
  selection?: WireRange;
  visible_ranges?: WireRange[];
  version: number;
  workspace_root: string;
  metadata: Record<string, string>;
}

export interface EditorContext {
  document?: DocumentSnapshot;
  related_documents: DocumentSnapshot[];
  symbols: string[];
  metadata: Record<string, string>;
}

export interface WireMessage {
  role: string;
  content: string;
}

export interface SendMessageRequest {
  agent_id: string;
  message: WireMessage;
  context?: EditorContext;
}

export interface TaskStreamRequest {
  task_id: string;
  agent_id: string;
  query: string;
  context?: EditorContext;
}

export interface ContextDelta {
  session_id: string;
  added_files: string[];
  removed_files: string[];
  metadata: Record<string, string>;
}

export interface CreateSessionRequest {
  agent_id: string;
  metadata: Record<string, string>;
}

const stringMap = z.record(z.string(), z.string()).default({});

export const serverCapabilitiesSchema = z.object({
  protocol_version: z.string().default(''),
  features: z.array(z.string()).default([]),
  max_agents: z.number().default(0),
  supported_auth: z.array(z.string()).default([]),
});
export type ServerCapabilities = z.infer<typeof serverCapabilitiesSchema>;

export const sessionSchema = z.object({
  session_id: z.string().min(1, 'the coordinator returned a session without session_id'),
  agent_id: z.string().default(''),
  metadata: stringMap,
});
export type Session = z.infer<typeof sessionSchema>;

export const sendMessageResponseSchema = z.object({
  response: z
    .object({ role: z.string().default('assistant'), content: z.string() })
    .nullable()
    .optional(),
});

const toolExecutionSchema = z.object({
  id: z.string().default(''),
  tool: z.string().default(''),
  status: z.string().default(''),
  kind: z.string().default(''),
  input: z.string().default(''),
  output: z.string().default(''),
});

const toolApprovalRequestSchema = z.object({
  execution_id: z.string(),
  tool: z.string().default(''),
  parameters: stringMap,
  risk: z.string().default(''),
  agent_id: z.string().default(''),
  title: z.string().default(''),
  reason: z.string().default(''),
});

export const taskEventSchema = z.object({
  task_id: z.string().default(''),
  plan_id: z.string().default(''),
  status: z.string().default(''),
  progress: z.number().int().default(0),
  message: z.string().default(''),
  tool_executions: z.array(toolExecutionSchema).default([]),
  approval: toolApprovalRequestSchema.nullable().optional(),
  answer_delta: z.string().default(''),
});
export type TaskEvent = z.infer<typeof taskEventSchema>;
export type WireToolExecution = z.infer<typeof toolExecutionSchema>;
