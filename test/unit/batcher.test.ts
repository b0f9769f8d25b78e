import { describe, expect, it } from 'vitest';
import { EventBatcher } from '../../src/coordinator/batcher.js';

const entry = (content: string, status: string) => ({ content, status, priority: '' });
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
    batch.plan([entry('Read', 'completed'), entry('Half way', 'in_progress')]);
    expect(sent).toHaveLength(1); // within the interval: nothing yet
    batch.flush();
    expect(sent[1]).toEqual({
      status: 'in_progress',
      answer_delta: ', world',
      tool_executions: [tool('b', 'pending'), tool('a', 'completed')],
      progress: 50,
      message: 'Half way',
      plan: { entries: [entry('Read', 'completed'), entry('Half way', 'in_progress')] },
    });
    batch.flush();
    expect(sent).toHaveLength(2); // nothing pending, nothing sent
  });

  it('keeps the last plan whole however many come within one interval (an instant agent), and the thinking apart from the answer', () => {
    const sent: Record<string, unknown>[] = [];
    const batch = new EventBatcher((event) => sent.push(event), 60_000);
    batch.text('a');
    const steps = ['Read', 'Change', 'Test'];
    for (let done = 0; done <= steps.length; done++) {
      batch.plan(steps.map((content, i) => entry(content, i < done ? 'completed' : i === done ? 'in_progress' : 'pending')));
      batch.thought(`step ${done}. `);
      // A tool call after the plan says its own message: the plan still goes out whole.
      batch.tool(tool(`t${done}`, 'completed'));
    }
    batch.text('nswer');
    batch.flush();
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({
      answer_delta: 'nswer',
      thought_delta: 'step 0. step 1. step 2. step 3. ',
      progress: 100,
      message: 'Tool t3 (completed)',
      plan: { entries: steps.map((content) => entry(content, 'completed')) },
    });
    // Sent once: the next event carries no plan unless it changed again.
    batch.text('!');
    batch.flush();
    expect(sent[2]).toEqual({ status: 'in_progress', answer_delta: '!' });
  });
});
