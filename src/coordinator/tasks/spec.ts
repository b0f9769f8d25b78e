/**
 * A task as its caller asked for it, in the form it is stored in (its stream's `created` record):
 * everything any coordinator needs to run it — the question and the editor's context, the intent,
 * the conversation, where it works, what the caller answers — and the agent's turn made from it.
 */
import type { AgentTurn } from '../agents/driver.js';
import { editorStateOf } from '../agents/editorState.js';
import { buildPrompt } from '../../wire/prompt.js';
import { imagesOf, withinImageBound } from '../../wire/images.js';
import type { EditorContext } from '../../wire/contract.js';
import { resolve } from 'node:path';
import { isInside } from '../../risk/paths.js';
import type { TaskState } from './store.js';

export interface TaskSpec {
  /** The agent id the request named. */
  agentId: string;
  query: string;
  context?: EditorContext;
  /** An ask (read-only), a task, or an edit of the selection. */
  intent: 'ask' | 'task' | 'edit';
  /** The agent session it runs in: one per caller's session (and conversation). */
  sessionKey: string;
  /** The conversation, named the same across restarts (an agent's saved session is found by it). */
  conversationKey?: string;
  /** The conversation's earlier turns as the caller kept them. */
  earlier?: string;
  /** Its workspace: none where the caller named none (then nothing of it is writable). */
  cwd?: string;
  /** The caller holds the editor's buffers (reads ask it first, approved writes are made there). */
  servesBuffers: boolean;
  /** The caller makes the agent's terminal calls in its client's terminals (TaskEvent `terminal`). */
  servesTerminals?: boolean;
  /** The caller answers the agent's questions: as a choice, or typed too. */
  questions?: 'choice' | 'typed';
  /** W3C trace context of the caller's request. */
  traceparent?: string;
  /** The agent's mode the caller chose for this task (its panel session's), among those that ask first. */
  mode?: string;
}

/** The agent's turn for a task. */
export function turnOf(spec: TaskSpec): AgentTurn {
  const { query, context } = spec;
  // A caller's images past the bound are not the agent's to read (the face says which it left out).
  const images = withinImageBound(imagesOf(context)).kept;
  return {
    sessionKey: spec.sessionKey,
    prompt: buildPrompt(query, context, spec.intent === 'ask'),
    ...(spec.conversationKey ? { conversationKey: spec.conversationKey } : {}),
    ...(spec.earlier ? { earlier: spec.earlier } : {}),
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    readOnly: spec.intent === 'ask',
    // Maybe one of the agent's commands (`/review`): the driver knows which it lists.
    ...(query.trimStart().startsWith('/') ? { command: query.trim() } : {}),
    ...(context ? { editor: editorStateOf(context) } : {}),
    ...(images.length ? { images } : {}),
    ...(spec.mode && spec.intent !== 'ask' ? { mode: spec.mode } : {}),
  };
}

/**
 * Why a coordinator told which roots it serves (`--roots`) does not take a task in `workspace`;
 * undefined when it does (a task with no workspace writes nothing, and is taken anywhere).
 */
export function outsideRoots(roots: readonly string[] | undefined, workspace: string | undefined, who = 'this coordinator'): string | undefined {
  if (!roots?.length || !workspace || roots.some((root) => isInside(resolve(workspace), root))) return undefined;
  return `${who} takes tasks in workspaces under ${roots.join(', ')} only, not in ${workspace}: open a folder under them, or use a coordinator that serves it`;
}

/** A few words of what was asked, for listings. */
export function titleOf(spec: TaskSpec): string {
  const words = spec.query.replace(/\s+/g, ' ').trim();
  return words.length > 80 ? `${words.slice(0, 79)}…` : words;
}

/** The state of a task just created. */
export function createdState(spec: TaskSpec, owner: string, seq: number): TaskState {
  return { owner, status: 'queued', title: titleOf(spec), seq, updatedAt: Date.now(), pending: [] };
}
