import { TextDocument } from 'vscode-languageserver-textdocument';
import { describe, expect, it } from 'vitest';
import { codeActionsFor, commentInstruction, commentQuestion, EXPLAIN_QUESTION, FIX_TASK } from '../../src/bridge/flows/codeActions.js';
import { linesRange, rangeOf } from '../helpers/text.js';

describe('commentQuestion', () => {
  it.each([
    ['// why is this slow?', 'why is this slow?'],
    ['    # what does this regex match?', 'what does this regex match?'],
    ['-- is this query indexed?', 'is this query indexed?'],
    ['/* can this overflow? */', 'can this overflow?'],
    ['<!-- why a table here? -->', 'why a table here?'],
    ['; ask: explain the macro', 'explain the macro'],
    ['// buckley: summarise this function', 'summarise this function'],
    ['// @buckley, what are the edge cases', 'what are the edge cases'],
    ['// TODO: tidy up', undefined],
    ['const x = 1; // why?', undefined],
    ['let question = "why?"', undefined],
    ['//?', undefined],
  ])('%j → %j', (line, question) => {
    expect(commentQuestion(line)).toBe(question);
  });
});

describe('commentInstruction', () => {
  it.each([
    ['# edit: handle the empty list', 'handle the empty list'],
    ['  // Edit:  use a map here  ', 'use a map here'],
    ['/* edit: inline this */', 'inline this'],
    ['-- edit:', undefined],
    ['// editing: later', undefined],
    ['x = 1 # edit: no', undefined],
  ])('%j → %j', (line, instruction) => {
    expect(commentInstruction(line)).toBe(instruction);
  });
});

describe('codeActionsFor', () => {
  const text = '# why is this recursive?\ndef f(n):\n    return 1 if n < 2 else n * f(n - 1)\n';
  const document = TextDocument.create('file:///w/f.py', 'python', 1, text);

  it('offers ask «question», explain and find problems, each with its command and no edit', () => {
    const range = linesRange(text, '# why', 'return 1');
    const actions = codeActionsFor({ document, range, literals: true });
    expect(actions).toEqual([
      { title: 'Buckley: ask «why is this recursive?»', kind: '', command: { title: 'Buckley: ask «why is this recursive?»', command: 'buckley.ask', arguments: [{ question: 'why is this recursive?', uri: 'file:///w/f.py', range }] } },
      { title: 'Buckley: run task «why is this recursive?»', kind: '', command: expect.objectContaining({ command: 'buckley.runTask', arguments: [{ task: 'why is this recursive?', uri: 'file:///w/f.py', range }] }) },
      { title: 'Buckley: explain this', kind: '', command: expect.objectContaining({ command: 'buckley.ask', arguments: [{ question: EXPLAIN_QUESTION, uri: 'file:///w/f.py', range }] }) },
      { title: 'Buckley: find problems', kind: '', command: expect.objectContaining({ command: 'buckley.ask' }) },
      { title: 'Buckley: fix problems here', kind: '', command: expect.objectContaining({ command: 'buckley.runTask', arguments: [{ task: FIX_TASK, uri: 'file:///w/f.py', range }] }) },
    ]);
  });

  it('returns bare commands to clients without code action literal support', () => {
    const actions = codeActionsFor({ document, range: rangeOf(text, 'def f(n):'), literals: false });
    expect(actions.map((action) => action.title)).toEqual(['Buckley: explain this', 'Buckley: find problems', 'Buckley: fix problems here']);
    expect(actions[0]).toHaveProperty('command', 'buckley.ask');
  });

  it('offers nothing for an empty selection, except cancelling running tasks', () => {
    const { start } = rangeOf(text, 'def');
    expect(codeActionsFor({ document, range: { start, end: start }, literals: true })).toEqual([]);
    const running = [{ id: 't-1', title: 'write tests for the factorial' }];
    expect(codeActionsFor({ document, range: { start, end: start }, literals: true, tasks: running })).toEqual([
      {
        title: 'Buckley: cancel task «write tests for the factorial»',
        kind: '',
        command: { title: 'Buckley: cancel task «write tests for the factorial»', command: 'buckley.cancelTask', arguments: [{ taskId: 't-1' }] },
      },
    ]);
  });
});
