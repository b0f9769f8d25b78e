/** What the team coordinator's tests do with a replica: a session in a workspace of its own, a task's events to its end. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CoordinatorClient } from '../../src/wire/client.js';
import { sessionSchema, type TaskEvent } from '../../src/wire/contract.js';
import { tempDir } from './temp.js';

/** A workspace for a task, and a session on `caller`'s replica there: the metadata that names it. */
export async function session(caller: CoordinatorClient, agentId: string): Promise<Record<string, string>> {
  const root = tempDir('buckley-team-ws');
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'README.md'), '# read me\n');
  const made = await caller.unary('CreateSession', { agent_id: agentId, metadata: { workspace_root: root } }, sessionSchema, { timeoutMs: 5000 });
  return { 'x-buckley-session-id': made.session_id };
}

/** Every event of a stream, to its end. */
export async function collect(stream: AsyncIterable<TaskEvent>, onEvent: (event: TaskEvent) => unknown = () => undefined): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    await onEvent(event);
  }
  return events;
}
