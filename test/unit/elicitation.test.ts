/** What an agent's form (ACP elicitation) comes down to: a choice an editor prompt can offer, or nothing. */
import { describe, expect, it } from 'vitest';
import { choicesOf, stepsOf, typedFieldOf } from '../../src/coordinator/agents/elicitation.js';

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

  it('is one field to type for a string that is no choice, a number or an integer: named by its title, else its description, else its name', () => {
    expect(typedFieldOf({ name: { type: 'string', title: 'Your name' } })).toEqual({ name: 'name', label: 'Your name', kind: 'string' });
    expect(typedFieldOf({ age: { type: 'integer', description: 'In years' } })).toEqual({ name: 'age', label: 'In years', kind: 'integer' });
    expect(typedFieldOf({ ratio: { type: 'number' } })).toEqual({ name: 'ratio', label: 'ratio', kind: 'number' });
    expect(typedFieldOf({ size: { type: 'string', enum: ['s'] } })).toBeUndefined();
    expect(typedFieldOf({ a: { type: 'string' }, b: { type: 'string' } })).toBeUndefined();
    expect(typedFieldOf({ tags: { type: 'array' } })).toBeUndefined();
    expect(typedFieldOf({})).toBeUndefined();
  });

  it('of several fields is one question per field, each a choice or (where answers are typed) a field to type; none where one is neither', () => {
    const form = { size: { type: 'string', enum: ['s', 'l'] }, note: { type: 'string', title: 'A note' } };
    expect(stepsOf(form, ['size'], true)).toEqual([
      { label: 'size', required: true, choices: [{ label: 's', content: { size: 's' } }, { label: 'l', content: { size: 'l' } }] },
      { label: 'A note', required: false, typed: { name: 'note', label: 'A note', kind: 'string' } },
    ]);
    expect(stepsOf(form, [], false)).toBeUndefined();
    expect(stepsOf({ tags: { type: 'array' }, go: { type: 'boolean' } }, [], true)).toBeUndefined();
    expect(stepsOf({}, [], false)).toEqual([{ label: '', required: true, choices: [{ label: 'OK', content: {} }] }]);
  });
});
