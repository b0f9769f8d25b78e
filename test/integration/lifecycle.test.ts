/** Lifecycle and configuration over stdio: settings errors, live configuration, state kept across restarts. */
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startingClients, TestClient } from '../helpers/lspClient.js';
import { linesRange, positionOf } from '../helpers/text.js';
import { SCRIPTED_AGENT } from '../helpers/paths.js';

const start = startingClients();

describe('configuration', () => {
  it('reports a bad initializationOptions value in the editor, naming the key, and keeps working', async () => {
    const client = await start({ initialize: { initializationOptions: { context: { maxBytes: 'lots' } } } });
    const error = await client.waitFor('window/showMessage', (p) => p.type === 1);
    expect(error.message).toBe('buckley.context.maxBytes: expected a number');
    await client.waitFor('window/logMessage', (p) =>
      p.message.includes('buckley.context.maxBytes (from initializationOptions): expected a number, not a string ("lots")'),
    );
    const result = await client.request('buckley/ask', { question: 'Do you work?' });
    expect(result.answer).toContain('You asked: Do you work?');
  });

  it('follows workspace/configuration; a bad key is reported and left out, the rest of the change applies', async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: { answers: { showMessage: false } } });
    await client.waitFor('workspace/configuration');
    const summaries = () => client.all('window/showMessage').filter((p) => p.message.startsWith('answered «'));

    await client.request('buckley/ask', { question: 'First?' });
    // The answer document opens after the summary would have been sent: none was.
    await client.waitFor('window/showDocument', (p) => p.uri.includes('first'));
    expect(summaries()).toEqual([]);

    client.settings = { answers: { showMessage: true }, context: { maxBytes: -1 } };
    await client.notify('workspace/didChangeConfiguration', { settings: null });
    await client.waitFor('window/showMessage', (p) => p.message === 'buckley.context.maxBytes: must be at least 1024');
    await client.waitFor('window/logMessage', (p) => p.message.includes('buckley.context.maxBytes (from workspace/configuration)'));
    // showMessage: true applied all the same.
    await client.request('buckley/ask', { question: 'Second?' });
    await client.waitFor('window/showMessage', (p) => p.message === 'answered «Second?»: answer opened');
  });

  it('takes settings nested past any stack (a hostile editor, or a broken one): the bad key named, the rest applied, the server answering', async () => {
    const client = await start();
    // Written by hand: no JSON.stringify could write it.
    const deep = `${'{"x":'.repeat(200_000)}{}${'}'.repeat(200_000)}`;
    const body = `{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"buckley":{"answers":{"showMessage":false},"agent":{"env":{"DEEP":${deep}}},"editorThing":${deep}}}}}`;
    await client.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await client.waitFor('window/showMessage', (p) => p.message === 'buckley.agent.env.DEEP: expected a string');
    await client.waitFor('window/logMessage', (p) => p.message.includes('buckley.agent.env.DEEP (from workspace/configuration): expected a string, not an object'));
    const result = await client.request('buckley/ask', { question: 'Still there?' });
    expect(result.answer).toContain('You asked: Still there?');
    // showMessage: false applied all the same: no summary of the answer.
    expect(client.all('window/showMessage').map((p) => p.message)).not.toContain(expect.stringMatching(/^answered «Still there\?»/));
  });

  it('keeps the rest of initializationOptions when one key is bad (the agent command is not lost)', async () => {
    const client = await start({
      initialize: { initializationOptions: { agent: { command: `${process.execPath} ${SCRIPTED_AGENT} --as-configured` }, context: { maxBytes: 'lots' } } },
      env: { BUCKLEY_AGENT: undefined },
    });
    await client.waitFor('window/showMessage', (p) => p.message === 'buckley.context.maxBytes: expected a number');
    const result = await client.request('buckley/ask', { question: 'Who answers?' });
    expect(result.answer).toContain('You asked: Who answers?');
    expect((await client.request('buckley/status', {})).coordinator.agent).toContain('--as-configured');
  });

  it('connects once, with the editor\'s settings, when an ask comes right after initialized', async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: { coordinator: { agentId: 'editor-7' } } });
    const result = await client.request('buckley/ask', { question: 'Straight away?' });
    expect(result.answer).toContain('You asked: Straight away?');
    const logs = client.all('window/logMessage').map((p) => p.message);
    expect(logs.filter((line) => line.includes('coordinator listening on'))).toHaveLength(1);
    expect(logs.some((line) => line.includes('settings changed'))).toBe(false);
    expect(logs.filter((line) => line.includes('connected to the embedded coordinator'))).toHaveLength(1);
  });

  it('starts the embedded coordinator when first needed, not with the editor: no listening socket before the first ask', async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: {} });
    await client.waitFor('window/logMessage', (p) => p.message.includes('the embedded coordinator starts when first needed'));
    const pid = client.process.pid!;
    expect(listening(pid)).toEqual([]);
    const result = await client.request('buckley/ask', { question: 'Now?' });
    expect(result.answer).toContain('You asked: Now?');
    // The coordinator's, and the agent's editor MCP server's (its first session was opened).
    const status = await client.request('buckley/status', {});
    const port = Number(status.coordinator.address.split(':').at(-1));
    expect(listening(pid)).toHaveLength(2);
    expect(listening(pid)).toContain(port);
  });

  it('connects anew when the coordinator or agent settings change', async () => {
    const client = await start({ client: 'neovim-0.10.4', settings: {} });
    await client.request('buckley/ask', { question: 'Before?' });
    const before = (await client.request('buckley/status', {})).coordinator;
    expect(before.state).toBe('ready');

    client.settings = { coordinator: { agentId: 'editor-2' } };
    await client.notify('workspace/didChangeConfiguration', { settings: null });
    await client.waitFor('window/logMessage', (p) => p.message.includes('coordinator or agent settings changed'));
    const result = await client.request('buckley/ask', { question: 'After?' });
    expect(result.answer).toContain('You asked: After?');
    const after = (await client.request('buckley/status', {})).coordinator;
    expect(after.state).toBe('ready');
    expect(after.address).not.toBe(before.address);
    expect(after.sessionId).not.toBe(before.sessionId);
  });
});

describe('lifecycle', () => {
  it('saves answers on shutdown and shows them on hover after a restart', async () => {
    const first = await start({ client: 'neovim-0.10.4' });
    const { uri, text } = await first.openFixture('workspace/retry.ts');
    const selection = linesRange(text, 'export function backoff', 'return 2 ** attempt');
    await first.request('buckley/ask', { question: 'Remember me?', context: { activeFile: uri, selection } });
    expect(await first.shutdown()).toBe(0);

    const saved = join(first.stateDir, 'buckley-lsp', 'answers.json');
    expect(existsSync(saved)).toBe(true);
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(saved, 'utf8')).answers[0]).toMatchObject({ question: 'Remember me?', uri, range: selection });

    const second = await start({ client: 'neovim-0.10.4', stateDir: first.stateDir });
    await second.openFixture('workspace/retry.ts');
    const position = positionOf(text, 'attempt * 100');
    let hover = await second.request('textDocument/hover', { textDocument: { uri }, position });
    // The saved answers load after `initialized`; ask again until they are there.
    while (hover === null) hover = await second.request('textDocument/hover', { textDocument: { uri }, position });
    expect(hover.contents.value).toContain('Remember me?');
  });

  it('exits with code 1 on exit without shutdown, as LSP says', async () => {
    const client = await TestClient.start();
    await client.notify('exit', null);
    expect(await client.exit()).toBe(1);
  });
});

/** The TCP ports the process listens on (its sockets, found in /proc/net/tcp by inode). */
function listening(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address, state (0A: LISTEN), inode
      if (fields[3] === '0A' && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
