#!/usr/bin/env node
// The demo: a whole editor session played over stdio against the built server, with the
// embedded coordinator running the ACP SDK's offline example agent (npm:@agentclientprotocol/sdk@1.9.0).
// It prints what an editor would show. Run with `npm run demo`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';

const repo = fileURLToPath(new URL('../', import.meta.url));
const bin = join(repo, 'dist/buckley-lsp.js');
const agent = join(repo, 'node_modules/acp-example-agent/dist/examples/agent.js');
const file = join(repo, 'fixtures/workspace/retry.ts');
const state = mkdtempSync(join(tmpdir(), 'buckley-demo-'));

const dim = (s) => (process.stdout.isTTY ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const say = (who, text) => console.log(`${who} ${text}`);
const editor = (text) => ((step = text), say(bold('editor  →'), text));
const server = (text) => say(bold('server  ←'), text);
const indent = (text) => text.split('\n').map((line) => `            ${line}`).join('\n');

console.log(bold('buckley-lsp demo: one editor session, embedded coordinator, ACP example agent'));
console.log(
  `The agent is the ACP SDK's offline example: it gives the same canned answer to every question,\n` +
    `reads a file, and asks to edit one — real ACP, no network, no key. Point buckley.agent.command\n` +
    `(or BUCKLEY_AGENT) at a real agent, e.g. "gemini --acp", for real answers.\n`,
);
console.log(dim(`agent: node ${agent}\nstate: ${state} (removed at the end)\n`));
// Nothing is left behind, however the demo ends.
process.on('exit', () => rmSync(state, { recursive: true, force: true }));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(1));
// The demo ends whatever goes wrong: a session that stalls is a failure, and says where.
const DEADLINE_MS = 60_000;
let step = 'starting';
setTimeout(() => {
  console.error(`\ndemo: not done after ${DEADLINE_MS / 1000} s, at: ${step}`);
  child.kill('SIGKILL');
  process.exit(1);
}, DEADLINE_MS).unref();

const child = spawn(process.execPath, [bin, '--stdio'], {
  env: { ...process.env, BUCKLEY_AGENT: `${process.execPath} ${agent}`, XDG_STATE_HOME: state, BUCKLEY_LOG: 'info' },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));

// What the editor shows: messages, progress, documents it is asked to open.
const progressTitles = new Map();
let answerShown;
const answerDocument = new Promise((resolve) => (answerShown = resolve));
let onMessage = () => {};
connection.onNotification('window/showMessage', ({ type, message }) => {
  server(`showMessage (${['', 'error', 'warning', 'info', 'log'][type]}): ${message}`);
  onMessage(message);
});
connection.onNotification('window/logMessage', ({ message }) => console.log(dim(`          log: ${message.split('\n')[0]}`)));
connection.onUnhandledProgress(({ token, value }) => {
  if (value.kind === 'begin') progressTitles.set(token, value.title);
  const title = progressTitles.get(token) ?? '';
  if (value.kind === 'begin') server(`progress ⟳ ${title}`);
  else if (value.kind === 'report') server(`progress ⟳ ${title}: ${value.message ?? ''}${value.percentage !== undefined ? ` (${value.percentage}%)` : ''}`);
  else server(`progress ✓ ${title}: ${value.message}`);
});
connection.onRequest('window/workDoneProgress/create', () => null);
connection.onRequest('workspace/configuration', ({ items }) => items.map(() => null));
connection.onRequest('client/registerCapability', () => null);
connection.onRequest('window/showDocument', ({ uri }) => {
  server(`showDocument ${uri}`);
  answerShown(uri);
  return { success: true };
});
// An approval prompt, answered as a cautious user would.
connection.onRequest('window/showMessageRequest', ({ message, actions }) => {
  server(`prompt: ${message}\n${indent(actions.map((action) => `[${action.title}]`).join(' '))}`);
  editor('choose [Deny]');
  return actions.find((action) => action.title === 'Deny');
});
connection.listen();

const capabilities = JSON.parse(readFileSync(join(repo, 'fixtures/clients/neovim-0.10.4.json'), 'utf8')).capabilities;
editor('initialize (capabilities of Neovim 0.10)');
const init = await connection.sendRequest('initialize', {
  processId: process.pid,
  clientInfo: { name: 'Neovim', version: '0.10.4' },
  rootUri: pathToFileURL(join(repo, 'fixtures/workspace')).href,
  workspaceFolders: [{ uri: pathToFileURL(join(repo, 'fixtures/workspace')).href, name: 'workspace' }],
  capabilities,
});
server(`initialize: ${init.serverInfo.name} ${init.serverInfo.version}; commands ${init.capabilities.executeCommandProvider.commands.join(', ')}`);
const features = Object.entries(init.capabilities.experimental.buckley.features).filter(([, on]) => on === true).map(([name]) => name);
server(`negotiated: ${features.join(', ')}`);
await connection.sendNotification('initialized', {});

const text = readFileSync(file, 'utf8');
const uri = pathToFileURL(file).href;
const lines = text.split('\n');
const lineOf = (needle) => lines.findIndex((line) => line.includes(needle));
editor(`didOpen ${uri}`);
await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text } });

const first = lineOf('// why does this wait longer');
const last = lineOf('return 2 ** attempt');
const range = { start: { line: first, character: 0 }, end: { line: last + 1, character: 0 } };
editor(`select lines ${first + 1}-${last + 1} and ask for code actions:`);
console.log(indent(lines.slice(first, last + 1).join('\n')));
const actions = await connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } });
server(`code actions: ${actions.map((action) => action.title).join(' | ')}`);

const explain = actions.find((action) => action.title === 'Buckley: explain this');
// The one-line summary comes once the editor has opened the answer: it says only what happened.
const answerSaid = new Promise((resolve) => (onMessage = (message) => message.startsWith('answered ') && resolve(message)));
editor(`run "${explain.title}" (workspace/executeCommand ${explain.command.command})`);
server(`executeCommand answered at once: ${JSON.stringify(await connection.sendRequest('workspace/executeCommand', explain.command))}`);
const shown = await answerDocument;
await answerSaid;
console.log(indent(readFileSync(fileURLToPath(shown), 'utf8').trim()));

editor('hover inside the selection');
const hover = await connection.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: last, character: 4 } });
server(`hover:\n${indent(hover.contents.value)}`);

const question = actions[0].command.arguments[0].question;
editor(`buckley/ask "${question}" (the custom request, with a work-done token)`);
const result = await connection.sendRequest('buckley/ask', { question, context: { activeFile: uri, selection: range }, workDoneToken: 'demo-ask' });
server(`buckley/ask result:\n${indent(result.answer)}`);

editor('buckley/executeTask "Update the configuration" (a task: it runs in the background, with progress)');
// The task's end is named in one message: done, failed or cancelled.
const taskEnded = new Promise((resolve) => (onMessage = (message) => /^(done|task failed|cancelled) /.test(message) && resolve(message)));
const { taskId } = await connection.sendRequest('buckley/executeTask', { task: 'Update the configuration', context: { activeFile: uri, selection: range } });
server(`executeTask answered at once: task ${taskId}`);
await taskEnded;

const status = await connection.sendRequest('buckley/status', {});
server(`buckley/status: coordinator ${status.coordinator.mode} at ${status.coordinator.address}, ${status.coordinator.state}; agent ${status.coordinator.agent}`);

editor('shutdown, exit');
await connection.sendRequest('shutdown');
await connection.sendNotification('exit');
const code = await new Promise((resolve) => child.once('exit', resolve));
console.log(bold(`\nserver exited with code ${code}; the source file was never modified.`));
connection.dispose();
process.exit(code);
