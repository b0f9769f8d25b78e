import { TextDocument } from 'vscode-languageserver-textdocument';
import { describe, expect, it } from 'vitest';
import { buildPrompt } from '../../src/wire/prompt.js';
import { buildContext, DOCUMENT_OVERHEAD_BYTES, normalizeRange } from '../../src/bridge/flows/context.js';
import { utf8Length, utf8Prefix, utf8Suffix } from '../../src/text.js';
import { linesRange, positionOf, rangeOf } from '../helpers/text.js';

const ROOT = 'file:///work/project';
const doc = (name: string, text: string, languageId = 'typescript') => TextDocument.create(`${ROOT}/${name}`, languageId, 3, text);

describe('buildContext', () => {
  const source = 'function add(a, b) {\n  return a + b; // 🚀\n}\n\nexport const answer = add(40, 2);\n';

  it('sends the active document, the selection and its text, and related open documents', () => {
    const active = doc('add.ts', source);
    const other = doc('other.ts', 'export const other = 1;\n');
    const selection = linesRange(source, 'function add', '}');
    const { context, leftOut } = buildContext({ active, selection, related: [active, other], workspaceRoots: [ROOT], maxBytes: 250_000 });
    expect(leftOut).toEqual([]);
    expect(context.document).toEqual({
      uri: `${ROOT}/add.ts`,
      language_id: 'typescript',
      content: source,
      version: 3,
      workspace_root: ROOT,
      metadata: {},
      selection,
    });
    expect(context.metadata.selected_text).toBe('function add(a, b) {\n  return a + b; // 🚀\n}\n');
    expect(context.related_documents.map((d) => d.uri)).toEqual([`${ROOT}/other.ts`]);
  });

  it('widens a selection that ends inside a surrogate pair instead of cutting the emoji', () => {
    const active = doc('add.ts', source);
    const end = positionOf(source, '🚀', 1); // between the two UTF-16 units of 🚀
    const { context } = buildContext({ active, selection: { start: positionOf(source, 'return'), end }, related: [], workspaceRoots: [], maxBytes: 250_000 });
    expect(context.metadata.selected_text).toBe('return a + b; // 🚀');
    expect(context.document!.selection!.end.character).toBe(end.character + 1);
  });

  it('clamps a range beyond the end of the document', () => {
    const active = doc('add.ts', source);
    expect(normalizeRange(active, { start: { line: 4, character: 0 }, end: { line: 99, character: 99 } })).toEqual({
      start: { line: 4, character: 0 },
      end: { line: 5, character: 0 },
    });
  });

  it('counts the budget in UTF-8 bytes and leaves out related documents that do not fit, saying so', () => {
    const active = doc('small.ts', 'const a = "é";\n');
    const big = doc('big.ts', 'x'.repeat(5000));
    const fits = doc('fits.ts', '// ok\n');
    const { context, leftOut, bytes } = buildContext({ active, related: [big, fits], workspaceRoots: [ROOT], maxBytes: 4096 });
    const costOf = (d: TextDocument) => utf8Length(d.getText()) + utf8Length(d.uri) + DOCUMENT_OVERHEAD_BYTES;
    expect(bytes).toBe(costOf(active) + costOf(fits) + utf8Length(leftOut[0]!));
    expect(context.related_documents.map((d) => d.uri)).toEqual([`${ROOT}/fits.ts`]);
    expect(leftOut).toEqual(['1 open document(s) did not fit the budget: big.ts']);
    expect(context.metadata.left_out).toBe(leftOut[0]);
    expect(context.metadata.omitted_documents).toBeUndefined();
  });

  it('stays within the budget with thousands of open documents: the left-out note is short and counted', () => {
    const related = Array.from({ length: 3000 }, (_, i) => doc(`src/module-${i}.ts`, `export const value${i} = ${i};\n`.repeat(6)));
    const { context, leftOut, bytes } = buildContext({ reservedBytes: 300, related, workspaceRoots: [ROOT], maxBytes: 250_000 });
    expect(bytes + 300).toBeLessThanOrEqual(250_000);
    expect(context.related_documents.length).toBeGreaterThan(100);
    expect(leftOut[0]).toMatch(/^\d+ open document\(s\) did not fit the budget: src\/module-\d+\.ts(, src\/module-\d+\.ts){9} and \d+ more$/);
    const prompt = buildPrompt('What is in here?', context, true);
    expect(utf8Length(prompt)).toBeLessThanOrEqual(250_000);
    expect(prompt).toContain('Left out of this context: ');
  });

  it('holds the budget in the prompt even when a caller sent a context over it', () => {
    const related = Array.from({ length: 50 }, (_, i) => ({ uri: `${ROOT}/f${i}.ts`, language_id: 'typescript', content: 'y'.repeat(1000), version: 1, workspace_root: ROOT, metadata: {} }));
    const prompt = buildPrompt('Why?', { related_documents: related, symbols: [], metadata: { budget_bytes: '10000' } }, false);
    expect(utf8Length(prompt)).toBeLessThanOrEqual(10_000);
    expect(prompt).toMatch(/Left out of this context: \d+ more open document\(s\) over the 10000-byte budget\.$/);
  });

  it('cuts a huge active document to whole lines around the selection', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} ${'·'.repeat(20)}`);
    const text = lines.join('\n') + '\n';
    const active = doc('huge.ts', text);
    const selection = rangeOf(text, 'line 1000 ');
    const { context, leftOut, bytes } = buildContext({ active, selection, related: [], workspaceRoots: [], maxBytes: 4096 });
    expect(bytes).toBeLessThanOrEqual(4096);
    const content = context.document!.content;
    expect(content).toContain('line 1000 ');
    expect(content.startsWith('line ')).toBe(true);
    expect(content.endsWith('\n')).toBe(true);
    const first = Number(context.document!.metadata.excerpt_start_line);
    const last = Number(context.document!.metadata.excerpt_end_line);
    expect(first).toBeLessThan(1000);
    expect(last).toBeGreaterThan(1000);
    expect(content).toBe(lines.slice(first, last + 1).join('\n') + '\n');
    expect(leftOut[0]).toBe(`the active document was cut to lines ${first + 1}-${last + 1} of 2001 (${utf8Length(text)} bytes do not fit the 4096-byte budget)`);
  });

  it('cuts a selection larger than the whole budget, on a character boundary', () => {
    const text = '😀'.repeat(2000);
    const active = doc('emoji.txt', text, 'plaintext');
    const { context, leftOut, bytes } = buildContext({ active, selection: { start: { line: 0, character: 0 }, end: { line: 0, character: 4000 } }, related: [], workspaceRoots: [], maxBytes: 1026 });
    const selected = context.metadata.selected_text!;
    expect(selected).toMatch(/^(😀)+$/u);
    expect(leftOut[0]).toBe(`the selection was cut to its first ${utf8Length(selected)} of 8000 bytes`);
    expect(bytes).toBeLessThanOrEqual(1026);
  });

  it('takes selected text sent without a document (Helix %{selection})', () => {
    const { context } = buildContext({ selectedText: 'SELECT * FROM users;', related: [], workspaceRoots: [], maxBytes: 4096 });
    expect(context.document).toBeUndefined();
    expect(context.metadata.selected_text).toBe('SELECT * FROM users;');
  });
});

describe('UTF-8 cutting', () => {
  it.each([
    ['abc', 2, 'ab'],
    ['é', 1, ''],
    ['aé', 2, 'a'],
    ['🚀x', 4, '🚀'],
    ['🚀x', 3, ''],
  ])('prefix of %j in %i bytes is %j', (text, bytes, prefix) => {
    expect(utf8Prefix(text, bytes)).toBe(prefix);
  });

  it.each([
    ['abc', 2, 'bc'],
    ['xé', 2, 'é'],
    ['x🚀', 3, ''],
    ['x🚀', 4, '🚀'],
    ['€€€', 7, '€€'],
  ])('suffix of %j in %i bytes is %j', (text, bytes, suffix) => {
    expect(utf8Suffix(text, bytes)).toBe(suffix);
  });
});
