/**
 * The server's diagnostics, from every flow that shows some (approvals waiting, changes under
 * review): `textDocument/publishDiagnostics` replaces all of a document's, so each flow says what
 * it shows, and the editor gets every flow's for each document that changed.
 */
import type { Diagnostic } from 'vscode-languageserver';
import type { EditorClient } from './client.js';

export class DiagnosticsBoard {
  private readonly shown = new Map<string, Map<string, Diagnostic[]>>();

  constructor(private readonly editor: EditorClient) {}

  /** What `owner` shows now, by URI; its documents not in `byUri` are cleared of its diagnostics. */
  show(owner: string, byUri: Map<string, Diagnostic[]>): void {
    const before = this.shown.get(owner) ?? new Map<string, Diagnostic[]>();
    this.shown.set(owner, byUri);
    for (const uri of new Set([...before.keys(), ...byUri.keys()])) {
      const diagnostics = [...this.shown.values()].flatMap((shown) => shown.get(uri) ?? []);
      this.editor.diagnostics({ uri, diagnostics });
    }
  }
}
