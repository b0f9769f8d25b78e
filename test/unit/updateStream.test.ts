/** session/update lines are taken off an agent's output before the ACP SDK; everything else reaches it untouched. */
import { describe, expect, it } from 'vitest';
import { takeSessionUpdates } from '../../src/coordinator/agents/updateStream.js';

const encoder = new TextEncoder();
const line = (message: object) => `${JSON.stringify(message)}\n`;
const update = (n: number) => line({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `piece ${n}` } } } });
const response = line({ jsonrpc: '2.0', id: 1, result: { stopReason: 'end_turn' } });
const permission = line({ jsonrpc: '2.0', id: 2, method: 'session/request_permission', params: { sessionId: 's', note: 'mentions "session/update" in passing' } });
const requestNamedUpdate = line({ jsonrpc: '2.0', id: 3, method: 'session/update', params: {} });

/** Runs `output`, cut into pieces of `size` bytes, through the filter. */
async function filter(output: string, size: number, maxLineBytes = 1 << 20) {
  const bytes = encoder.encode(output);
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let offset = 0; offset < bytes.length; offset += size) controller.enqueue(bytes.slice(offset, offset + size));
      controller.close();
    },
  });
  const updates: unknown[] = [];
  const passed: Uint8Array[] = [];
  const reader = takeSessionUpdates(source, (params) => updates.push(params), maxLineBytes).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) passed.push(read.value);
  return { updates, rest: new TextDecoder().decode(Buffer.concat(passed)) };
}

describe('takeSessionUpdates', () => {
  const output = `${update(1)}${permission}${update(2)}${requestNamedUpdate}${update(3)}${response}not json at all\n{"half": `;

  it.each([1, 2, 7, 64, 100_000])('takes every update, in order, and passes the rest byte for byte (pieces of %i bytes)', async (size) => {
    const { updates, rest } = await filter(output, size);
    expect(updates.map((u: any) => u.update.content.text)).toEqual(['piece 1', 'piece 2', 'piece 3']);
    expect(rest).toBe(`${permission}${requestNamedUpdate}${response}not json at all\n{"half": `);
  });

  it('passes a line longer than the limit on as it is, for the SDK to refuse, and reads on after it', async () => {
    const long = `${'x'.repeat(5000)}\n`;
    const { updates, rest } = await filter(`${long}${update(4)}`, 100, 1000);
    expect(rest).toBe(long);
    expect(updates).toHaveLength(1);
  });
});
