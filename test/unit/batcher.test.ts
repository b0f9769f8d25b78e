import { describe, expect, it } from 'vitest';
import { EventBatcher } from '../../src/coordinator/batcher.js';

const tool = (id: string, status: string) => ({ id, tool: `Tool ${id}`, status, kind: 'read', input: '', output: '' });

describe('EventBatcher', () => {
  it('sends the first update at once, then batches: answer pieces joined, latest state per tool', () => {
    const sent: Record<string, unknown>[] = [];
    const batch = new EventBatcher((event) => sent.push(event), 60_000);
    batch.text('Hello');
    expect(sent).toEqual([{ status: 'in_progress', answer_delta: 'Hello' }]);
    batch.text(', ');
    batch.tool(tool('a', 'pending'));
    batch.tool(tool('b', 'pending'));
    batch.tool(tool('a', 'completed'));
    batch.text('world');
    batch.step(50, 'Half way');
    expect(sent).toHaveLength(1); // within the interval: nothing yet
    batch.flush();
    expect(sent[1]).toEqual({
      status: 'in_progress',
      answer_delta: ', world',
      tool_executions: [tool('b', 'pending'), tool('a', 'completed')],
      progress: 50,
      message: 'Half way',
    });
    batch.flush();
    expect(sent).toHaveLength(2); // nothing pending, nothing sent
  });
});
