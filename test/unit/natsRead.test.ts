import { describe, expect, it } from 'vitest';
import { readBody, readJob, readRecords, readState } from '../../src/coordinator/tasks/natsRead.js';
import { Unreadable } from '../../src/coordinator/tasks/store.js';

const bytes = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const where = 'message 7 of task t';

describe('what a replica reads from NATS', () => {
  it('takes records in the form buckley-lsp writes as they are, what it does not know kept', () => {
    const records = [{ at: 1, event: { status: 'in_progress', answer_delta: 'hi', later: { x: 1 } }, run: 'r' }, { at: 2, started: { replica: 'one', agentSession: 's' }, run: 'r', added: true }];
    expect(readBody(bytes(records), where)).toEqual(records);
    expect(readBody(bytes({ blob: 'b1' }), where)).toEqual({ blob: 'b1' });
    expect(readRecords(bytes(records), where)).toEqual(records);
  });

  it('says where a record is not in that form: not an object, its time, its event, a part that steers a coordinator', () => {
    const wrong = (value: unknown) => {
      try {
        readBody(bytes(value), where);
      } catch (error) {
        expect(error).toBeInstanceOf(Unreadable);
        return (error as Error).message;
      }
      throw new Error('read');
    };
    expect(wrong('{"oops":')).toBe('message 7 of task t in NATS is not JSON (8 bytes): it was not written by buckley-lsp, or is damaged');
    expect(wrong([1])).toBe('message 7 of task t in NATS is not in the form buckley-lsp writes (0: invalid input: expected a record, received number)');
    expect(wrong([{ at: 1 }, { at: 'now' }])).toBe('message 7 of task t in NATS is not in the form buckley-lsp writes (1.at: invalid input: expected number, received string)');
    expect(wrong([{ at: 1, event: 'text' }])).toBe('message 7 of task t in NATS is not in the form buckley-lsp writes (0.event: invalid input: expected an object, received string)');
    expect(wrong([{ at: 1, final: 'done' }])).toMatch(/\(0\.final: invalid option: expected one of "completed"\|"failed"\|"cancelled"\)$/);
    expect(wrong([{ at: 1, created: { owner: 'a', spec: { query: 'q' } } }])).toMatch(/\(0\.created\.spec\.agentId: invalid input: expected string, received undefined; 0\.created\.spec\.intent: .*; …\)$/);
    expect(wrong({ blob: 5 })).toMatch(/\(blob: invalid input: expected string, received number\)$/);
  });

  it('checks a state and a job too', () => {
    expect(readState(bytes({ owner: 'a', status: 'running', title: 't', seq: 1, updatedAt: 2, later: 1 }), 't')).toMatchObject({ status: 'running', later: 1 });
    expect(() => readState(bytes({ owner: 'a', status: 'asleep', title: 't', seq: 1, updatedAt: 2 }), 't')).toThrow(/^the state of task t in NATS is not in the form buckley-lsp writes \(status: invalid option/);
    expect(readJob(bytes({ taskId: 'abc' }))).toEqual({ taskId: 'abc' });
    expect(() => readJob(bytes({ taskId: '../x' }))).toThrow(/^a job of the work queue \(BUCKLEY_WORK\) in NATS is not in the form buckley-lsp writes \(taskId: /);
  });
});
