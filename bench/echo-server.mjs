// The baseline: a bare vscode-languageserver server over stdio that answers `echo` at once.
import { createConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node.js';

const connection = createConnection(new StreamMessageReader(process.stdin), new StreamMessageWriter(process.stdout));
connection.onInitialize(() => ({ capabilities: {} }));
connection.onRequest('echo', (params) => params);
connection.listen();
