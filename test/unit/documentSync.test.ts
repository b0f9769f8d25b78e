import { TextDocument } from 'vscode-languageserver-textdocument';
import type { DidChangeTextDocumentParams } from 'vscode-languageserver';
import { describe, expect, it } from 'vitest';
import { InVersionOrder } from '../../src/bridge/documentSync.js';

const URI = 'file:///answer.md';

/** A keystroke as the editor reports it: `text` inserted at `character` of line 0, at `version`. */
function key(version: number, character: number, text: string): DidChangeTextDocumentParams {
  return { textDocument: { uri: URI, version }, contentChanges: [{ range: { start: { line: 0, character }, end: { line: 0, character } }, text }] };
}

/** A buffer the changes are applied to, as TextDocuments does, and the order it saw them in. */
function buffer() {
  let document = TextDocument.create(URI, 'markdown', 1, '');
  const seen: number[] = [];
  const order = new InVersionOrder((change) => {
    seen.push(change.textDocument.version);
    document = TextDocument.update(document, change.contentChanges, change.textDocument.version);
  });
  order.opened(URI, 1);
  return { order, seen, text: () => document.getText() };
}

describe('changes in version order', () => {
  it("applies a burst of keystrokes that Helix sent out of order as they were typed (Helix 25.01's own log)", () => {
    const { order, seen, text } = buffer();
    // "RECALL" typed: each change right for its version, sent 2, 4, 3, 6, 5, 7.
    for (const change of [key(2, 0, 'R'), key(4, 2, 'C'), key(3, 1, 'E'), key(6, 4, 'L'), key(5, 3, 'A'), key(7, 5, 'L')]) order.changed(change);
    expect(text()).toBe('RECALL');
    expect(seen).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it('applies changes in turn at once, and holds one ahead of its turn only until flush (a gap nobody fills is no loss)', () => {
    const { order, seen, text } = buffer();
    order.changed(key(2, 0, 'a'));
    expect(text()).toBe('a');
    // Neovim's versions skip: 5 follows 2, and nothing will fill 3 and 4.
    order.changed(key(5, 1, 'b'));
    expect(text()).toBe('a');
    order.flush();
    expect(text()).toBe('ab');
    expect(seen).toEqual([2, 5]);
    // After the flush, the next one in turn is applied at once.
    order.changed(key(6, 2, 'c'));
    expect(text()).toBe('abc');
  });

  it('applies what it held on its own after a moment, when nothing reads the document', async () => {
    let applied!: (version: number) => void;
    const appliedVersion = new Promise<number>((resolve) => (applied = resolve));
    const order = new InVersionOrder((change) => applied(change.textDocument.version), undefined, 5);
    order.opened(URI, 1);
    order.changed(key(3, 0, 'x'));
    expect(await appliedVersion).toBe(3);
  });
});
