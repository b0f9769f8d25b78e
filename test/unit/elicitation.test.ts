/** What an agent's form (ACP elicitation) comes down to: a choice an editor prompt can offer, or nothing. */
import { describe, expect, it } from 'vitest';
import { choicesOf } from '../../src/coordinator/agents/elicitation.js';

describe('an elicitation form as a choice', () => {
  it('is OK for no fields, yes or no for a boolean, one per value for an enum (its names where given)', () => {
    expect(choicesOf({})).toEqual([{ label: 'OK', content: {} }]);
    expect(choicesOf(undefined)).toEqual([{ label: 'OK', content: {} }]);
    expect(choicesOf({ go: { type: 'boolean' } })).toEqual([
      { label: 'Yes', content: { go: true } },
      { label: 'No', content: { go: false } },
    ]);
    expect(choicesOf({ size: { type: 'string', enum: ['s', 'l'], enumNames: ['Small'] } })).toEqual([
      { label: 'Small', content: { size: 's' } },
      { label: 'l', content: { size: 'l' } },
    ]);
  });

  it('is nothing for what needs typing, several fields, or several picks', () => {
    expect(choicesOf({ name: { type: 'string' } })).toBeUndefined();
    expect(choicesOf({ age: { type: 'integer' } })).toBeUndefined();
    expect(choicesOf({ a: { type: 'boolean' }, b: { type: 'boolean' } })).toBeUndefined();
    expect(choicesOf({ tags: { type: 'array' } })).toBeUndefined();
  });
});
