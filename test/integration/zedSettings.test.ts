/**
 * The Zed settings the READMEs give, as Zed passes them: `initialization_options` become the
 * `initialize` request's initializationOptions (Zed 1.6's own payload otherwise), `settings`
 * answer `workspace/configuration`; the key is the extension's server id. Zed itself cannot run
 * here; what it sends from these settings is what this test sends.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startingClients } from '../helpers/lspClient.js';
import { CLIENT_PAYLOADS, REPO } from '../helpers/paths.js';
import { readmeSnippet, userPath } from '../helpers/readme.js';

const start = startingClients();
const serverId = /pub const SERVER_ID: &str = "([^"]+)"/.exec(readFileSync(`${REPO}zed-extension/src/resolve.rs`, 'utf8'))?.[1];
// Zed's payload as it was captured, but for the project it opens: the test's workspace.
const { rootUri: _root, rootPath: _path, workspaceFolders: _folders, ...zed } = JSON.parse(readFileSync(`${CLIENT_PAYLOADS}zed-1.6.0.from-source.json`, 'utf8'));

describe.each(['zed-settings', 'zed-extension-settings'])("the READMEs' Zed settings (%s)", (name) => {
  it('configure the agent of a server that then answers', async () => {
    const lsp = JSON.parse(readmeSnippet(name)).lsp;
    expect(Object.keys(lsp)).toEqual([serverId]);
    const { initialization_options: initializationOptions, settings } = lsp[serverId!];
    const client = await start({
      initialize: { ...zed, initializationOptions },
      settings,
      env: { PATH: userPath(), BUCKLEY_AGENT: undefined },
    });
    expect((await client.request('buckley/ask', { question: 'INSTANT from Zed' })).answer).toBe('ok');
    expect((await client.request('buckley/status', {})).coordinator.agent).toContain('gemini --acp');
    expect(client.all('window/showMessage').filter((message) => message.type <= 2)).toEqual([]);
  });
});
