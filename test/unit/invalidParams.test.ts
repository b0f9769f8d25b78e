import { describe, expect, it } from 'vitest';
import type { AnyMessage } from '@agentclientprotocol/sdk';
import { paramsBy, worded } from '../../src/invalidParams.js';
import * as z from '../../src/schema.js';

const answer = (error: object) => ({ jsonrpc: '2.0', id: 7, error }) as unknown as AnyMessage;

describe('invalid params in words', () => {
  it("says the problems of the SDK's schema tree in the message, the tree kept in data", () => {
    const data = { _errors: [], sessionId: { _errors: ['Invalid input: expected string, received number'] }, prompt: { _errors: [], 0: { _errors: [], text: { _errors: ['Invalid input: expected string, received undefined', 'Invalid input: expected string, received undefined'] } } } };
    expect(worded(answer({ code: -32602, message: 'Invalid params', data }))).toEqual(answer({ code: -32602, message: 'Invalid params: sessionId: expected string, received number; prompt[0].text: missing (a string)', data }));
  });

  it('counts what it does not say, and says a problem of the params themselves', () => {
    const many = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((key) => [key, { _errors: ['Invalid input: expected object, received null'] }]));
    expect((worded(answer({ code: -32602, message: 'Invalid params', data: { _errors: [], ...many } })) as { error: { message: string } }).error.message).toBe('Invalid params: a: expected object, received null; b: expected object, received null; c: expected object, received null (and 2 more)');
    expect((worded(answer({ code: -32602, message: 'Invalid params', data: { _errors: ['Invalid input: expected object, received number'] } })) as { error: { message: string } }).error.message).toBe('Invalid params: the params: expected object, received number');
  });

  it('leaves alone every other message, and an error that has its words already', () => {
    for (const message of [answer({ code: -32602, message: 'Invalid params: cwd must be an absolute path, not x' }), answer({ code: -32600, message: 'Invalid params', data: { a: { _errors: ['x'] } } }), { jsonrpc: '2.0', id: 1, result: {} } as AnyMessage]) {
      expect(worded(message)).toBe(message);
    }
  });

  it('refuses params its schema does not take in the same words (never thrown as they are: the SDK would say "Internal error")', () => {
    const parse = paramsBy(z.object({ sessionId: z.string() }), (words) => new Error(words));
    expect(parse({ sessionId: 'a' })).toEqual({ sessionId: 'a' });
    expect(() => parse({ sessionId: 0.5 })).toThrow(/^sessionId: expected string, received number$/);
    expect(() => parse(null)).toThrow(/^the params: expected object, received null$/);
  });
});
